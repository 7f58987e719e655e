"""`tf.train.QueueRunner`: threads that keep running enqueue ops into a queue.

Contract: each enqueue op gets a thread that runs it until the input ends (an exception of
`queue_closed_exception_types`, OutOfRangeError by default), the coordinator asks to stop, or an
error happens (reported to the coordinator, or logged and kept in `exceptions_raised`). When the
last thread of a session ends on closed input, it runs `close_op` so consumers see the end;
with a coordinator, one more thread runs `cancel_op` when a stop is requested, which wakes the
enqueues still blocked on a full queue.

While its threads run, a runner is registered as a producer of its queue, so the hang detector
(`tensorflux/ops/hang_watch.py`) knows that someone may still enqueue.
"""

from __future__ import annotations

import threading
import weakref

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops.data_flow import hang_watch
from tensorflux.platform import producer_gate, tf_logging
from tensorflux.protos import queue_runner_pb2

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]


def _backend_of(sess):
    """The DirectSession (or other backend) behind a Session or a session wrapper."""
    obj = sess
    for _ in range(6):
        if obj is None:
            return None
        backend = getattr(obj, "_backend", None)
        if backend is not None:
            return backend
        obj = getattr(obj, "_sess", None) or getattr(obj, "_session", None)
    return None


class QueueRunner:
    """Holds a list of enqueue ops for a queue, each to be run in its own thread.

    Args:
        queue: a queue (QueueBase).
        enqueue_ops: the ops to run repeatedly, one thread each.
        close_op: closes the queue when the input ends (default `queue.close()`).
        cancel_op: closes the queue and cancels pending enqueues, run on a stop request
            (default `queue.close(cancel_pending_enqueues=True)`).
        queue_closed_exception_types: exceptions that mean "input ended"
            (default `(tf.errors.OutOfRangeError,)`).

    Example:
        >>> qr = tf.train.QueueRunner(queue, [enqueue_op] * 4)
        >>> tf.train.add_queue_runner(qr)
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            if queue is not None or enqueue_ops is not None:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types = \
                _from_def(queue_runner_def, import_scope)
        if queue is None or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else \
            queue.close(cancel_pending_enqueues=True)
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError,)
        elif not isinstance(queue_closed_exception_types, tuple) or not all(
                isinstance(t, type) and issubclass(t, errors.OpError)
                for t in queue_closed_exception_types):
            raise TypeError(f"queue_closed_exception_types, when provided, must be a tuple of "
                            f"tf.error types, but saw: {queue_closed_exception_types}")
        self._queue_closed_exception_types = tuple(queue_closed_exception_types)
        self._lock = threading.Lock()
        self._runs_per_session: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        """Exceptions raised by the threads when no coordinator was given."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        return self._queue.name

    def to_proto(self, export_scope=None):
        """This runner as a `QueueRunnerDef` (names relative to `export_scope`), or None when
        its queue lies outside `export_scope`."""
        def strip(name):
            return name[len(export_scope) + 1:] if export_scope else name

        if export_scope and not self._queue.name.startswith(export_scope + "/"):
            return None
        return queue_runner_pb2.QueueRunnerDef(
            queue_name=strip(self._queue.name),
            enqueue_op_name=[strip(op.name) for op in self._enqueue_ops],
            close_op_name=strip(self._close_op.name),
            cancel_op_name=strip(self._cancel_op.name),
            queue_closed_exception_types=[errors.error_code_from_exception_type(t)
                                          for t in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        """A QueueRunner over the ops a `QueueRunnerDef` names in the default graph."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    def _run(self, sess, enqueue_op, coord=None) -> None:
        decremented = False
        backend = _backend_of(sess)
        hang_watch.add_producer(backend, self._queue.name)
        try:
            enqueue = sess.make_callable(enqueue_op)
            producer_gate.mark_producer()
            wait_turn = producer_gate.wait_turn
            while True:
                if coord is not None and coord.should_stop():
                    break
                wait_turn()
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception as err:  # noqa: BLE001 - the queue may be gone
                            tf_logging.vlog(1, "Ignored exception: %s", err)
                    return
        except Exception as err:  # noqa: BLE001 - reported to the coordinator or logged
            stopping = coord is not None and coord.should_stop()
            if stopping and isinstance(err, (errors.CancelledError, RuntimeError)):
                return  # the stop request cancelled our enqueue, or closed the session
            if coord is not None:
                coord.request_stop(err)
            else:
                tf_logging.error("Exception in QueueRunner: %s", err)
                with self._lock:
                    self._exceptions_raised.append(err)
                raise
        finally:
            hang_watch.remove_producer(backend, self._queue.name)
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord) -> None:
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as err:  # noqa: BLE001 - the session may be closed already
            tf_logging.vlog(1, "Ignored exception: %s", err)

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        """Creates (and optionally starts) the threads of this runner for `sess`.

        Returns:
            The threads; an empty list if this runner's threads already run for `sess`.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{i}")
                   for i, op in enumerate(self._enqueue_ops)]
        if coord is not None:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            if daemon:
                thread.daemon = True
            if start:
                thread.start()
        return threads


def _from_def(queue_runner_def, import_scope):
    """(queue, enqueue_ops, close_op, cancel_op, exception types) named by a QueueRunnerDef;
    the queue is its graph element (as in TF), which has the `name` a runner needs."""
    graph = graph_mod.get_default_graph()

    def element(name):
        return graph.as_graph_element(f"{import_scope}/{name}" if import_scope else name)

    types = tuple(errors.exception_type_from_error_code(code)
                  for code in queue_runner_def.queue_closed_exception_types)
    return (element(queue_runner_def.queue_name),
            [element(name) for name in queue_runner_def.enqueue_op_name],
            element(queue_runner_def.close_op_name), element(queue_runner_def.cancel_op_name),
            types or None)


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds a QueueRunner to a graph collection (default QUEUE_RUNNERS)."""
    graph_mod.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS) -> list:
    """Starts the threads of every QueueRunner collected in the graph.

    Args:
        sess: the session (default: the default session).
        coord: an optional Coordinator for stopping and error reporting.
        daemon: make the threads daemons.
        start: start the threads (else only create them).
        collection: the collection holding the runners.

    Returns:
        The list of threads.

    Raises:
        ValueError: no session given and no default session.
        TypeError: `sess` is not a session.
    """
    if sess is None:
        sess = graph_mod.get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not hasattr(sess, "run") or not hasattr(sess, "graph"):
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {type(sess)}")
    with sess.graph.as_default():
        threads = []
        for qr in graph_mod.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
