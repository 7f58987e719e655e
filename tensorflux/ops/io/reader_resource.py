"""Reader resources: produce (key, value) records from work items dequeued from a queue.

Contract: reads of one reader are served one at a time, in arrival order. When the reader has
no current work item it dequeues one (a filename) from the queue given to the read, without
holding any thread while the queue is empty (the queue calls back); a closed, exhausted queue
fails the read with the queue's OutOfRangeError. `read_up_to(n)` returns at most `n` records,
fewer when the current work item ends. Reads waiting behind another are cancelled with their
step (deadline, failure, Session.close).

Subclasses define `_start_work(work)`, `_read(n) -> (keys, values, at_end)` and `_stop_work()`.
"""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from collections import deque

import numpy as np

from tensorflux.framework import errors
from tensorflux.lib.formats.tfrecord import TFRecordReaderStream


class _Read:
    __slots__ = ("ctx", "queue", "n", "many", "done", "token", "active", "finished")

    def __init__(self, ctx, queue, n, many, done):
        self.ctx = ctx
        self.queue = queue
        self.n = n
        self.many = many
        self.done = done
        self.token = None
        self.active = False
        self.finished = False


def _strings(items) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def read_bytes(path: str) -> bytes:
    """A whole file's bytes; NotFoundError / InvalidArgumentError naming it."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    except OSError as err:
        raise errors.UnknownError(None, None, f"{path}: {err}") from None


class ReaderResource:
    """The shared machinery of every reader (see the module docstring)."""

    kind = "ReaderBase"

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._io_lock = threading.Lock()
        self._pending: deque = deque()
        self._busy = False
        self.work = None
        self.records_produced = 0
        self.work_units_completed = 0

    # -- kernel entry points ---------------------------------------------------------------

    def read(self, ctx, queue, n: int, many: bool, done) -> None:
        if many and n <= 0:
            done(error=errors.InvalidArgumentError(
                None, None, f"{self.kind} '{self.name}': num_records must be positive, got {n}"))
            return
        request = _Read(ctx, queue, n, many, done)
        with self._lock:
            # Nobody reading and a work item open: serve now, with nothing to cancel (one
            # record per step is what a preprocessing thread asks for).
            now = not self._busy and not self._pending and self.work is not None
            if now:
                self._busy = True
                request.active = True
        if now:
            result = self._read_records(request)
            if result is not None:
                request.finished = True
                outputs, error = result
                if error is not None:
                    done(error=error)
                else:
                    done(outputs)
                self._pump()  # serves reads that arrived meanwhile; clears _busy
                return
            request.active = False  # the work item ended: wait in line like any read
        with self._lock:
            token = ctx.cancellation.register(lambda error: self._on_cancel(request))
            if token is None:
                request.finished = True
            else:
                request.token = token
                if now:  # reads that came while ours was served arrived after it
                    self._pending.appendleft(request)
                else:
                    self._pending.append(request)
                if self._busy and not now:
                    return
                self._busy = True
        if request.finished:
            done(error=errors.CancelledError(None, None, "Read operation was cancelled"))
            if now:
                self._pump()
            return
        self._pump()

    def reset(self) -> None:
        with self._io_lock:
            if self.work is not None:
                self._stop_work()
            self.work = None
            self.records_produced = 0
            self.work_units_completed = 0

    def close_resource(self) -> None:
        with self._lock:
            pending = list(self._pending)
            self._pending.clear()
        for request in pending:
            if not request.active and not request.finished:
                request.finished = True
                request.done(error=errors.CancelledError(
                    None, None, f"Read operation was cancelled: {self.kind} '{self.name}' was "
                    "closed."))
        with self._io_lock:
            if self.work is not None:
                self._stop_work()
            self.work = None

    # -- the pump: serves the head request; only the thread that set `_busy` runs it --------

    def _on_cancel(self, request) -> None:
        with self._lock:
            if request.active or request.finished:
                return
            request.finished = True
            if request in self._pending:
                self._pending.remove(request)
        request.done(error=errors.CancelledError(None, None, "Read operation was cancelled"))

    def _complete(self, request, outputs=None, error=None) -> None:
        with self._lock:
            if self._pending and self._pending[0] is request:
                self._pending.popleft()
            request.finished = True
        request.ctx.cancellation.deregister(request.token)
        if error is not None:
            request.done(error=error)
        else:
            request.done(outputs)

    def _pump(self) -> None:
        while True:
            with self._lock:
                while self._pending and self._pending[0].finished:
                    self._pending.popleft()
                if not self._pending:
                    self._busy = False
                    return
                request = self._pending[0]
                request.active = True
            if self.work is None:
                waiting, error = self._next_work(request)
                if waiting:
                    return  # the queue calls back, which resumes the pump
                if error is not None:
                    self._complete(request, error=error)
                continue
            result = self._read_records(request)
            if result is not None:
                outputs, error = result
                self._complete(request, outputs, error)

    def _read_records(self, request):
        """Reads for `request` from the current work item: (outputs, None), (None, error), or
        None when the item ended without a record (the pump then dequeues the next)."""
        try:
            with self._io_lock:
                keys, values, at_end = self._read(request.n)
                self.records_produced += len(keys)
                if at_end:
                    self._stop_work()
                    self.work = None
                    self.work_units_completed += 1
        except errors.OpError as err:
            with self._io_lock:
                self._stop_work()
                self.work = None
            return None, err
        if not keys:
            return None
        if request.many:
            return (_strings(keys), _strings(values)), None
        return (_scalar(keys[0]), _scalar(values[0])), None

    def _next_work(self, request):
        """Dequeues a work item for `request`: (True, None) when the answer comes later (the
        callback resumes the pump), else (False, error or None)."""
        state = {"sync": True, "result": None}
        lock = threading.Lock()

        def got(outputs=None, error=None, is_dead=False):
            with lock:
                if state["sync"]:
                    state["result"] = (outputs, error)
                    return
            problem = self._begin(outputs, error)
            if problem is not None:
                self._complete(request, error=problem)
            self._pump()

        request.queue.dequeue(request.ctx, 1, False, False, got, self.name)
        with lock:
            state["sync"] = False
            result = state["result"]
        if result is None:
            return True, None
        return False, self._begin(*result)

    def _begin(self, outputs, error):
        if error is not None:
            return error
        work = outputs
        if isinstance(work, tuple):
            work = work[0]
        work = np.asarray(work).item()
        work = work.decode() if isinstance(work, bytes) else str(work)
        try:
            with self._io_lock:
                self._start_work(work)
                self.work = work
        except errors.OpError as err:
            return err
        return None

    # -- hooks -----------------------------------------------------------------------------

    def _start_work(self, work: str) -> None:
        raise errors.UnimplementedError(None, None, f"{self.kind} cannot start work")

    def _read(self, n: int):
        raise errors.UnimplementedError(None, None, f"{self.kind} cannot read")

    def _stop_work(self) -> None:
        return None


def _scalar(value) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


class TextLineReaderResource(ReaderResource):
    """Lines of text files (without the newline); keys are "file:line" (1-based)."""

    kind = "TextLineReader"

    def __init__(self, name: str, skip_header_lines: int):
        super().__init__(name)
        self.skip_header_lines = int(skip_header_lines)
        self._lines: list = []
        self._pos = 0

    def _start_work(self, work: str) -> None:
        data = read_bytes(work)
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if b"\r" in data:
            lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        self._lines = lines
        self._pos = min(self.skip_header_lines, len(lines))

    def _read(self, n: int):
        start = self._pos
        stop = min(start + n, len(self._lines))
        self._pos = stop
        keys = [f"{self.work}:{line}".encode() for line in range(start + 1, stop + 1)]
        return keys, self._lines[start:stop], stop >= len(self._lines)

    def _stop_work(self) -> None:
        self._lines = []
        self._pos = 0


class FixedLengthRecordReaderResource(ReaderResource):
    """Fixed-size records between a header and a footer, `hop_bytes` apart; keys are
    "file:index"."""

    kind = "FixedLengthRecordReader"

    def __init__(self, name, header_bytes, record_bytes, footer_bytes, hop_bytes, encoding):
        super().__init__(name)
        self.header_bytes = int(header_bytes)
        self.record_bytes = int(record_bytes)
        self.footer_bytes = int(footer_bytes)
        self.hop_bytes = int(hop_bytes) or self.record_bytes
        self.encoding = encoding or ""
        self._data = b""
        self._index = 0
        self._count = 0

    def _start_work(self, work: str) -> None:
        data = read_bytes(work)
        try:
            if self.encoding == "GZIP":
                data = gzip.decompress(data)
            elif self.encoding == "ZLIB":
                data = zlib.decompress(data)
        except (OSError, zlib.error) as err:
            raise errors.DataLossError(None, None, f"{work}: corrupted {self.encoding} data "
                                       f"({err})") from None
        region = data[self.header_bytes:len(data) - self.footer_bytes] \
            if len(data) >= self.header_bytes + self.footer_bytes else b""
        self._data = region
        self._index = 0
        self._count = 0 if len(region) < self.record_bytes else \
            (len(region) - self.record_bytes) // self.hop_bytes + 1

    def _read(self, n: int):
        start = self._index
        stop = min(start + n, self._count)
        self._index = stop
        size, hop, data = self.record_bytes, self.hop_bytes, self._data
        values = [data[i * hop:i * hop + size] for i in range(start, stop)]
        keys = [f"{self.work}:{i}".encode() for i in range(start, stop)]
        return keys, values, stop >= self._count

    def _stop_work(self) -> None:
        self._data = b""


class TFRecordReaderResource(ReaderResource):
    """Records of TFRecord files (optionally GZIP/ZLIB); keys are "file:offset"."""

    kind = "TFRecordReader"

    def __init__(self, name: str, compression_type: str):
        super().__init__(name)
        self.compression_type = compression_type or ""
        self._stream = None

    def _start_work(self, work: str) -> None:
        if not os.path.exists(work):
            raise errors.NotFoundError(None, None, f"{work}; No such file or directory")
        self._stream = TFRecordReaderStream(work, self.compression_type)

    def _read(self, n: int):
        keys, values = [], []
        stream = self._stream
        for _ in range(n):
            offset = stream.offset
            record = stream.read_record()
            if record is None:
                return keys, values, True
            keys.append(f"{self.work}:{offset}".encode())
            values.append(record)
        return keys, values, False

    def _stop_work(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


class WholeFileReaderResource(ReaderResource):
    """One record per file: key = filename, value = contents."""

    kind = "WholeFileReader"

    def _start_work(self, work: str) -> None:
        self._contents = read_bytes(work)

    def _read(self, n: int):
        contents, self._contents = self._contents, b""
        return [self.work.encode()], [contents], True


class IdentityReaderResource(ReaderResource):
    """One record per work item: key = value = the work item."""

    kind = "IdentityReader"

    def _start_work(self, work: str) -> None:
        return None

    def _read(self, n: int):
        return [self.work.encode()], [self.work.encode()], True
