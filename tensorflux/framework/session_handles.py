"""The contract between `Session.run` and session-handle ops (`tf.get_session_handle`).

The runtime cannot import op families, so the ops register here how a fetched value of their
op type is wrapped (a string handle becomes a `TensorHandle`), and handle objects derive from
`SessionValueHandle` so a session recognises them as feeds: feeding one feeds the tensor value
the session keeps under its handle.
"""

from __future__ import annotations

_FETCH_WRAPPERS: dict = {}


class SessionValueHandle:
    """A value kept in a session, named by `handle` (bytes or str), of dtype `dtype`."""

    handle = None
    dtype = None


def register_fetch_wrapper(op_type: str, wrap) -> None:
    """Registers `wrap(value, tensor, session)`, applied to fetched outputs of `op_type`.

    Raises:
        KeyError: `op_type` already has a wrapper.
    """
    if op_type in _FETCH_WRAPPERS:
        raise KeyError(f"Op '{op_type}' already has a fetch wrapper "
                       f"({_FETCH_WRAPPERS[op_type].__qualname__}).")
    _FETCH_WRAPPERS[op_type] = wrap


def wrap_fetched(tensor, value, session):
    """`value` as the fetch of `tensor` returns it (wrapped when its op type registered one)."""
    wrap = _FETCH_WRAPPERS.get(tensor.op.type)
    return value if wrap is None else wrap(value, tensor, session)


def has_fetch_wrappers(tensors) -> bool:
    return bool(_FETCH_WRAPPERS) and any(t.op.type in _FETCH_WRAPPERS for t in tensors)
