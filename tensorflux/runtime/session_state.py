"""Tensors a session keeps between steps under string handles (`tf.get_session_handle`)."""

from __future__ import annotations

import itertools
import threading

from tensorflux.framework import errors


class SessionTensorStore:
    """Handle -> value, owned by one session: values live until deleted or the session closes.

    A handle is "node_name;id;device", with ids unique within the session. Thread-safe.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._values: dict = {}
        self._ids = itertools.count()

    def put(self, node_name: str, device_name: str, value) -> str:
        with self._lock:
            handle = f"{node_name};{next(self._ids)};{device_name}"
            self._values[handle] = value
        return handle

    def get(self, handle):
        """Raises InvalidArgumentError when `handle` names no kept tensor."""
        key = _text(handle)
        with self._lock:
            if key in self._values:
                return self._values[key]
        raise errors.InvalidArgumentError(
            None, None, f"The tensor with handle '{key}' is not in the session store.")

    def delete(self, handle) -> None:
        """Raises InvalidArgumentError when `handle` names no kept tensor."""
        key = _text(handle)
        with self._lock:
            if self._values.pop(key, None) is not None:
                return
        raise errors.InvalidArgumentError(
            None, None, f"The tensor with handle '{key}' is not in the session store.")

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)


def _text(handle) -> str:
    if hasattr(handle, "item") and getattr(handle, "ndim", 1) == 0:
        handle = handle.item()
    return handle.decode() if isinstance(handle, bytes) else str(handle)
