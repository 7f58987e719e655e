"""The rendezvous where `_Send` and `_Recv` of one step meet.

Contract: `send(key, value, is_dead)` never blocks; `recv_async(key, callback)` calls
`callback(error, value, is_dead)` once the value is there (possibly at once, in the caller's
thread); each key is used once per step. `abort(error)` fails every pending and future receive.
Key: `src_device;src_incarnation;dst_device;tensor_name;frame_id:iter_id`.
"""

from __future__ import annotations

import threading

from tensorflux.framework import errors


def create_key(src_device: str, src_incarnation: int, dst_device: str, tensor_name: str,
               frame_iter: str = "0:0") -> str:
    return f"{src_device};{src_incarnation:x};{dst_device};{tensor_name};{frame_iter}"


def parse_key(key: str) -> tuple:
    """Splits a key into (src_device, incarnation, dst_device, tensor_name, frame_iter)."""
    parts = key.split(";")
    if len(parts) != 5:
        raise errors.InvalidArgumentError(None, None, f"Invalid rendezvous key: {key!r}")
    return parts[0], int(parts[1], 16), parts[2], parts[3], parts[4]


class LocalRendezvous:
    """An in-process rendezvous for one step (shared by all its partitions)."""

    make_key = staticmethod(create_key)

    def __init__(self):
        self._lock = threading.Lock()
        self._values: dict[str, tuple] = {}
        self._waiters: dict[str, object] = {}
        self._error = None

    def send(self, key: str, value, is_dead: bool = False) -> None:
        with self._lock:
            if self._error is not None:
                return
            waiter = self._waiters.pop(key, None)
            if waiter is None:
                if key in self._values:
                    raise errors.AbortedError(None, None, f"Duplicated send: {key}")
                self._values[key] = (value, is_dead)
                return
        waiter(None, value, is_dead)

    def recv_async(self, key: str, callback) -> None:
        with self._lock:
            if self._error is not None:
                error = self._error
            else:
                error = None
                item = self._values.pop(key, None)
                if item is None:
                    if key in self._waiters:
                        raise errors.AbortedError(None, None, f"Duplicated recv: {key}")
                    self._waiters[key] = callback
                    return
        if error is not None:
            callback(error, None, False)
        else:
            callback(None, item[0], item[1])

    def recv(self, key: str, timeout: float | None = None):
        """Blocking receive (tests and clients): returns (value, is_dead)."""
        event = threading.Event()
        box = []

        def done(error, value, is_dead):
            box.append((error, value, is_dead))
            event.set()

        self.recv_async(key, done)
        if not event.wait(timeout):
            raise errors.DeadlineExceededError(None, None, f"Timed out receiving {key}")
        error, value, is_dead = box[0]
        if error is not None:
            raise error
        return value, is_dead

    def abort(self, error) -> None:
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            waiters = list(self._waiters.values())
            self._waiters.clear()
            self._values.clear()
        for waiter in waiters:
            waiter(error, None, False)
