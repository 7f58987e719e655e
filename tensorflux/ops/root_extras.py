"""Small TF1 root-level names: protos, `OpError`, `NoGradient`, `UnconnectedGradients`, a few
checks (`assert_rank_in`, `assert_same_float_dtype`, `assert_proper_iterable`,
`verify_tensor_all_finite`), `convert_to_tensor_or_indexed_slices` and `timestamp`."""

from __future__ import annotations

import enum
import time

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.errors import OpError
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.autodiff.gradients import NotDifferentiable
from tensorflux.protos.attr_value_pb2 import NameAttrList
from tensorflux.protos.event_pb2 import Event, LogMessage, SessionLog
from tensorflux.protos.meta_graph_pb2 import MetaGraphDef, TensorInfo
from tensorflux.protos.summary_pb2 import HistogramProto, Summary, SummaryMetadata

__all__ = ["Summary", "SessionLog", "HistogramProto", "SummaryMetadata", "Event", "LogMessage",
           "MetaGraphDef", "NameAttrList", "TensorInfo", "OpError", "NoGradient",
           "UnconnectedGradients", "assert_rank_in", "assert_same_float_dtype",
           "assert_proper_iterable", "verify_tensor_all_finite",
           "convert_to_tensor_or_indexed_slices", "timestamp", "conv2d_backprop_filter_v2",
           "conv2d_backprop_input_v2"]

NoGradient = NotDifferentiable


class UnconnectedGradients(str, enum.Enum):
    """What `tf.gradients` returns for an x that no y depends on: None or zeros.

    NOTE: the members are also strings ("none", "zero"), so `tf.gradients` accepts either form.
    """

    NONE = "none"
    ZERO = "zero"


def _scope(name, default):
    return graph_mod.get_default_graph().name_scope(name or default)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Checks that the rank of `x` is one of `ranks`.

    Args:
        x: a tensor.
        ranks: an iterable of scalar int32 ranks.
        data: tensors to show on failure.
        summarize: entries to show per tensor.
        message: a prefix for the failure message.
        name: optional name.

    Returns:
        An Assert op, or a NoOp when the static rank settles it.

    Raises:
        ValueError: the static rank of `x` is known and not in `ranks`.

    Example:
        >>> tf.assert_rank_in(images, [3, 4])
    """
    from tensorflux.ops.control_flow.primitives import no_op
    from tensorflux.ops.debug.logging import Assert
    from tensorflux.ops.math.comparison import equal
    from tensorflux.ops.math.reduction import reduce_any

    with _scope(name, "assert_rank_in"):
        x = convert_to_tensor(x, name="x")
        ranks = [convert_to_tensor(r, name="rank") for r in ranks]
        prefix = f"{message}.  " if message else ""
        for rank in ranks:
            if rank.dtype.base_dtype != dtypes.int32:
                raise TypeError(f"{rank.name} must be of type tf.int32; got {rank.dtype!r}")
        static = [constant_value(r) for r in ranks]
        if all(s is not None for s in static):
            if any(np.ndim(s) != 0 for s in static):
                raise ValueError("Rank must be a scalar.")
            wanted = tuple(int(s) for s in static)
            if x.shape.ndims is not None:
                if x.shape.ndims not in wanted:
                    raise ValueError(f"{prefix}Tensor {x.name} must have rank in {wanted}.  "
                                     f"Received rank {x.shape.ndims}, shape {x.shape}")
                return no_op(name="static_checks_determined_all_ok")
        from tensorflux.ops.array.concat_split import stack
        from tensorflux.ops.array.shapes import rank as rank_of
        from tensorflux.ops.array.shapes import shape as shape_of

        if data is None:
            data = [prefix, f"Tensor {x.name} must have rank in", *ranks, "Received shape: ",
                    shape_of(x)]
        condition = reduce_any(equal(stack(ranks), rank_of(x)))
        return Assert(condition, data, summarize=summarize)


def assert_same_float_dtype(tensors=None, dtype=None):
    """Validates that `tensors` (and `dtype`) share one floating base dtype.

    Args:
        tensors: tensors (or None entries, or objects with a `dtype`) to check.
        dtype: an expected dtype, or None.

    Returns:
        The common floating dtype (float32 when nothing names one).

    Raises:
        ValueError: the dtypes differ or are not floating.
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
    for tensor in tensors or ():
        if tensor is None or getattr(tensor, "dtype", None) is None:
            continue
        base = dtypes.as_dtype(tensor.dtype).base_dtype
        if dtype is None:
            dtype = base
        elif base != dtype:
            raise ValueError(f"{getattr(tensor, 'name', tensor)}, type={base.name} must be of "
                             f"the same type ({dtype.name}).")
    if dtype is None:
        return dtypes.float32
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype.name}.")
    return dtype


def assert_proper_iterable(values):
    """Raises TypeError unless `values` is an iterable of values (not a tensor, array or
    string, which iterate as one value in TF's eyes)."""
    from tensorflux.framework.sparse_tensor import SparseTensor

    if isinstance(values, (Tensor, SparseTensor, np.ndarray, str, bytes, bytearray)):
        raise TypeError(f"Expected argument 'values' to be a \"proper\" iterable.  Found: "
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument 'values' to be iterable.  Found: {type(values)}")


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """Returns `t`, failing the step if it holds NaN or Inf (a CheckNumerics dependency).

    Args:
        t: a floating tensor (`x` is the TF2 spelling).
        msg: the error message prefix (`message` is the TF2 spelling).
        name: optional name.

    Returns:
        `t`'s value, produced after the check.
    """
    from tensorflux.ops.control_flow.primitives import with_dependencies
    from tensorflux.ops.debug.logging import check_numerics

    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None:
        raise TypeError("verify_tensor_all_finite() needs a tensor `t`")
    with _scope(name, "VerifyFinite"):
        t = convert_to_tensor(t, name="t")
        check = check_numerics(t, message=msg)
        return with_dependencies([check], t)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """Returns an IndexedSlices unchanged (checking `dtype`); converts anything else to a
    Tensor."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for IndexedSlices with dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


# -- Timestamp ------------------------------------------------------------------------------

Timestamp = define_op("Timestamp", inputs=[], outputs=["ts: float64"], attrs=[], stateful=True,
                      differentiable=False)


@Timestamp.shape_fn
def _timestamp_shape():
    return TensorShape([])


@Timestamp.kernel
def _timestamp_kernel():
    return np.float64(time.time())


def timestamp(name=None):
    """The wall time, in seconds since the Unix epoch, when the op runs (a float64 scalar)."""
    return Timestamp(name=name)


# -- conv2d_backprop_*_v2 ---------------------------------------------------------------------
# NOTE: TF builds Conv2DBackprop{Filter,Input}V2 nodes, which take the tensor instead of its
# shape; these wrappers feed the tensor's shape to the V1 ops, which compute the same values.

def _v2_conv_attrs(strides, padding, explicit_paddings, data_format, dilations):
    from tensorflux.ops.nn.conv import _conv_attrs

    explicit = list(explicit_paddings or [])
    if padding == "EXPLICIT" or (isinstance(padding, bytes) and padding == b"EXPLICIT"):
        attrs = _conv_attrs(strides, "VALID", data_format, dilations)
        if len(explicit) != 8:
            raise ValueError(f"explicit_paddings must hold 8 values for padding EXPLICIT, got "
                             f"{explicit}")
        attrs.update(padding="EXPLICIT", explicit_paddings=[int(v) for v in explicit])
        return attrs
    if explicit:
        raise ValueError(f"explicit_paddings must be empty unless padding is EXPLICIT, got "
                         f"{explicit}")
    return _conv_attrs(strides, padding, data_format, dilations)


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,
                              use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                              dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d with respect to its filter; `filter` supplies only the shape.

    Returns:
        A tensor shaped like `filter`.
    """
    from tensorflux.ops.array.shapes import shape
    from tensorflux.ops.nn.conv import Conv2DBackpropFilter

    with _scope(name, "Conv2DBackpropFilterV2") as scope:
        filter = convert_to_tensor(filter, name="filter")
        return Conv2DBackpropFilter(input, shape(filter), out_backprop,
                                    use_cudnn_on_gpu=use_cudnn_on_gpu, name=scope,
                                    **_v2_conv_attrs(strides, padding, explicit_paddings,
                                                     data_format, dilations))


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,
                             use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                             dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d with respect to its input; `input` supplies only the shape.

    Returns:
        A tensor shaped like `input`.
    """
    from tensorflux.ops.array.shapes import shape
    from tensorflux.ops.nn.conv import Conv2DBackpropInput

    with _scope(name, "Conv2DBackpropInputV2") as scope:
        input = convert_to_tensor(input, name="input")
        return Conv2DBackpropInput(shape(input), filter, out_backprop,
                                   use_cudnn_on_gpu=use_cudnn_on_gpu, name=scope,
                                   **_v2_conv_attrs(strides, padding, explicit_paddings,
                                                    data_format, dilations))
