"""The standard hooks: stop at a step, NaN checks, logging, checkpoints, summaries, step
rates, final ops, feeds and traces."""

from __future__ import annotations

import os
import time

import numpy as np

from tensorflux.client import timeline
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import config_pb2, event_pb2, summary_pb2
from tensorflux.summary.writer import FileWriterCache
from tensorflux.train import meta_graph, training_util
from tensorflux.train.session_run_hook import SecondOrStepTimer, SessionRunArgs, SessionRunHook

__all__ = ["StopAtStepHook", "NanTensorHook", "NanLossDuringTrainingError", "LoggingTensorHook",
           "CheckpointSaverHook", "CheckpointSaverListener", "SummarySaverHook",
           "StepCounterHook", "FinalOpsHook", "FeedFnHook", "ProfilerHook",
           "GlobalStepWaiterHook"]


def _tensor_by_name(graph, name: str):
    """The tensor a hook was given by name, as TF resolves it: "op:0" for a bare op name.

    Raises:
        ValueError: a bare op name whose op has more than one output (ambiguous).
    """
    if ":" in name:
        return graph.as_graph_element(name)
    element = graph.as_graph_element(name + ":0")
    try:
        graph.as_graph_element(name + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {name} is ambiguous, as this `Operation` has multiple outputs "
                     "(at least 2).")


def _global_step_tensor(required: bool = True):
    step = training_util.get_global_step()
    if step is None and required:
        raise RuntimeError("Global step should be created to use this hook.")
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or start + `num_steps`)."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step = _global_step_tensor()

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            step = int(run_context.session.run(self._global_step))
            if step >= self._last_step:
                run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    """The loss a `NanTensorHook` watches became NaN (`step`: the global step, when known)."""

    def __init__(self, *args, step=None):
        super().__init__(*args)
        self.step = step

    def __str__(self):
        where = "" if self.step is None else f" (global step {self.step})"
        return f"NaN loss during training.{where}"


class NanTensorHook(SessionRunHook):
    """Stops (or raises NanLossDuringTrainingError) when the loss becomes NaN; the log line
    and the error name the global step at which it happened (when the graph has one)."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss = loss_tensor
        self._fail = fail_on_nan_loss
        self._global_step = None

    def begin(self):
        self._global_step = training_util.get_global_step()

    def before_run(self, run_context):
        if self._global_step is None:
            return SessionRunArgs(self._loss)
        return SessionRunArgs({"loss": self._loss, "step": self._global_step})

    def after_run(self, run_context, run_values):
        results = run_values.results
        loss, step = (results["loss"], int(results["step"])) if isinstance(results, dict) \
            else (results, None)
        if np.isnan(loss):
            where = "" if step is None else f" at global step {step}"
            if self._fail:
                logging.error(f"Model diverged with loss = NaN{where}.")
                raise NanLossDuringTrainingError(step=step)
            logging.warning(f"Model diverged with loss = NaN{where}.")
            run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs tensors (by INFO) every N iterations or seconds, and optionally at the end."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._order = list(tensors)
            self._tensors = dict(tensors)
        else:
            self._order = [t if isinstance(t, str) else t.name for t in tensors]
            self._tensors = {name: t for name, t in zip(self._order, tensors)}
        self._timer = None if only_at_end else SecondOrStepTimer(every_n_secs, every_n_iter)
        self._log_at_end = at_end
        self._formatter = formatter

    def begin(self):
        graph = graph_mod.get_default_graph()
        self._current = {k: _tensor_by_name(graph, v) if isinstance(v, str) else v
                         for k, v in self._tensors.items()}
        self._iter = 0
        if self._timer is not None:
            self._timer.reset()

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and \
            self._timer.should_trigger_for_step(self._iter)
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log(self, values, elapsed=None):
        if self._formatter is not None:
            logging.info(self._formatter(values))
            return
        with np.printoptions(suppress=True):
            text = ", ".join(f"{name} = {values[name]}" for name in self._order)
        if elapsed is not None:
            text = f"{text} ({elapsed:.3f} sec)"
        logging.info(text)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            elapsed, _ = self._timer.update_last_triggered_step(self._iter)
            self._log(run_values.results, elapsed)
        self._iter += 1

    def end(self, session):
        if self._log_at_end:
            self._log(session.run(self._current))


class CheckpointSaverListener:
    """Called before and after each checkpoint save."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint at creation, every N steps or seconds, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._saver = saver
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []

    def begin(self):
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step = _global_step_tensor()
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        from google.protobuf import text_format

        step = int(session.run(self._global_step))
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        graph = graph_mod.get_default_graph()
        graph_def = graph.as_graph_def(add_shapes=True)
        with open(os.path.join(self._checkpoint_dir, "graph.pbtxt"), "w") as handle:
            handle.write(text_format.MessageToString(graph_def))
        # As TF: the events file of the checkpoint directory carries the graph and the meta
        # graph (with the saver's SaverDef), which TensorBoard's graph view reads.
        saver = self._get_saver()
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(meta_graph.export_meta_graph(
            graph_def=graph_def, saver_def=saver.saver_def if saver is not None else None,
            graph=graph))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        if self._timer.should_trigger_for_step(step):
            step = int(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = graph_mod.get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError("No items in collection SAVERS. Please add a saver to the "
                               "collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection SAVERS. Please indicate "
                               "which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver

    def _save(self, session, step) -> bool:
        logging.info(f"Saving checkpoints for {step} into {self._save_path}.")
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        self._summary_writer.add_session_log(
            event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT,
                                 checkpoint_path=self._save_path), step)
        stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                stop = True
        return stop


class StepCounterHook(SessionRunHook):
    """Writes (and logs) global steps per second."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be "
                             "provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir = output_dir
        self._summary_writer = summary_writer

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step = _global_step_tensor()
        self._tag = f"{self._global_step.op.name}/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            elapsed, steps = self._timer.update_last_triggered_step(step)
            if elapsed:
                rate = steps / elapsed
                logging.info(f"{self._tag}: {rate:g}")
                if self._summary_writer is not None:
                    summary = summary_pb2.Summary()
                    summary.value.add(tag=self._tag, simple_value=rate)
                    self._summary_writer.add_summary(summary, step)


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every N steps or seconds and writes its result."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir = output_dir
        self._summary_writer = summary_writer
        self._scaffold = scaffold
        self._summary_op = summary_op

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step = _global_step_tensor()
        self._next_step = None

    def _ops(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return []
        return op if isinstance(op, list) else [op]

    def before_run(self, run_context):
        self._request = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step)
        fetches = {"global_step": self._global_step}
        if self._request and self._ops():
            fetches["summary"] = self._ops()
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        if self._summary_writer is None:
            return
        step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._summary_writer.add_session_log(
                event_pb2.SessionLog(status=event_pb2.SessionLog.START), step)
        if self._request:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session):
        if self._summary_writer is not None:
            self._summary_writer.flush()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._feed = final_ops_feed_dict
        self._values = None

    @property
    def final_ops_values(self):
        return self._values

    def end(self, session):
        if self._final_ops is not None:
            self._values = session.run(self._final_ops, feed_dict=self._feed)


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()` to every run's feed_dict."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step`."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = self._wait_until_step <= 0
        self._global_step = _global_step_tensor()

    def before_run(self, run_context):
        while not self._worker_is_started:
            if int(run_context.session.run(self._global_step)) >= self._wait_until_step:
                self._worker_is_started = True
            else:
                time.sleep(0.5)


class ProfilerHook(SessionRunHook):
    """Traces a run every N steps or seconds and writes `timeline-<step>.json` (Chrome trace)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory

    def begin(self):
        self._next_step = None
        self._global_step = _global_step_tensor()

    def before_run(self, run_context):
        self._request = self._next_step is not None and \
            self._timer.should_trigger_for_step(self._next_step)
        options = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE) \
            if self._request else None
        return SessionRunArgs(self._global_step, options=options)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._next_step is None:
            self._timer.update_last_triggered_step(step)
        elif self._request:
            self._timer.update_last_triggered_step(step)

            trace = timeline.Timeline(run_values.run_metadata.step_stats)
            path = self._output_file.format(step)
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w") as handle:
                handle.write(trace.generate_chrome_trace_format(
                    show_dataflow=self._show_dataflow, show_memory=self._show_memory))
        self._next_step = step + 1
