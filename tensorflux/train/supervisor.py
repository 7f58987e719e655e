"""`tf.train.Supervisor`: TF1's training-loop manager.

The supervisor fills in the standard ops (init, ready, local init, summary, saver, global
step), finalizes the graph, and `managed_session()` yields a session that the chief restored
from `logdir` or initialized, with background services: a checkpoint every `save_model_secs`,
summaries every `save_summaries_secs`, a steps/sec counter, and the queue runners. Leaving the
block on OutOfRangeError is a clean stop; services are stopped and joined on exit.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

from tensorflux import summary as summary_lib
from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variables
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import event_pb2, summary_pb2
from tensorflux.summary import writer
from tensorflux.train import saver as saver_lib
from tensorflux.train import training_util
from tensorflux.train.coordinator import Coordinator
from tensorflux.train.queue_runner import start_queue_runners
from tensorflux.train.session_manager import SessionManager

__all__ = ["Supervisor"]



class _ServiceThread(threading.Thread):
    """Calls `fn()` every `interval` seconds until the coordinator stops."""

    def __init__(self, coord, interval, fn, name):
        super().__init__(daemon=True, name=name)
        self._coord = coord
        self._interval = interval
        self._fn = fn

    def run(self):
        with self._coord.stop_on_exception():
            while not self._coord.wait_for_stop(self._interval):
                self._fn()


class Supervisor:
    """TF1 `tf.train.Supervisor(graph=None, ..., logdir=None, ...)`."""

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        self._graph = graph if graph is not None else graph_mod.get_default_graph()
        with self._graph.as_default():
            self._is_chief = is_chief
            self._logdir = logdir
            self._init_feed_dict = init_feed_dict
            self._init_fn = init_fn
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            self._stop_grace_secs = stop_grace_secs
            self._recovery_wait_secs = recovery_wait_secs
            self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
            self._coord = Coordinator()
            self._started_threads: list = []
            self._init_op = self._pick(init_op, GraphKeys.INIT_OP,
                                       variables.global_variables_initializer)
            self._ready_op = self._pick(ready_op, GraphKeys.READY_OP,
                                        lambda: variables.report_uninitialized_variables())
            self._ready_for_local_init_op = self._pick(
                ready_for_local_init_op, GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()))
            self._local_init_op = self._pick(
                local_init_op, GraphKeys.LOCAL_INIT_OP,
                lambda: control_flow_ops.group(variables.local_variables_initializer(),
                                               *self._graph.get_collection(GraphKeys.TABLE_INITIALIZERS)))
            self._summary_op = self._pick(summary_op, GraphKeys.SUMMARY_OP,
                                          summary_lib.merge_all)
            self._saver = self._pick(saver, GraphKeys.SAVERS,
                                     lambda: saver_lib.Saver() if variables.global_variables()
                                     else None)
            if global_step is Supervisor.USE_DEFAULT:
                global_step = training_util.get_global_step()
            self._global_step = global_step
            if summary_writer is Supervisor.USE_DEFAULT:
                summary_writer = writer.FileWriter(logdir) if (is_chief and logdir) \
                    else None
            self._summary_writer = summary_writer
            self._session_manager = session_manager or SessionManager(
                local_init_op=self._local_init_op, ready_op=self._ready_op,
                ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
                recovery_wait_secs=recovery_wait_secs,
                local_init_run_options=local_init_run_options)
        self._graph.finalize()

    def _pick(self, value, key, make):
        if value is not Supervisor.USE_DEFAULT:
            return value
        existing = self._graph.get_collection(key)
        if existing:
            return existing[0]
        made = make()
        if made is not None:
            self._graph.add_to_collection(key, made)
        return made

    # -- properties ------------------------------------------------------------------------

    is_chief = property(lambda self: self._is_chief)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    session_manager = property(lambda self: self._session_manager)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # -- sessions --------------------------------------------------------------------------

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief restores or initializes; other tasks wait until the model is ready."""
        self._coord.clear_stop()
        if self._is_chief:
            session = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver,
                checkpoint_dir=self._logdir, wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                self.start_standard_services(session)
        else:
            session = self._session_manager.wait_for_session(master, config=config,
                                                             max_wait_secs=max_wait_secs)
        if start_standard_services:
            self.start_queue_runners(session)
        return session

    def _write_graph(self):
        if self._summary_writer is not None:
            # A session made again after `stop()` (a managed_session left by an error, the
            # usual recovery loop) writes to the same event directory, as TF's writer reopens.
            self._summary_writer.reopen()
            self._summary_writer.add_graph(self._graph)

    def start_standard_services(self, sess) -> list:
        """Starts the checkpoint, summary and step-counter threads (chief only)."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        threads = []
        if self._logdir and self._saver is not None and self._save_model_secs:
            threads.append(_ServiceThread(self._coord, self._save_model_secs,
                                          lambda: self._save(sess), "sv-checkpoint"))
        if self._summary_writer is not None and self._save_summaries_secs:
            if self._summary_op is not None:
                threads.append(_ServiceThread(self._coord, self._save_summaries_secs,
                                              lambda: self._write_summaries(sess),
                                              "sv-summary"))
            if self._global_step is not None:
                counter = _StepCounter(self, sess)
                threads.append(_ServiceThread(self._coord, self._save_summaries_secs,
                                              counter, "sv-step-counter"))
        for thread in threads:
            thread.start()
        self._started_threads.extend(threads)
        return threads

    def _save(self, sess):
        step = sess.run(self._global_step) if self._global_step is not None else None
        self._saver.save(sess, self._save_path, global_step=step)
        if self._summary_writer is not None:
            self._summary_writer.add_session_log(
                event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT,
                                     checkpoint_path=self._save_path), step)

    def _write_summaries(self, sess):
        if self._global_step is not None:
            summary, step = sess.run([self._summary_op, self._global_step])
        else:
            summary, step = sess.run(self._summary_op), None
        self.summary_computed(sess, summary, step)

    def start_queue_runners(self, sess, queue_runners=None) -> list:
        if queue_runners is None:
            threads = start_queue_runners(sess=sess, coord=self._coord)
        else:
            threads = []
            for runner in queue_runners:
                threads.extend(runner.create_threads(sess, coord=self._coord, daemon=True,
                                                     start=True))
        self._started_threads.extend(threads)
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Calls target(*args, **kwargs) every timer_interval_secs in a service thread."""
        thread = _ServiceThread(self._coord, timer_interval_secs,
                                lambda: target(*(args or ()), **(kwargs or {})), "sv-loop")
        thread.start()
        self._started_threads.append(thread)
        return thread

    def summary_computed(self, sess, summary, global_step=None):
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = sess.run(self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def request_stop(self, ex=None) -> None:
        self._coord.request_stop(ex=ex)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops the services and joins their threads (re-raising a thread's exception)."""
        self._coord.request_stop()
        try:
            self._coord.join(self._started_threads + list(threads or []),
                             stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """Yields a ready session; stops the services and closes the session on exit."""
        sess = self.prepare_or_wait_for_session(
            master=master, config=config, start_standard_services=start_standard_services)
        try:
            yield sess
        except Exception as err:  # noqa: BLE001 - OutOfRange is a clean stop, others re-raise
            if not isinstance(err, errors.OutOfRangeError):
                self._coord.request_stop(err)
            else:
                self._coord.request_stop()
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()


class _StepCounter:
    """Writes global_step/sec summaries for the supervisor."""

    def __init__(self, supervisor, sess):
        self._sv = supervisor
        self._sess = sess
        self._last = None

    def __call__(self):
        step = int(self._sess.run(self._sv.global_step))
        now = time.time()
        if self._last is not None:
            last_step, last_time = self._last
            if now > last_time:
                rate = (step - last_step) / (now - last_time)
                summary = summary_pb2.Summary()
                summary.value.add(tag=f"{self._sv.global_step.op.name}/sec", simple_value=rate)
                self._sv.summary_writer.add_summary(summary, step)
                logging.info(f"global_step/sec: {rate:g}")
        self._last = (step, now)
