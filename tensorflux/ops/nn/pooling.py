"""2-D pooling: MaxPool, AvgPool, their gradient ops, and tf.nn.max_pool / avg_pool.

Pooling runs over the spatial dimensions only (ksize and strides are 1 in batch and depth);
kernels loop over window offsets, never over pixels. MaxPoolGrad routes each gradient to the
first maximum of its window in row-major order, as TensorFlow's CPU kernel does. Float pooling
runs the compiled one-pass kernels of `lib/numerics/pooling_jit.py` when numba is available
(decided per kernel instance), the NumPy ones in `lib/numerics/conv2d.py` otherwise.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import conv2d as conv_kernels
from tensorflux.lib.numerics import jit, pooling_jit
from tensorflux.lib.numerics import window as conv_util
from tensorflux.ops import array as array_ops

__all__: list = []

_REAL = "T: {float16, bfloat16, float32, float64, int32, int64, uint8, int16, int8, uint16}"
_REAL_GRAD = ("T: {float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, "
              "float16, uint32, uint64}")
_FLOAT = "T: {float16, bfloat16, float32, float64}"
_DATA_FORMAT = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
_WINDOW = ["ksize: list(int) >= 4", "strides: list(int) >= 4"]


def _window(ksize, strides, padding, data_format, explicit_paddings=()):
    return conv_util.window(data_format, ksize, strides, (1, 1, 1, 1), padding,
                            explicit_paddings)


_BATCH_POOLING = "Pooling is not yet supported on the batch dimension"


def _pools_batch(ksize, strides) -> bool:
    return len(ksize) == 4 and len(strides) == 4 and (ksize[0] != 1 or strides[0] != 1)


def _unimplemented(message: str):
    def kernel(*args):
        raise errors.UnimplementedError(None, None, message)

    return kernel


def _refuse_batch_pooling(op_name: str, ksize, strides) -> None:
    """Raised when the kernel is built, before any op of the step runs (TF's kernel
    constructor check), so it comes before e.g. an unfed placeholder's error."""
    if _pools_batch(ksize, strides):
        raise errors.UnimplementedError(
            None, None, f"{op_name}: {_BATCH_POOLING} (ksize {list(ksize)}, strides "
                        f"{list(strides)}).")


def _pool_shape(input: TensorShape, geo) -> TensorShape:
    n, h, w, c = conv_util.split_nhwc(input, geo.data_format)
    out_h = conv_util.output_size(h, geo.ksize[0], geo.strides[0], 1, geo.padding,
                                  geo.explicit[0])[0]
    out_w = conv_util.output_size(w, geo.ksize[1], geo.strides[1], 1, geo.padding,
                                  geo.explicit[1])[0]
    return conv_util.join_nhwc(n, out_h, out_w, c, geo.data_format)


def _to_nhwc(x: np.ndarray, geo) -> np.ndarray:
    return x if geo.channels_last else x.transpose(0, 2, 3, 1)


def _from_nhwc(y: np.ndarray, geo) -> np.ndarray:
    return y if geo.channels_last else np.ascontiguousarray(y.transpose(0, 3, 1, 2))


# -- MaxPool --------------------------------------------------------------------------------

MaxPool = define_op(
    "MaxPool", inputs=["input: T"], outputs=["output: T"],
    attrs=[_REAL + " = float32", *_WINDOW,
           "padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []",
           _DATA_FORMAT])


def _depth_window(ksize, strides, data_format):
    """The channel window of a max pool across depth (TF's CPU depthwise max pooling), or
    None for spatial pooling. Raises ValueError for configurations TF rejects."""
    c = 1 if data_format == "NCHW" else 3
    if len(ksize) != 4 or len(strides) != 4 or (ksize[c] == 1 and strides[c] == 1):
        return None
    spatial = [i for i in range(1, 4) if i != c]
    if any(ksize[i] != 1 or strides[i] != 1 for i in spatial):
        raise ValueError("MaxPooling supports exactly one of pooling across depth or pooling "
                         f"across width/height (ksize {list(ksize)}, strides {list(strides)})")
    if ksize[0] != 1 or strides[0] != 1:
        raise ValueError(f"Pooling is not yet supported on the batch dimension (ksize "
                         f"{list(ksize)}, strides {list(strides)})")
    if ksize[c] != strides[c]:
        raise ValueError(f"Depthwise max pooling requires the depth window to equal the depth "
                         f"stride (window {ksize[c]}, stride {strides[c]})")
    return ksize[c]


def _depth_pool_shape(input: TensorShape, k: int, data_format: str) -> TensorShape:
    input = input.with_rank(4)
    c = 1 if data_format == "NCHW" else 3
    dims = list(input.as_list()) if input.ndims is not None else [None] * 4
    if dims[c] is not None:
        # NOTE: a window that does not divide the depth fails when the kernel runs, as in TF
        dims[c] = None if dims[c] % k else dims[c] // k
    return TensorShape(dims)


def _depth_pool(x: np.ndarray, k: int, data_format: str) -> np.ndarray:
    c = 1 if data_format == "NCHW" else 3
    if x.shape[c] % k:
        raise errors.UnimplementedError(
            None, None, f"Depthwise max pooling requires the depth window ({k}) to evenly "
                        f"divide the input depth ({x.shape[c]})")
    shape = list(x.shape)
    shape[c:c + 1] = [x.shape[c] // k, k]
    return x.reshape(shape).max(axis=c + 1)


def _pool_output_shape(input, ksize, strides, padding, data_format, explicit_paddings=()):
    if _pools_batch(ksize, strides):  # NOTE: as TF, fails when the kernel runs, not here
        ksize, strides = (1, *ksize[1:]), (1, *strides[1:])
    try:
        k = _depth_window(ksize, strides, data_format)
    except ValueError:  # NOTE: as in TF, a bad depth window fails when the kernel runs
        batch = input.with_rank(4)._dim_list[0] if input.ndims is not None else None
        return TensorShape([batch, None, None, None])
    if k is not None:
        return _depth_pool_shape(input, k, data_format)
    return _pool_shape(input, _window(ksize, strides, padding, data_format, explicit_paddings))


def _max_pool_value(x, ksize, strides, padding, data_format, explicit_paddings=()):
    try:
        k = _depth_window(ksize, strides, data_format)
    except ValueError as err:
        raise errors.UnimplementedError(None, None, str(err)) from None
    if k is not None:
        return _depth_pool(x, k, data_format)
    geo = _window(ksize, strides, padding, data_format, explicit_paddings)
    return _from_nhwc(conv_kernels.max_pool(_to_nhwc(x, geo), geo), geo)


@MaxPool.shape_fn
def _max_pool_shape(input, *, ksize, strides, padding, explicit_paddings, data_format):
    return _pool_output_shape(input, ksize, strides, padding, data_format, explicit_paddings)


@MaxPool.kernel(factory=True)
def _max_pool_kernel(ksize, strides, padding, explicit_paddings, data_format):
    _refuse_batch_pooling("MaxPool", ksize, strides)
    try:
        k = _depth_window(ksize, strides, data_format)
    except ValueError as err:
        return _unimplemented(f"MaxPool: {err}")
    if k is not None:
        return lambda x: _depth_pool(x, k, data_format)
    geo = _window(ksize, strides, padding, data_format, explicit_paddings)

    kernels = pooling_jit if jit.available() else conv_kernels

    def max_pool(x):
        x = _to_nhwc(x, geo)
        impl = kernels if x.dtype in pooling_jit.SUPPORTED_TYPES else conv_kernels
        return _from_nhwc(impl.max_pool(x, geo), geo)

    return max_pool


_WINDOW_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def _attrs(op, names=_WINDOW_ATTRS) -> dict:
    return {name: op.get_attr_str(name) for name in names}


def _shape(tensor):
    return array_ops.shape(tensor, out_type=dtypes.int32)


_POOL_ATTRS = ("ksize", "strides", "padding", "data_format")


@MaxPool.gradient
def _max_pool_grad(op, grad):
    attrs = _attrs(op, _POOL_ATTRS + ("explicit_paddings",))
    return MaxPoolGrad(op.inputs[0], op.outputs[0], grad, **attrs)


MaxPoolGrad = define_op(
    "MaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"], outputs=["output: T"],
    attrs=[*_WINDOW, "padding: {'SAME', 'VALID', 'EXPLICIT'}",
           "explicit_paddings: list(int) = []", _DATA_FORMAT, _REAL_GRAD])


@MaxPoolGrad.shape_fn
def _max_pool_grad_shape(orig_input, orig_output, grad, *, ksize, strides, padding,
                         explicit_paddings, data_format):
    _window(ksize, strides, padding, data_format, explicit_paddings)
    return orig_input.with_rank(4)


@MaxPoolGrad.kernel(factory=True)
def _max_pool_grad_kernel(ksize, strides, padding, explicit_paddings, data_format):
    geo = _window(ksize, strides, padding, data_format, explicit_paddings)

    kernels = pooling_jit if jit.available() else conv_kernels

    def max_pool_grad(x, y, g):
        impl = kernels if x.dtype == g.dtype and x.dtype in pooling_jit.SUPPORTED_TYPES \
            else conv_kernels
        dx = impl.max_pool_grad(_to_nhwc(x, geo), _to_nhwc(g, geo), geo)
        return _from_nhwc(dx, geo)

    return max_pool_grad


def _lowest(dtype):
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    return -np.inf if np.issubdtype(np_dtype, np.floating) else np.iinfo(np_dtype).min


@MaxPoolGrad.gradient
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs
    attrs = _attrs(op, _POOL_ATTRS)
    if attrs["padding"] == "EXPLICIT":
        # MaxPoolGradGrad has no explicit padding: pad both operands and pool VALID instead.
        flat = list(op.get_attr("explicit_paddings"))
        pairs = [flat[i:i + 2] for i in range(0, 8, 2)]
        x = array_ops.pad(x, pairs, constant_values=_lowest(x.dtype.base_dtype))
        grad = array_ops.pad(grad, pairs)
        attrs["padding"] = "VALID"
    return (array_ops.zeros_like(op.inputs[0]), array_ops.zeros_like(y),
            MaxPoolGradGrad(x, y, grad, **attrs))


MaxPoolGradGrad = define_op(
    "MaxPoolGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"],
    attrs=[*_WINDOW, "padding: {'SAME', 'VALID'}", _DATA_FORMAT, _REAL_GRAD])


@MaxPoolGradGrad.shape_fn
def _max_pool_grad_grad_shape(orig_input, orig_output, grad, *, ksize, strides, padding,
                              data_format):
    geo = _window(ksize, strides, padding, data_format)
    return _pool_shape(orig_input, geo).merge_with(orig_output.with_rank(4))


@MaxPoolGradGrad.kernel(factory=True)
def _max_pool_grad_grad_kernel(ksize, strides, padding, data_format):
    geo = _window(ksize, strides, padding, data_format)

    def max_pool_grad_grad(x, y, gg):
        out = conv_kernels.max_pool_grad_grad(_to_nhwc(x, geo), _to_nhwc(gg, geo), geo)
        return _from_nhwc(out, geo)

    return max_pool_grad_grad


@MaxPoolGradGrad.gradient
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return (array_ops.zeros_like(x), array_ops.zeros_like(y),
            MaxPoolGrad(x, y, grad, **_attrs(op, _POOL_ATTRS)))


# -- MaxPoolV2: ksize and strides as int32 tensors --------------------------------------------

_V2_FORMAT = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"

MaxPoolV2 = define_op(
    "MaxPoolV2", inputs=["input: T", "ksize: int32", "strides: int32"], outputs=["output: T"],
    attrs=[_REAL + " = float32", "padding: {'SAME', 'VALID'}", _V2_FORMAT])
MaxPoolGradV2 = define_op(
    "MaxPoolGradV2",
    inputs=["orig_input: T", "orig_output: T", "grad: T", "ksize: int32", "strides: int32"],
    outputs=["output: T"],
    attrs=["padding: {'SAME', 'VALID'}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'", _REAL_GRAD])


def _window_values(ksize, strides, op: str):
    """ksize and strides inputs as int lists (None when not known statically)."""
    if ksize is None or strides is None:
        return None, None
    k = [int(v) for v in np.asarray(ksize).reshape(-1)]
    st = [int(v) for v in np.asarray(strides).reshape(-1)]
    if len(k) != 4 or len(st) != 4:
        raise ValueError(f"{op}: ksize and strides must have 4 elements, got {k} and {st}")
    return k, st


@MaxPoolV2.shape_fn(value_inputs=("ksize", "strides"))
def _max_pool_v2_shape(input, ksize, strides, *, padding, data_format):
    k, st = _window_values(ksize, strides, "MaxPoolV2")
    if k is None:
        input.with_rank(4)
        return TensorShape([None] * 4)
    return _pool_output_shape(input, k, st, padding, data_format)


@MaxPoolV2.kernel
def _max_pool_v2_kernel(x, ksize, strides, *, padding, data_format):
    k, st = _window_values(ksize, strides, "MaxPoolV2")
    return _max_pool_value(x, k, st, padding, data_format)


@MaxPoolGradV2.shape_fn
def _max_pool_grad_v2_shape(orig_input, orig_output, grad, ksize, strides, *, padding,
                            data_format):
    return orig_input.with_rank(4)


@MaxPoolGradV2.kernel
def _max_pool_grad_v2_kernel(x, y, g, ksize, strides, *, padding, data_format):
    k, st = _window_values(ksize, strides, "MaxPoolGradV2")
    if _depth_window(k, st, data_format) is not None:
        raise errors.UnimplementedError(
            None, None, "MaxPoolGradV2 is not yet supported on the depth dimension.")
    geo = _window(k, st, padding, data_format)
    return _from_nhwc(conv_kernels.max_pool_grad(_to_nhwc(x, geo), _to_nhwc(g, geo), geo), geo)


@MaxPoolV2.gradient
def _max_pool_v2_grad(op, grad):
    x, ksize, strides = op.inputs
    return (MaxPoolGradV2(x, op.outputs[0], grad, ksize, strides,
                          padding=op.get_attr_str("padding"),
                          data_format=op.get_attr_str("data_format")),
            None, None)


@MaxPoolGradV2.gradient
def _max_pool_grad_v2_grad(op, grad):
    from tensorflux.ops.array.constants import zeros_like  # cycle: array imports nn helpers

    x, y, _, ksize, strides = op.inputs
    k, st = constant_value(ksize), constant_value(strides)
    if k is None or st is None:
        raise ValueError(f"The gradient of {op.name} (MaxPoolGradV2) needs constant ksize and "
                         "strides")
    attrs = dict(ksize=[int(v) for v in k], strides=[int(v) for v in st],
                 padding=op.get_attr_str("padding"), data_format=op.get_attr_str("data_format"))
    return (zeros_like(x), zeros_like(y), MaxPoolGradGrad(x, y, grad, **attrs), None, None)


# -- AvgPool --------------------------------------------------------------------------------

AvgPool = define_op(
    "AvgPool", inputs=["value: T"], outputs=["output: T"],
    attrs=[*_WINDOW, "padding: {'SAME', 'VALID'}", _DATA_FORMAT, _FLOAT])


@AvgPool.shape_fn
def _avg_pool_shape(value, *, ksize, strides, padding, data_format):
    # NOTE: as in TF, batch or depth windows pass construction and fail when the kernel runs.
    return _pool_shape(value, _window(conv_util.spatial_only(ksize, data_format),
                                      conv_util.spatial_only(strides, data_format), padding,
                                      data_format))


@AvgPool.kernel(factory=True)
def _avg_pool_kernel(ksize, strides, padding, data_format):
    _refuse_batch_pooling("AvgPool", ksize, strides)
    if conv_util.nonspatial(ksize, data_format) or conv_util.nonspatial(strides, data_format):
        return _unimplemented("AvgPool: pooling across depth is not supported: pool exactly "
                              "one of depth or width/height (ksize "
                              f"{list(ksize)}, strides {list(strides)}).")
    geo = _window(ksize, strides, padding, data_format)

    kernels = pooling_jit if jit.available() else conv_kernels

    def avg_pool(x):
        x = _to_nhwc(x, geo)
        impl = kernels if x.dtype in pooling_jit.SUPPORTED_TYPES else conv_kernels
        return _from_nhwc(impl.avg_pool(x, geo), geo)

    return avg_pool


@AvgPool.gradient
def _avg_pool_grad(op, grad):
    return AvgPoolGrad(_shape(op.inputs[0]), grad, **_attrs(op, _POOL_ATTRS))


AvgPoolGrad = define_op(
    "AvgPoolGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
    attrs=[*_WINDOW, "padding: {'SAME', 'VALID'}", _DATA_FORMAT, _FLOAT])


@AvgPoolGrad.shape_fn(value_inputs=("orig_input_shape",))
def _avg_pool_grad_shape(orig_input_shape, grad, *, ksize, strides, padding, data_format):
    _window(ksize, strides, padding, data_format)
    if orig_input_shape is None:
        return TensorShape([None] * 4)
    return TensorShape([int(v) for v in np.asarray(orig_input_shape).reshape(-1)]).with_rank(4)


@AvgPoolGrad.kernel(factory=True)
def _avg_pool_grad_kernel(ksize, strides, padding, data_format):
    geo = _window(ksize, strides, padding, data_format)

    kernels = pooling_jit if jit.available() else conv_kernels

    def avg_pool_grad(orig_input_shape, g):
        sizes = [int(v) for v in np.asarray(orig_input_shape).reshape(-1)]
        if len(sizes) != 4:
            raise ValueError(f"AvgPoolGrad: orig_input_shape must have 4 elements, got "
                             f"{sizes}")
        shape = conv_util.split_nhwc(TensorShape(sizes), geo.data_format)
        impl = kernels if g.dtype in pooling_jit.SUPPORTED_TYPES else conv_kernels
        dx = impl.avg_pool_grad(shape, _to_nhwc(g, geo), geo)
        return _from_nhwc(dx, geo)

    return avg_pool_grad


@AvgPoolGrad.gradient
def _avg_pool_grad_grad(op, grad):
    return None, AvgPool(grad, **_attrs(op, _POOL_ATTRS))


# -- wrappers -------------------------------------------------------------------------------


def _static_window(value, what: str):
    """A constant ksize/strides tensor as its list (TF's wrappers take lists)."""
    if not isinstance(value, Tensor):
        return value
    folded = constant_value(value)
    if folded is None:
        raise TypeError(f"{what} must be a list of ints or a constant tensor here; use "
                        "tf.nn.max_pool_v2 for values known only at run time")
    return [int(v) for v in np.asarray(folded).reshape(-1)]


def _pool_attrs(ksize, strides, padding, data_format) -> dict:
    data_format = data_format or "NHWC"
    ksize = _static_window(ksize, "ksize")
    strides = _static_window(strides, "strides")
    padding, explicit = conv_util.convert_padding(padding, data_format)
    attrs = dict(ksize=conv_util.sequence_attr(ksize, "ksize", data_format),
                 strides=conv_util.sequence_attr(strides, "strides", data_format),
                 padding=padding, data_format=data_format)
    if explicit:
        attrs["explicit_paddings"] = explicit
    return attrs


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """Max pooling over the spatial dimensions of a 4-D tensor.

    Args:
        value: `[batch, height, width, channels]` (or NCHW with `data_format="NCHW"`).
        ksize: window size: an int or 1, 2 or 4 ints.
        strides: window stride: an int or 1, 2 or 4 ints.
        padding: 'SAME', 'VALID' or a list of 4 `[before, after]` pairs.

    Returns:
        The max-pooled tensor.

    Example: `tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")`.
    """
    if input is not None:
        if value is not None:
            raise ValueError("Cannot specify both 'input' and 'value'.")
        value = input
    return MaxPool(value, name=name, **_pool_attrs(ksize, strides, padding, data_format))


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """`max_pool` under its TF2 name."""
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """Average pooling over the spatial dimensions; SAME windows average real inputs only."""
    if input is not None:
        if value is not None:
            raise ValueError("Cannot specify both 'input' and 'value'.")
        value = input
    return AvgPool(value, name=name, **_pool_attrs(ksize, strides, padding, data_format))


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """`avg_pool` under its TF2 name."""
    return avg_pool(input, ksize, strides, padding, data_format=data_format, name=name)
