"""`tf.train.Coordinator`: stop a group of threads together and report their failures.

Contract: any thread may `request_stop(ex)`; the first exception passed (outside the "clean
stop" types, OutOfRangeError by default) is kept and re-raised by `join()` in the thread that
joins, after every registered thread ended or the grace period ran out.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from tensorflux.framework import errors
from tensorflux.platform import tf_logging

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """Coordinates the termination of a set of threads.

    Example:
        >>> coord = tf.train.Coordinator()
        >>> threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        >>> try:
        ...     while not coord.should_stop():
        ...         sess.run(train_op)
        ... except tf.errors.OutOfRangeError:
        ...     pass
        ... finally:
        ...     coord.request_stop()
        >>> coord.join(threads)
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _exc_info(self, ex):
        """The exc_info triple to re-raise for `ex`, or None for a clean stop."""
        if ex is None:
            return None
        if isinstance(ex, tuple):
            if len(ex) != 3 or not isinstance(ex[1], BaseException):
                raise ValueError(f"ex must be an exception or a sys.exc_info() triple, got: {ex}")
            info = ex
        elif isinstance(ex, BaseException):
            info = (type(ex), ex, ex.__traceback__)
        else:
            raise ValueError(f"ex must be an exception or a sys.exc_info() triple, got: {ex}")
        if isinstance(info[1], self._clean_stop_exception_types):
            return None
        return info

    def request_stop(self, ex=None) -> None:
        """Asks every thread to stop; `ex` (an exception or exc_info) is kept for `join`.

        Raises:
            ValueError: `ex` is not an exception or exc_info triple.
        """
        info = self._exc_info(ex)
        with self._lock:
            if self._joined:
                if info is not None:
                    # The main thread already joined: log what it can no longer raise.
                    tf_logging.error("Coordinator: exception after join: %s", info[1])
                return
            if self._stop_event.is_set():
                return
            if info is not None and self._exc_info_to_raise is None:
                tf_logging.info("Error reported to Coordinator: %s, %s", info[0], info[1])
                self._exc_info_to_raise = info
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Clears the stop flag so the coordinator can be reused."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            if self._stop_event.is_set():
                self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context that requests a stop with any exception raised inside it (and swallows
        it, so the thread ends normally)."""
        try:
            yield
        except:  # noqa: E722 - every exception, including KeyboardInterrupt, stops the group
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None) -> bool:
        """Blocks until a stop is requested or `timeout` seconds pass; returns should_stop."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for `threads` (and registered ones) to end after a stop was requested.

        Args:
            threads: threads to join in addition to the registered ones.
            stop_grace_period_secs: how long to wait after the stop request.
            ignore_live_threads: only log, instead of raising, if some threads still run.

        Raises:
            The first exception given to `request_stop`, re-raised here; else RuntimeError if
            threads are still alive after the grace period (and not ignored).
        """
        with self._lock:
            threads = set(threads or []) | self._registered_threads
        threads = list(threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        stop_wait_secs = 0.001
        deadline = time.monotonic() + stop_grace_period_secs
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            time.sleep(stop_wait_secs)
            stop_wait_secs = min(1.0, 2 * stop_wait_secs)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, value, traceback = self._exc_info_to_raise
                raise value.with_traceback(traceback)
            if stragglers:
                if ignore_live_threads:
                    tf_logging.info("Coordinator stopped with threads still running: %s",
                                    " ".join(stragglers))
                else:
                    raise RuntimeError(f"Coordinator stopped with threads still running: "
                                       f"{' '.join(stragglers)}")

    def wait_for_threads(self, threads=None, timeout: float = 0.0) -> bool:
        """Waits up to `timeout` seconds for `threads` and the registered ones to end; True
        when none is still alive (does not join: call `join` afterwards)."""
        with self._lock:
            threads = list(set(threads or []) | self._registered_threads)
        deadline = time.monotonic() + timeout
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            time.sleep(0.005)
        return not any(t.is_alive() for t in threads)

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raises the exception given to request_stop, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                _, value, traceback = self._exc_info_to_raise
                raise value.with_traceback(traceback)


class LooperThread(threading.Thread):
    """A thread that calls `target(*args)` every `timer_interval_secs` (or in a tight loop when
    None) until the coordinator stops; exceptions stop the coordinator."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts and returns a LooperThread calling `target`."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_timer_time = time.time()
                while not self._coord.wait_for_stop(max(0.0, next_timer_time - time.time())):
                    next_timer_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once when the thread starts."""

    def stop_loop(self) -> None:
        """Called once before the thread ends."""

    def run_loop(self) -> None:
        """Called at each interval; calls `target` by default."""
        if self._target:
            self._target(*self._args, **self._kwargs)
