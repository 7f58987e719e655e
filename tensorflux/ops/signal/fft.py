"""Discrete Fourier transforms: FFT/IFFT (1-3D, complex), RFFT/IRFFT (1-3D, real <-> complex).

The transforms act on the innermost 1, 2 or 3 dimensions. The real ones take an `fft_length`
(int32, one entry per transformed dimension): RFFT crops or zero-pads the input's inner dims
to it and keeps the `fft_length[-1] // 2 + 1` non-negative frequencies of the last one; IRFFT
crops or pads its input to `[..., fft_length[:-1], fft_length[-1] // 2 + 1]` and returns
`fft_length`-sized real signals (the imaginary parts of the DC and Nyquist bins are ignored).

Gradients are the adjoint transforms: FFT's is `N * IFFT(grad)`; RFFT's is
`N * IRFFT(grad / c)` and IRFFT's `c * RFFT(grad) / N`, where `c` weighs the bins that stand for
a conjugate pair twice (every bin of the last axis except DC and, for even lengths, Nyquist),
followed by undoing the crop or pad.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.array import sorting as sort_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math import unary as unary_ops

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d"]

_TCOMPLEX = "Tcomplex: {complex64, complex128} = complex64"
_TREAL = "Treal: {float32, float64} = float32"
_NAMES = {1: "", 2: "2D", 3: "3D"}


def _axes(rank):
    return tuple(range(-rank, 0))


# -- complex transforms -----------------------------------------------------------------------

def _complex_op(rank, inverse):
    name = ("IFFT" if inverse else "FFT") + _NAMES[rank]
    op = define_op(name, inputs=["input: Tcomplex"], outputs=["output: Tcomplex"],
                   attrs=[_TCOMPLEX])
    transform = np.fft.ifftn if inverse else np.fft.fftn

    @op.shape_fn
    def shape_fn(input):
        if input.ndims is not None and input.ndims < rank:
            raise ValueError(f"input must be at least rank {rank}, got shape {input}")
        return input

    def kernel(input):
        if input.ndim < rank:
            raise errors.InvalidArgumentError(
                None, None, f"{name}: input must be at least rank {rank}, got shape "
                f"{list(input.shape)}")
        if input.size == 0:
            return np.zeros(input.shape, input.dtype)
        return transform(input, axes=_axes(rank)).astype(input.dtype, copy=False)

    kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(kernel)
    return op


FFT = _complex_op(1, False)
IFFT = _complex_op(1, True)
FFT2D = _complex_op(2, False)
IFFT2D = _complex_op(2, True)
FFT3D = _complex_op(3, False)
IFFT3D = _complex_op(3, True)
_COMPLEX_OPS = {(1, False): FFT, (1, True): IFFT, (2, False): FFT2D, (2, True): IFFT2D,
                (3, False): FFT3D, (3, True): IFFT3D}


def _inner_size(t, rank, dtype):
    """prod(shape(t)[-rank:]) as a scalar tensor of `dtype`."""
    return cast_ops.cast(reduction_ops.reduce_prod(_input_inner_shape(t, rank)), dtype)


def _complex_grad(rank, inverse):
    def grad_fn(op, grad):
        size = _inner_size(grad, rank, grad.dtype.base_dtype)
        adjoint = _COMPLEX_OPS[(rank, not inverse)](grad)
        if inverse:
            return math_ops.truediv(adjoint, size)
        return math_ops.multiply(adjoint, size)

    return grad_fn


for (_rank, _inverse), _op in _COMPLEX_OPS.items():
    _op.gradient(_complex_grad(_rank, _inverse))


# -- real transforms --------------------------------------------------------------------------

def _fft_length_of(value, rank, name):
    length = np.asarray(value).reshape(-1)
    if length.size != rank:
        raise errors.InvalidArgumentError(
            None, None, f"{name}: fft_length must have {rank} elements, got {length.tolist()}")
    if np.any(length < 0):
        raise errors.InvalidArgumentError(
            None, None, f"{name}: fft_length must be non-negative, got {length.tolist()}")
    return [int(n) for n in length]


def _fit(x, sizes):
    """Crops or zero-pads the last len(sizes) axes of `x` to `sizes`."""
    k = len(sizes)
    index = [slice(None)] * (x.ndim - k) + [slice(0, n) for n in sizes]
    x = x[tuple(index)]
    pads = [(0, 0)] * (x.ndim - k) + [(0, max(0, n - d)) for n, d in zip(sizes, x.shape[-k:])]
    if any(after for _, after in pads):
        x = np.pad(x, pads)
    return x


def _real_shape(rank, name, forward):
    def shape_fn(input, fft_length):
        if input.ndims is not None and input.ndims < rank:
            raise ValueError(f"input must be at least rank {rank}, got shape {input}")
        if input.ndims is None:
            return TensorShape(None)
        outer = list(input._dim_list[:input.ndims - rank])
        if fft_length is None:
            return TensorShape(outer + [None] * rank)
        length = np.asarray(fft_length).reshape(-1)
        if length.size != rank:
            raise ValueError(f"fft_length must have {rank} elements, got {length.tolist()}")
        inner = [int(n) for n in length]
        if forward:
            inner[-1] = inner[-1] // 2 + 1
        return TensorShape(outer + inner)

    shape_fn.__name__ = f"_{name.lower()}_shape"
    return shape_fn


def _real_op(rank, inverse):
    name = ("IRFFT" if inverse else "RFFT") + _NAMES[rank]
    if inverse:
        op = define_op(name, inputs=["input: Tcomplex", "fft_length: int32"],
                       outputs=["output: Treal"], attrs=[_TREAL, _TCOMPLEX])
    else:
        op = define_op(name, inputs=["input: Treal", "fft_length: int32"],
                       outputs=["output: Tcomplex"], attrs=[_TREAL, _TCOMPLEX])
    op.shape_fn(_real_shape(rank, name, not inverse), value_inputs=("fft_length",))

    @op.kernel(factory=True)
    def factory(Treal, Tcomplex):
        out_dtype = (Treal if inverse else Tcomplex).as_numpy_dtype

        def kernel(input, fft_length):
            if input.ndim < rank:
                raise errors.InvalidArgumentError(
                    None, None, f"{name}: input must be at least rank {rank}, got shape "
                    f"{list(input.shape)}")
            length = _fft_length_of(fft_length, rank, name)
            outer = list(input.shape[:input.ndim - rank])
            if inverse:
                fitted = _fit(input, length[:-1] + [length[-1] // 2 + 1])
                if fitted.size == 0 or 0 in length:
                    return np.zeros(outer + length, out_dtype)
                return np.fft.irfftn(fitted, s=length, axes=_axes(rank)).astype(out_dtype)
            out_shape = outer + length[:-1] + [length[-1] // 2 + 1]
            fitted = _fit(input, length)
            if fitted.size == 0:
                return np.zeros(out_shape, out_dtype)
            return np.fft.rfftn(fitted, axes=_axes(rank)).astype(out_dtype, copy=False)

        kernel.__name__ = f"_{name.lower()}_kernel"
        return kernel

    return op


RFFT = _real_op(1, False)
IRFFT = _real_op(1, True)
RFFT2D = _real_op(2, False)
IRFFT2D = _real_op(2, True)
RFFT3D = _real_op(3, False)
IRFFT3D = _real_op(3, True)
_REAL_OPS = {(1, False): RFFT, (1, True): IRFFT, (2, False): RFFT2D, (2, True): IRFFT2D,
             (3, False): RFFT3D, (3, True): IRFFT3D}


def _pair_weights(fft_length, dtype, inverse):
    """Along the last axis: c = [1, 2, ..., 2, 1 (even lengths)] or its reciprocal."""
    n = fft_length[-1]
    k = sequence_ops.range(n // 2 + 1)
    single = comparison_ops.logical_or(comparison_ops.equal(k, 0),
                                       comparison_ops.equal(2 * k, n))
    real = dtype.real_dtype
    paired = np.asarray(2.0 if inverse else 0.5, real.as_numpy_dtype)
    weights = select_ops.where_v2(single, np.asarray(1.0, real.as_numpy_dtype), paired)
    return cast_ops.cast(weights, dtype)


def _fit_tensor(t, target):
    """Graph version of `_fit`: crops or zero-pads the last size(target) axes of t to target."""
    rank = int(target.shape[0])
    static = constant_value(target)
    inner = t.shape._dim_list[t.shape.ndims - rank:] if t.shape.ndims is not None else None
    if static is not None and inner is not None and all(d is not None for d in inner) \
            and [int(d) for d in inner] == [int(v) for v in static]:
        return t
    full = array_ops.shape(t)
    outer_rank = array_ops.rank(t) - rank
    current = slicing_ops.slice(full, array_ops.reshape(outer_rank, [1]), [rank])
    keep = math_ops.minimum(current, target)
    outer = array_ops.fill(array_ops.reshape(outer_rank, [1]), -1)
    cropped = slicing_ops.slice(t, array_ops.zeros_like(full),
                                concat_ops.concat([outer, keep], 0))
    after = concat_ops.concat([array_ops.zeros_like(outer),
                               math_ops.maximum(target - current, 0)], 0)
    paddings = concat_ops.stack([array_ops.zeros_like(after), after], axis=1)
    return pad_ops.pad(cropped, paddings)


def _input_inner_shape(x, rank):
    full = array_ops.shape(x)
    return slicing_ops.slice(full, array_ops.reshape(array_ops.rank(x) - rank, [1]), [rank])


def _real_grad(rank, inverse):
    def grad_fn(op, grad):
        x, fft_length = op.inputs
        size = reduction_ops.reduce_prod(fft_length)
        if inverse:
            # grad wrt the complex input: c * RFFT(grad) / N, fitted back to the input's size.
            cdtype = x.dtype.base_dtype
            spectrum = _REAL_OPS[(rank, False)](grad, fft_length, Tcomplex=cdtype)
            scale = math_ops.truediv(_pair_weights(fft_length, cdtype, True),
                                     cast_ops.cast(size, cdtype))
            return _fit_tensor(math_ops.multiply(spectrum, scale), _input_inner_shape(x, rank)), \
                None
        cdtype = grad.dtype.base_dtype
        weighted = math_ops.multiply(grad, _pair_weights(fft_length, cdtype, False))
        signal = _REAL_OPS[(rank, True)](weighted, fft_length, Treal=x.dtype.base_dtype)
        signal = math_ops.multiply(signal, cast_ops.cast(size, x.dtype.base_dtype))
        return _fit_tensor(signal, _input_inner_shape(x, rank)), None

    return grad_fn


for (_rank, _inverse), _op in _REAL_OPS.items():
    _op.gradient(_real_grad(_rank, _inverse))


# -- wrappers ---------------------------------------------------------------------------------

def _complex_wrapper(rank, inverse, input, name):
    op = _COMPLEX_OPS[(rank, inverse)]
    with _scope(name, op.name) as scope:
        x = convert_to_tensor(input, name="input")
        return op(x, name=scope)


def fft(input, name=None):  # noqa: A002 - TF name
    """Fast Fourier transform over the innermost dimension of a complex tensor.

    Args:
        input: a complex64 or complex128 tensor of rank >= 1.
        name: optional name (default "FFT").

    Returns:
        A tensor like `input`: `out[..., k] = sum_j input[..., j] * exp(-2 pi i j k / n)`.

    Raises:
        TypeError: `input` is not complex.

    Example:
        >>> tf.fft(tf.constant([1, 1, 1, 1], tf.complex64))   # -> [4, 0, 0, 0]
    """
    return _complex_wrapper(1, False, input, name)


def ifft(input, name=None):  # noqa: A002 - TF name
    """Inverse FFT over the innermost dimension (divides by its length)."""
    return _complex_wrapper(1, True, input, name)


def fft2d(input, name=None):  # noqa: A002 - TF name
    """2-D FFT over the 2 innermost dimensions of a complex tensor."""
    return _complex_wrapper(2, False, input, name)


def ifft2d(input, name=None):  # noqa: A002 - TF name
    """Inverse 2-D FFT over the 2 innermost dimensions."""
    return _complex_wrapper(2, True, input, name)


def fft3d(input, name=None):  # noqa: A002 - TF name
    """3-D FFT over the 3 innermost dimensions of a complex tensor."""
    return _complex_wrapper(3, False, input, name)


def ifft3d(input, name=None):  # noqa: A002 - TF name
    """Inverse 3-D FFT over the 3 innermost dimensions."""
    return _complex_wrapper(3, True, input, name)


def _infer_fft_length(x, rank, inverse):
    inner = x.shape._dim_list[x.shape.ndims - rank:] if x.shape.ndims is not None else None
    if inner is not None and all(d is not None for d in inner):
        length = [int(d) for d in inner]
        if inverse:
            length[-1] = max(0, 2 * (length[-1] - 1))
        return convert_to_tensor(np.array(length, np.int32), name="fft_length")
    dims = _input_inner_shape(x, rank)
    if not inverse:
        return dims
    last = math_ops.maximum(2 * (dims[rank - 1] - 1), 0)
    return concat_ops.concat([dims[:rank - 1], array_ops.reshape(last, [1])], 0)


def _real_wrapper(rank, inverse, input_tensor, fft_length, name):
    op = _REAL_OPS[(rank, inverse)]
    default = ("irfft" if inverse else "rfft") + _NAMES[rank].lower()
    with _scope(name, default) as scope:
        if inverse:
            x = convert_to_tensor(input_tensor, preferred_dtype=dtypes.complex64,
                                  name="input_tensor")
            if not x.dtype.is_complex:
                raise ValueError(f"{op.name} requires tf.complex64 or tf.complex128 inputs, "
                                 f"got: {x.dtype!r}")
        else:
            x = convert_to_tensor(input_tensor, preferred_dtype=dtypes.float32,
                                  name="input_tensor")
            if x.dtype.base_dtype not in (dtypes.float32, dtypes.float64):
                raise ValueError(f"{op.name} requires tf.float32 or tf.float64 inputs, got: "
                                 f"{x.dtype!r}")
        x.shape.with_rank_at_least(rank)
        if fft_length is None:
            fft_length = _infer_fft_length(x, rank, inverse)
        else:
            fft_length = convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length")
        if inverse:
            real = dtypes.float64 if x.dtype.base_dtype == dtypes.complex128 else dtypes.float32
            return op(x, fft_length, Treal=real, name=scope)
        cplx = dtypes.complex128 if x.dtype.base_dtype == dtypes.float64 else dtypes.complex64
        return op(x, fft_length, Tcomplex=cplx, name=scope)


def rfft(input_tensor, fft_length=None, name=None):
    """FFT of a real signal over its innermost dimension: the `fft_length // 2 + 1` bins.

    Args:
        input_tensor: a float32 or float64 tensor of rank >= 1.
        fft_length: int32 `[1]`: the transform length (the input is cropped or zero-padded to
            it); None uses the innermost dimension.
        name: optional name (default "rfft").

    Returns:
        complex64 (complex128 for float64 input), inner dimension `fft_length // 2 + 1`.

    Raises:
        ValueError: `input_tensor` is not float32/float64.

    Example:
        >>> tf.signal.rfft([1.0, 2.0, 3.0, 4.0])   # -> [10, -2+2j, -2]
    """
    return _real_wrapper(1, False, input_tensor, fft_length, name)


def irfft(input_tensor, fft_length=None, name=None):
    """Inverse of `rfft`: real signals of length `fft_length` (default 2 * (inner - 1))."""
    return _real_wrapper(1, True, input_tensor, fft_length, name)


def rfft2d(input_tensor, fft_length=None, name=None):
    """2-D FFT of a real signal over its 2 innermost dimensions (last one halved)."""
    return _real_wrapper(2, False, input_tensor, fft_length, name)


def irfft2d(input_tensor, fft_length=None, name=None):
    """Inverse of `rfft2d`."""
    return _real_wrapper(2, True, input_tensor, fft_length, name)


def rfft3d(input_tensor, fft_length=None, name=None):
    """3-D FFT of a real signal over its 3 innermost dimensions (last one halved)."""
    return _real_wrapper(3, False, input_tensor, fft_length, name)


def irfft3d(input_tensor, fft_length=None, name=None):
    """Inverse of `rfft3d`."""
    return _real_wrapper(3, True, input_tensor, fft_length, name)


def _shift(x, axes, name, default, inverse):
    with _scope(name, default) as scope:
        x = convert_to_tensor(x, name="x")
        if axes is None:
            rank = x.shape.ndims
            if rank is None:
                raise ValueError(f"{default}: x must have a known rank when axes is None")
            axes = list(range(rank))
        elif isinstance(axes, int):
            axes = [axes]
        axes_t = convert_to_tensor(np.asarray(axes, np.int32), name="axes") \
            if not hasattr(axes, "op") else axes
        dims = array_ops.gather(array_ops.shape(x), axes_t)
        half = math_ops.floordiv(dims, 2)
        shift = unary_ops.negative(half) if inverse else half
        return sort_ops.roll(x, shift, axes_t, name=scope)


def fftshift(x, axes=None, name=None):
    """Moves the zero-frequency bin to the centre of `axes` (all axes by default).

    Example:
        >>> tf.signal.fftshift([0, 1, 2, 3, 4])   # -> [3, 4, 0, 1, 2]
    """
    return _shift(x, axes, name, "fftshift", False)


def ifftshift(x, axes=None, name=None):
    """The inverse of `fftshift`."""
    return _shift(x, axes, name, "ifftshift", True)
