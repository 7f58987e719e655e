"""Step cancellation: blocked kernels register a callback; aborting a step calls them all."""

from __future__ import annotations

import threading


class CancellationManager:
    """Callbacks run once on `start_cancel(error)`; registering after that returns None."""

    def __init__(self):
        self._lock = threading.Lock()
        self._callbacks: dict[int, object] = {}
        self._next = 0
        self._error = None

    @property
    def is_cancelled(self) -> bool:
        return self._error is not None

    @property
    def error(self):
        return self._error

    def register(self, callback):
        """Registers `callback(error)`; returns a token, or None if already cancelled."""
        with self._lock:
            if self._error is not None:
                return None
            self._next += 1
            self._callbacks[self._next] = callback
            return self._next

    def deregister(self, token) -> bool:
        """Removes a callback; False if cancellation already started (it has been or will be
        called)."""
        with self._lock:
            return self._callbacks.pop(token, None) is not None

    def start_cancel(self, error) -> None:
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            callback(error)
