"""Tensors kept in a session between runs: `tf.get_session_handle`, `tf.get_session_tensor`,
`tf.delete_session_tensor`, and the `TensorHandle` that `Session.run` returns for a handle.

`GetSessionHandle` stores its input in the session (the runtime's `SessionTensorStore`, reached
through `ctx.session`) and outputs a string handle "node;id;device". `GetSessionTensor` reads
the value back, `DeleteSessionTensor` drops it. Fetching a handle gives a `TensorHandle`;
feeding a `TensorHandle` to any tensor feeds the kept value.
"""

from __future__ import annotations

import weakref

import numpy as np

from tensorflux.framework import dtypes, errors, scopes
from tensorflux.framework.op_def import define_op
from tensorflux.framework.session_handles import SessionValueHandle, register_fetch_wrapper
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array import constants as array_constants

__all__ = ["get_session_handle", "get_session_tensor", "delete_session_tensor"]


def _store(ctx, op_type: str):
    store = getattr(ctx.session, "tensor_store", None)
    if store is None:
        raise errors.UnimplementedError(
            None, None, f"{op_type} needs a session that keeps tensors (an in-process "
            "tf.Session); this step runs without one.")
    return store


GetSessionHandle = define_op(
    "GetSessionHandle", inputs=["value: T"], outputs=["handle: string"], attrs=["T: type"],
    stateful=True, differentiable=False)


@GetSessionHandle.shape_fn
def _get_session_handle_shape(value):
    return TensorShape([])


@GetSessionHandle.kernel(ctx=True)
def _get_session_handle_kernel(ctx, value, *, node_name):
    kept = np.array(value, copy=True)  # the caller's buffer may be a variable's
    handle = _store(ctx, "GetSessionHandle").put(node_name, ctx.device_name, kept)
    return np.array(handle.encode(), dtype=object)


GetSessionTensor = define_op(
    "GetSessionTensor", inputs=["handle: string"], outputs=["value: dtype"],
    attrs=["dtype: type"], stateful=True, differentiable=False)


@GetSessionTensor.shape_fn
def _get_session_tensor_shape(handle):
    if not handle.is_compatible_with(TensorShape([])):
        raise ValueError(f"handle must be a scalar, got shape {handle}")
    return TensorShape(None)


@GetSessionTensor.kernel(ctx=True)
def _get_session_tensor_kernel(ctx, handle, *, dtype):
    if np.ndim(handle) != 0:
        raise errors.InvalidArgumentError(None, None, f"handle must be a scalar, got shape "
                                          f"{list(np.shape(handle))}")
    value = _store(ctx, "GetSessionTensor").get(handle)
    expected = dtypes.as_dtype(dtype).base_dtype
    if dtypes.as_dtype(value.dtype) != expected:
        raise errors.InternalError(
            None, None, f"Output 0 of type {dtypes.as_dtype(value.dtype).name} does not match "
            f"declared output type {expected.name}")
    return value


DeleteSessionTensor = define_op(
    "DeleteSessionTensor", inputs=["handle: string"], outputs=[], stateful=True,
    differentiable=False)


@DeleteSessionTensor.shape_fn
def _delete_session_tensor_shape(handle):
    if not handle.is_compatible_with(TensorShape([])):
        raise ValueError(f"handle must be a scalar, got shape {handle}")
    return []


@DeleteSessionTensor.kernel(ctx=True)
def _delete_session_tensor_kernel(ctx, handle):
    _store(ctx, "DeleteSessionTensor").delete(handle)


def _device_of(handle) -> str:
    text = handle.decode() if isinstance(handle, bytes) else str(handle)
    return text.split(";")[-1]


def get_session_handle(data, name=None):
    """Keeps `data`'s value in the session; returns its handle (a string scalar tensor).

    Fetching the handle with `Session.run` gives a `TensorHandle`; the value stays in the
    session until `TensorHandle.delete()` or `tf.delete_session_tensor` (or the session
    closes).

    Args:
        data: a Tensor.
        name: optional op name.

    Returns:
        A scalar string Tensor (colocated with `data`).

    Raises:
        TypeError: `data` is not a Tensor.

    Example:
        >>> h = sess.run(tf.get_session_handle(a * b))
        >>> h.eval()
    """
    if not isinstance(data, Tensor):
        raise TypeError("`data` must be of type Tensor.")
    with scopes.colocate_with(data):
        return GetSessionHandle(data, name=name)


def get_session_tensor(handle, dtype, name=None):
    """A placeholder for a handle and the tensor it names, on the handle's device.

    Args:
        handle: the handle string (`TensorHandle.handle`), used to pick the device.
        dtype: the kept tensor's dtype.
        name: optional name of the GetSessionTensor op.

    Returns:
        `(holder, tensor)`: feed the handle string to `holder`; `tensor` is the kept value.
    """
    with scopes.device(_device_of(handle)):
        holder = array_constants.placeholder(dtypes.string)
        return holder, GetSessionTensor(holder, dtype=dtypes.as_dtype(dtype), name=name)


def delete_session_tensor(handle, name=None):
    """A placeholder for a handle and the op deleting the tensor it names.

    Args:
        handle: the handle string, used to pick the device.
        name: optional name of the DeleteSessionTensor op.

    Returns:
        `(holder, deleter)`: run `deleter` with the handle string fed to `holder`.
    """
    with scopes.device(_device_of(handle)):
        holder = array_constants.placeholder(dtypes.string)
        return holder, DeleteSessionTensor(holder, name=name)


_HANDLE_OPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cached(graph, key, build):
    """Reader and deleter ops built once per graph, device and dtype."""
    per_graph = _HANDLE_OPS.setdefault(graph, {})
    if key not in per_graph:
        with graph.as_default():
            per_graph[key] = build()
    return per_graph[key]


class TensorHandle(SessionValueHandle):
    """A tensor kept in a session: what `Session.run` returns for a `get_session_handle`.

    `eval()` reads the value, `delete()` drops it; feeding the TensorHandle to a tensor in a
    later run feeds the kept value. `str(h)` and `h.handle` are the handle string.
    """

    def __init__(self, handle, dtype, session):
        self._handle = handle.decode() if isinstance(handle, bytes) else str(handle)
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._session = session

    def __str__(self) -> str:
        return self._handle

    def __repr__(self) -> str:
        return f"<TensorHandle {self._handle!r} dtype={self._dtype.name}>"

    @property
    def handle(self) -> str:
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    def to_numpy_array(self):
        """The handle as a feedable string array."""
        return np.array(self._handle.encode(), dtype=object)

    def get_raw_handle(self) -> str:
        return self._handle

    def eval(self):
        """The kept value (runs a GetSessionTensor in the owning session)."""
        key = ("reader", _device_of(self._handle), self._dtype)
        holder, reader = _cached(self._session.graph, key,
                                 lambda: get_session_tensor(self._handle, self._dtype))
        return self._session.run(reader, feed_dict={holder: self._handle})

    def delete(self) -> None:
        """Drops the kept value from the session."""
        key = ("deleter", _device_of(self._handle))
        holder, deleter = _cached(self._session.graph, key,
                                  lambda: delete_session_tensor(self._handle))
        self._session.run(deleter, feed_dict={holder: self._handle})


def _wrap_handle(value, tensor, session):
    return TensorHandle(value, tensor.op.inputs[0].dtype, session)


register_fetch_wrapper("GetSessionHandle", _wrap_handle)
