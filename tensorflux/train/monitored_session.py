"""Monitored sessions: a session plus hooks, queue runners, checkpoint recovery and clean stop.

`MonitoredSession` finalizes the graph through a `Scaffold`, creates (restores or initializes)
the session with a session creator, starts the queue runners under a Coordinator, and runs the
hooks around every `run`. Leaving its `with` block on OutOfRangeError is a clean stop; a
session that fails with AbortedError or UnavailableError is recreated (from the latest
checkpoint) and the run retried.
"""

from __future__ import annotations

import time

from tensorflux import summary
from tensorflux.distribute import distribute_lib
from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variables
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import config_pb2
from tensorflux.train import basic_session_run_hooks as basic
from tensorflux.train import saver as saver_lib
from tensorflux.train.coordinator import Coordinator
from tensorflux.train.queue_runner import start_queue_runners
from tensorflux.train.session_manager import SessionManager
from tensorflux.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

# Threads still running this long after close() asks them to stop are cancelled.
_CANCEL_AFTER_SECS = 2.0
_RETRY_CREATE_SECS = 0.5  # between two session creations that failed with Aborted/Unavailable

__all__ = ["Scaffold", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator",
           "MonitoredSession", "SingularMonitoredSession", "MonitoredTrainingSession"]

USE_DEFAULT = object()



def _first_in_collection(key):
    items = graph_mod.get_default_graph().get_collection(key)
    if len(items) > 1:
        raise RuntimeError(f"More than one item in the collection '{key}'. Please indicate "
                           "which one to use by passing it to the constructor.")
    return items[0] if items else None


class Scaffold:
    """The init, ready and summary ops and the saver of a monitored session."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            def pick(value, attr):
                return value if value is not None else getattr(copy_from_scaffold, attr)

            init_op = pick(init_op, "init_op")
            init_feed_dict = pick(init_feed_dict, "_init_feed_dict")
            init_fn = pick(init_fn, "_user_init_fn")
            ready_op = pick(ready_op, "ready_op")
            ready_for_local_init_op = pick(ready_for_local_init_op, "ready_for_local_init_op")
            local_init_op = pick(local_init_op, "local_init_op")
            summary_op = pick(summary_op, "summary_op")
            saver = pick(saver, "saver")
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> Scaffold:
        """Creates the missing ops (TF1's defaults) and finalizes the graph."""
        graph = graph_mod.get_default_graph()
        if self._init_op is None:
            self._init_op = _first_in_collection(GraphKeys.INIT_OP)
            if self._init_op is None:
                self._init_op = variables.global_variables_initializer()
                graph.add_to_collection(GraphKeys.INIT_OP, self._init_op)
        if self._ready_op is None:
            self._ready_op = _first_in_collection(GraphKeys.READY_OP)
            if self._ready_op is None:
                self._ready_op = array_ops.concat([variables.report_uninitialized_variables(),
                                                   variables.report_uninitialized_variables(
                                                variables.local_variables())], 0)
                graph.add_to_collection(GraphKeys.READY_OP, self._ready_op)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = _first_in_collection(
                GraphKeys.READY_FOR_LOCAL_INIT_OP)
            if self._ready_for_local_init_op is None:
                self._ready_for_local_init_op = variables.report_uninitialized_variables(
                    variables.global_variables())
                graph.add_to_collection(GraphKeys.READY_FOR_LOCAL_INIT_OP,
                                        self._ready_for_local_init_op)
        if self._local_init_op is None:
            self._local_init_op = _first_in_collection(GraphKeys.LOCAL_INIT_OP)
            if self._local_init_op is None:
                ops = [variables.local_variables_initializer()]
                ops += graph.get_collection(GraphKeys.TABLE_INITIALIZERS)
                self._local_init_op = control_flow_ops.group(*ops)
                graph.add_to_collection(GraphKeys.LOCAL_INIT_OP, self._local_init_op)
        if self._summary_op is None:
            self._summary_op = _first_in_collection(GraphKeys.SUMMARY_OP)
            if self._summary_op is None:
                self._summary_op = summary.merge_all()
                if self._summary_op is not None:
                    graph.add_to_collection(GraphKeys.SUMMARY_OP, self._summary_op)
        if self._saver is None:
            self._saver = _first_in_collection(GraphKeys.SAVERS)
            if self._saver is None and variables.global_variables():
                self._saver = saver_lib.Saver(sharded=True, allow_empty=True,
                                              write_version=2)
                graph.add_to_collection(GraphKeys.SAVERS, self._saver)
        graph.finalize()
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def default_local_init_op():
        graph = graph_mod.get_default_graph()
        return control_flow_ops.group(variables.local_variables_initializer(),
                                      *graph.get_collection(GraphKeys.TABLE_INITIALIZERS))


class SessionCreator:
    """Creates a tf.Session for a MonitoredSession."""

    def create_session(self):
        raise TypeError(f"{type(self).__name__} must implement create_session")


def _session_manager(scaffold, config):
    return SessionManager(local_init_op=scaffold.local_init_op,
                          local_init_feed_dict=scaffold.local_init_feed_dict,
                          ready_op=scaffold.ready_op,
                          ready_for_local_init_op=scaffold.ready_for_local_init_op,
                          graph=graph_mod.get_default_graph())


class ChiefSessionCreator(SessionCreator):
    """Restores from `checkpoint_dir` or initializes the model (the chief's role)."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        return _session_manager(self._scaffold, self._config).prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Waits until the chief has initialized the model (a non-chief worker's role)."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        return _session_manager(self._scaffold, self._config).wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


def _merge_args(original_fetches, original_feed, original_options, hook_args):
    """Combines the user's run arguments with every hook's SessionRunArgs."""
    fetches = {"caller": original_fetches}
    feed = dict(original_feed or {})
    options = original_options
    for index, args in hook_args:
        if args is None:
            continue
        if args.fetches is not None:
            fetches[index] = args.fetches
        if args.feed_dict:
            for key, value in args.feed_dict.items():
                if key in feed:
                    raise RuntimeError(f"Same tensor is fed by two hooks: {key}")
                feed[key] = value
        if args.options is not None:
            options = _merge_options(options, args.options)
    return fetches, feed, options


def _merge_options(a, b):
    merged = config_pb2.RunOptions()
    if a is not None:
        merged.CopyFrom(a)
    merged.trace_level = max(merged.trace_level, b.trace_level)
    merged.timeout_in_ms = max(merged.timeout_in_ms, b.timeout_in_ms)
    merged.output_partition_graphs = merged.output_partition_graphs or \
        b.output_partition_graphs
    return merged


def _run_with_hooks(sess, hooks, fetches, feed_dict, options, run_metadata):
    """One `sess.run` of `fetches` with every hook's before_run additions merged in and each
    hook's after_run called with its own results; returns (the caller's results, whether a
    hook requested a stop)."""
    context = SessionRunContext(
        original_args=SessionRunArgs(fetches, feed_dict, options), session=sess)
    hook_args = [(i, hook.before_run(context)) for i, hook in enumerate(hooks)]
    merged_fetches, merged_feed, merged_options = _merge_args(fetches, feed_dict, options,
                                                              hook_args)
    metadata = run_metadata
    if metadata is None and merged_options is not None and merged_options.trace_level:
        metadata = config_pb2.RunMetadata()
    results = sess.run(merged_fetches, feed_dict=merged_feed or None, options=merged_options,
                       run_metadata=metadata)
    for i, hook in enumerate(hooks):
        hook.after_run(context, SessionRunValues(results=results.get(i), options=merged_options,
                                                 run_metadata=metadata))
    return results["caller"], context.stop_requested


class _HookedSession:
    """TF1's private wrapper that runs `hooks` around every `run` of `sess` (the innermost
    layer of a MonitoredSession; TF1's own hook tests drive hooks through it).

    `should_stop()` is True once a hook asked to stop (or the wrapped hooked session did).
    """

    _tfx_session_wrapper = True

    def __init__(self, sess, hooks):
        self._sess = sess
        self._hooks = list(hooks)
        self._should_stop = False

    @property
    def graph(self):
        return self._sess.graph

    def should_stop(self) -> bool:
        if self._should_stop:
            return True
        return isinstance(self._sess, _HookedSession) and self._sess.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` with the hooks' additions.

        Raises:
          RuntimeError: called after a hook requested a stop.
        """
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        result, stop_requested = _run_with_hooks(self._sess, self._hooks, fetches, feed_dict,
                                                 options, run_metadata)
        self._should_stop = self._should_stop or stop_requested
        return result


class _MonitoredSessionBase:
    """Shared implementation of MonitoredSession and SingularMonitoredSession."""

    _RECOVERABLE = (errors.AbortedError, errors.UnavailableError)
    # Not a Session to Saver.save (TF 1.x's MonitoredSession is no SessionInterface).
    _tfx_session_wrapper = True

    def __init__(self, session_creator, hooks, stop_grace_period_secs=120,
                 recoverable=True):
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._session_creator = session_creator
        self._stop_grace_period_secs = stop_grace_period_secs
        self._recoverable = recoverable
        self._coord = Coordinator(clean_stop_exception_types=(errors.OutOfRangeError,))
        self._threads = []
        self._stop_requested = False
        self._closed = False
        self._sess = None
        self._create()

    def _create(self):
        """Creates the session and runs the hooks' after_create_session; as TF's recoverable
        session, AbortedError/UnavailableError while creating (a parameter server not up yet
        or restarting) creates it again, forever. Each retry is logged as a WARNING (TF logs
        it at INFO, but its runtime prints "CreateSession still waiting" by default): a
        worker waiting for a task never waits silently."""
        while True:
            try:
                self._sess = self._session_creator.create_session()
                self._threads = start_queue_runners(sess=self._sess, coord=self._coord)
                for hook in self._hooks:
                    hook.after_create_session(self._sess, self._coord)
                return
            except self._RECOVERABLE as err:
                if not self._recoverable:
                    raise
                logging.warning(f"An error was raised while a session was being created "
                                f"({type(err).__name__}: {err}); a new session will be "
                                "created.")
                self._close_internal(for_recovery=True)
                self._sess = None
                self._coord.clear_stop()
                time.sleep(_RETRY_CREATE_SECS)

    @property
    def graph(self):
        return self._sess.graph if self._sess is not None else None

    def should_stop(self) -> bool:
        return self._stop_requested or self._closed or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` with every hook's additions; retries once on a recreated session
        after AbortedError/UnavailableError."""

        while True:
            try:
                return self._run_once(fetches, feed_dict, options, run_metadata,
                                      config_pb2)
            except self._RECOVERABLE as err:
                if not self._recoverable:
                    raise
                logging.info(f"An error was raised ({type(err).__name__}: {err}); "
                             "recreating the session from the latest checkpoint.")
                self._close_internal(for_recovery=True)
                self._coord.clear_stop()
                self._create()

    def _run_once(self, fetches, feed_dict, options, run_metadata, config_pb2):
        result, stop_requested = _run_with_hooks(self._sess, self._hooks, fetches, feed_dict,
                                                 options, run_metadata)
        if stop_requested:
            self._stop_requested = True
        return result

    def _close_internal(self, exception_type=None, for_recovery=False):
        try:
            if not for_recovery and exception_type is None:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            try:
                self._coord.request_stop()
                # NOTE: TF1 joins first and closes the session after, so a thread blocked in
                # a step (a queue runner waiting on an accumulator or queue nobody feeds any
                # more) held close() for the whole grace period. Threads still running after a
                # short wait are cancelled by closing the session; then they are joined.
                if not self._coord.wait_for_threads(
                        self._threads, min(_CANCEL_AFTER_SECS, self._stop_grace_period_secs)) \
                        and self._sess is not None:
                    self._sess.close()
                self._coord.join(self._threads, stop_grace_period_secs=
                                 self._stop_grace_period_secs, ignore_live_threads=True)
            finally:
                if self._sess is not None:
                    self._sess.close()
                if not for_recovery:
                    self._closed = True

    def close(self) -> None:
        if not self._closed:
            self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type in (errors.OutOfRangeError, StopIteration):
            exc_type = None
        if not self._closed:
            self._close_internal(exception_type=exc_type)
        return exc_type is None


class MonitoredSession(_MonitoredSessionBase):
    """TF1 `tf.train.MonitoredSession(session_creator=None, hooks=None, ...)`."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator or ChiefSessionCreator(), hooks,
                         stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSessionBase):
    """A MonitoredSession for one process, giving access to the raw session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=
                                      checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs, recoverable=False)

    def raw_session(self):
        return self._sess


def _strategy_inits_each_worker() -> bool:
    """Whether the strategy in scope does between-graph replication in which every worker
    initializes (or restores) its own variables (MultiWorkerMirroredStrategy), as TF's
    worker context `experimental_should_init`."""
    if not distribute_lib.has_strategy():
        return False
    extended = distribute_lib.get_strategy().extended
    return extended.experimental_between_graph and extended.experimental_should_init


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """A MonitoredSession set up for training, as TF1's function of the same name.

    The chief restores from or initializes into `checkpoint_dir` and gets the step counter,
    summary and checkpoint hooks (checkpoints every 600 s and summaries every 100 steps by
    default); other workers wait for the chief.
    """

    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if not is_chief:
        if _strategy_inits_each_worker():  # mirrored copies: each worker initializes its own
            creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                          master=master, config=config)
        else:
            creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                           max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
    all_hooks.extend(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                  master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(basic.StepCounterHook(output_dir=summary_dir,
                                                   every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or \
                (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(basic.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                           (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(basic.CheckpointSaverHook(checkpoint_dir,
                                                   save_steps=save_checkpoint_steps,
                                                   save_secs=save_checkpoint_secs,
                                                   scaffold=scaffold))
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
