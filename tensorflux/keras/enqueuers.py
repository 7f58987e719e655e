"""`tf.keras.utils` enqueuers: background threads that prefetch batches from a `Sequence`
(in order, epoch after epoch) or from a generator into a bounded queue.

`use_multiprocessing=True` is accepted and runs threads as well (no pickling between
processes); a warning says so once.
"""

from __future__ import annotations

import queue
import threading
import time
import warnings

import numpy as np

__all__ = ["SequenceEnqueuer", "OrderedEnqueuer", "GeneratorEnqueuer"]

_WARNED = []


def _threads_only(use_multiprocessing):
    if use_multiprocessing and not _WARNED:
        _WARNED.append(True)
        warnings.warn("use_multiprocessing=True runs worker threads in tensorflux (no worker "
                      "processes)", stacklevel=3)


class SequenceEnqueuer:
    """Base class: `start(workers, max_queue_size)`, `get()` (a generator of batches),
    `stop()`, `is_running()`."""

    def __init__(self, sequence, use_multiprocessing=False):
        _threads_only(use_multiprocessing)
        self.sequence = sequence
        self.use_multiprocessing = use_multiprocessing
        self.workers = 0
        self.queue = None
        self.stop_signal = None
        self._threads = []

    def is_running(self):
        return self.stop_signal is not None and not self.stop_signal.is_set()

    def start(self, workers=1, max_queue_size=10):
        """Starts `workers` threads filling a queue of at most `max_queue_size` items."""
        self.workers = max(1, int(workers))
        self.queue = queue.Queue(max_queue_size)
        self.stop_signal = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True,
                                          name=f"keras_enqueuer_{i}")
                         for i in range(self._thread_count())]
        for thread in self._threads:
            thread.start()

    def _thread_count(self):
        return 1

    def _put(self, item):
        while not self.stop_signal.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def stop(self, timeout=None):
        """Stops the threads (waiting up to `timeout` seconds for each)."""
        if self.stop_signal is None:
            return
        self.stop_signal.set()
        while True:
            try:
                self.queue.get_nowait()
            except queue.Empty:
                break
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    def _run(self):
        raise NotImplementedError

    def get(self):
        raise NotImplementedError

    def _results(self):
        """Items as the threads queue them; ends when every thread has finished (a
        generator's end) and the queue is drained, or at `stop()`."""
        while self.is_running():
            try:
                kind, value = self.queue.get(timeout=0.1)
            except queue.Empty:
                if not any(t.is_alive() for t in self._threads) and self.queue.empty():
                    return
                continue
            if kind == "error":
                self.stop()
                raise value
            if kind == "batch":
                yield value


class OrderedEnqueuer(SequenceEnqueuer):
    """Prefetches `sequence[i]` in index order (shuffled each epoch with `shuffle`), calling
    `on_epoch_end` between epochs; batches come out in order."""

    def __init__(self, sequence, use_multiprocessing=False, shuffle=False):
        super().__init__(sequence, use_multiprocessing)
        self.shuffle = shuffle

    def _run(self):
        while not self.stop_signal.is_set():
            order = np.arange(len(self.sequence))
            if self.shuffle:
                order = np.random.permutation(order)
            for index in order:
                if self.stop_signal.is_set():
                    return
                try:
                    item = ("batch", self.sequence[int(index)])
                except Exception as err:  # handed to the consumer, which re-raises it
                    self._put(("error", err))
                    return
                if not self._put(item):
                    return
            self.sequence.on_epoch_end()

    def get(self):
        """Batches in order, epoch after epoch, until `stop()`."""
        yield from self._results()


class GeneratorEnqueuer(SequenceEnqueuer):
    """Prefetches items of a generator from `workers` threads (the generator is read under a
    lock; its end ends `get()`)."""

    def __init__(self, generator, use_multiprocessing=False, wait_time=None,
                 random_seed=None):
        super().__init__(generator, use_multiprocessing)
        self.wait_time = wait_time
        self.random_seed = random_seed
        self._lock = threading.Lock()

    def _thread_count(self):
        return self.workers

    def _run(self):
        if self.random_seed is not None:
            np.random.seed(self.random_seed)
        while not self.stop_signal.is_set():
            try:
                with self._lock:
                    item = next(self.sequence)
            except StopIteration:
                self._put(("end", None))
                return
            except Exception as err:  # handed to the consumer, which re-raises it
                self._put(("error", err))
                return
            if not self._put(("batch", item)):
                return
            if self.wait_time:
                time.sleep(self.wait_time)

    def get(self):
        """Items of the generator until it ends or `stop()`."""
        yield from self._results()
