"""Range and LinSpace: evenly spaced sequences.

`tf.range` infers its dtype as TensorFlow does: the widest of its arguments in the order
int32 < int64 < float32 < float64 (Python ints are int32, Python floats float32).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.math.casting import cast

__all__ = ["range", "linspace", "lin_space"]

Range = define_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"],
                  outputs=["output: Tidx"],
                  attrs=["Tidx: {floattype, int8, int16, int32, int64, uint16, uint32, uint64}"
                         " = int32"], differentiable=False)


def _range_size(start, limit, delta, error):
    """Number of elements, TF's formula; `error(msg)` builds the exception to raise."""
    if delta == 0:
        raise error(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise error(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise error(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if isinstance(start, (int, np.integer)) and isinstance(delta, (int, np.integer)):
        span, step = builtins.abs(int(limit) - int(start)), builtins.abs(int(delta))
        return (span + step - 1) // step
    return int(math.ceil(builtins.abs((float(limit) - float(start)) / float(delta))))


def _scalar(value, what):
    """The item of a scalar (or, as TF's kernel still accepts, of a one-element vector)."""
    array = np.asarray(value)
    if array.ndim != 0 and array.shape != (1,):
        raise errors.InvalidArgumentError(None, None,
                                          f"{what} must be a scalar, not shape {array.shape}")
    return array.item()


@Range.shape_fn(value_inputs=("start", "limit", "delta"))
def _range_shape(start, limit, delta):
    for what, value in (("start", start), ("limit", limit), ("delta", delta)):
        if value is not None and np.ndim(value) != 0:
            raise ValueError(f"{what} must be a scalar, not shape {list(np.shape(value))}")
    if start is None or limit is None or delta is None:
        return TensorShape([None])
    return TensorShape([_range_size(np.asarray(start).item(), np.asarray(limit).item(),
                                    np.asarray(delta).item(), ValueError)])


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


@Range.kernel(factory=True)
def _range_factory(Tidx):
    out = Tidx.as_numpy_dtype

    def range_kernel(start, limit, delta):
        start = _scalar(start, "start")
        limit = _scalar(limit, "limit")
        delta = _scalar(delta, "delta")
        size = _range_size(start, limit, delta, _invalid)
        return (start + np.arange(size, dtype=np.float64 if isinstance(start, float) else
                                  np.int64) * delta).astype(out)

    return range_kernel


LinSpace = define_op("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"],
                     outputs=["output: T"],
                     attrs=["T: {floattype}", "Tidx: {int32, int64} = int32"],
                     differentiable=False)


@LinSpace.shape_fn(value_inputs=("num",))
def _lin_space_shape(start, stop, num):
    for what, shape in (("start", start), ("stop", stop)):
        if shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar, got shape {shape}")
    if num is None:
        return TensorShape([None])
    if np.ndim(num) != 0:
        raise ValueError(f"num must be a scalar, got shape {list(np.shape(num))}")
    if int(num) <= 0:
        raise ValueError(f"Requires num > 0: {int(num)}")
    return TensorShape([int(num)])


@LinSpace.kernel
def _lin_space_kernel(start, stop, num):
    count = int(_scalar(num, "num"))
    if count <= 0:
        raise errors.InvalidArgumentError(None, None, f"Requires num > 0: {count}")
    start_v = _scalar(start, "start")
    stop_v = _scalar(stop, "stop")
    return np.linspace(start_v, stop_v, count).astype(np.asarray(start).dtype)


_RANGE_ORDER = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF name
    """Numbers from `start` up to (not including) `limit` in steps of `delta`.

    Args:
        start: first value, or the limit when `limit` is None (then start is 0).
        limit: exclusive end.
        delta: step, non-zero.
        dtype: output dtype; inferred from the arguments when None (ints -> int32, any float ->
            float32, int64/float64 tensors widen).
        name: op name.

    Returns:
        A 1-D tensor.

    Example:
        >>> tf.range(1, 5, 1.5)   # -> [1.0, 2.5, 4.0] (float32)
    """

    if limit is None:
        start, limit = 0, start
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name) as scope:
        args = []
        for value, arg_name in ((start, "start"), (limit, "limit"), (delta, "delta")):
            if not isinstance(value, Tensor):
                value = convert_to_tensor(value, dtype=dtype, name=arg_name)
            args.append(value)
        if dtype is None:
            for arg in args:
                if arg.dtype.base_dtype not in _RANGE_ORDER:
                    raise TypeError(f"range: unsupported dtype {arg.dtype.name}; expected one "
                                    "of int32, int64, float32, float64")
            inferred = builtins.max((a.dtype.base_dtype for a in args), key=_RANGE_ORDER.index)
            args = [cast(a, inferred) for a in args]
        else:
            args = [cast(a, dtype) for a in args]
        return Range(*args, name=scope)


def linspace(start, stop, num, name=None):
    """`num` evenly spaced values from `start` to `stop` inclusive (LinSpace)."""
    start = convert_to_tensor(start, name="start")
    stop = convert_to_tensor(stop, dtype=start.dtype.base_dtype, name="stop")
    return LinSpace(start, stop, num, name=name)


lin_space = linspace
