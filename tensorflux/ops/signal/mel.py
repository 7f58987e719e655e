"""`tf.signal` spectral features: dct / idct (types I-III), linear_to_mel_weight_matrix and
mfccs_from_log_mel_spectrograms.

The DCTs are built on RFFT/IRFFT of twice the length (O(N log N), differentiable through the FFT
gradients): type II is `Re(2 exp(-i pi k / 2N) rfft(x, 2N)[k])`, type III the matching
irfft of the phase-shifted input, type I the rfft of the even extension. Scaling follows
scipy.fftpack (norm=None or "ortho").
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.signal import fft as fft_ops


def _validate_dct(type, n, axis, norm):  # noqa: A002 - TF name
    if type not in (1, 2, 3):
        raise ValueError(f"Types I, II and III (I)DCT are supported, got type={type!r}")
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 1):
        raise ValueError(f"n should be a positive integer or None, got {n!r}")
    if axis != -1:
        raise ValueError(f"axis must be -1, got {axis!r}")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm!r}")
    if type == 1 and norm == "ortho":
        raise ValueError("Normalization is not supported for the Type-I DCT.")


def _fit_last(x, n):
    length = int(x.shape._dim_list[-1])
    if n < length:
        return x[..., :n]
    if n > length:
        return pad_ops.pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, n - length]])
    return x


def _dct_tables(size, real, kind, norm):
    """(complex phase factors, real output weights or None) for a type-2/3 DCT of `size`.

    Type 2 multiplies rfft(x, 2N)[:N] by 2 exp(-i pi k / 2N); type 3 multiplies x by
    w_k exp(i pi k / 2N) before irfft(., 2N). NumPy constants for a static size, graph tensors
    otherwise.
    """
    sign = -1.0 if kind == 2 else 1.0
    if isinstance(size, int):
        k = np.arange(size, dtype=np.float64)
        if kind == 2:
            magnitude = np.full(size, 2.0)
            weights = None
            if norm == "ortho":
                weights = np.full(size, np.sqrt(0.5 / size))
                weights[0] = np.sqrt(0.25 / size)
                weights = weights.astype(real.as_numpy_dtype)
        else:
            magnitude = np.full(size, np.sqrt(2.0 * size) if norm else 2.0 * size)
            if norm:
                magnitude[0] = 2.0 * np.sqrt(size)
            weights = None
        phase = magnitude * np.exp(sign * 0.5j * np.pi * k / size)
        complex_dtype = dtypes.complex128 if real == dtypes.float64 else dtypes.complex64
        return phase.astype(complex_dtype.as_numpy_dtype), weights
    np_real = real.as_numpy_dtype
    k = cast_ops.cast(sequence_ops.range(size), real)
    length = cast_ops.cast(size, real)
    first = comparison_ops.equal(k, np_real(0))
    angle = math_ops.truediv(math_ops.multiply(k, np_real(sign * 0.5 * np.pi)), length)
    weights = None
    if kind == 2:
        magnitude = array_ops.fill(array_ops.reshape(size, [1]), np_real(2))
        if norm == "ortho":
            weights = select_ops.where_v2(
                first, unary_ops.sqrt(math_ops.truediv(np_real(0.25), length)),
                unary_ops.sqrt(math_ops.truediv(np_real(0.5), length)))
    elif norm == "ortho":
        magnitude = select_ops.where_v2(
            first, math_ops.multiply(np_real(2), unary_ops.sqrt(length)),
            unary_ops.sqrt(math_ops.multiply(np_real(2), length)))
    else:
        magnitude = array_ops.fill(array_ops.reshape(size, [1]),
                                   math_ops.multiply(np_real(2), length))
    phase = unary_ops.complex(math_ops.multiply(magnitude, unary_ops.cos(angle)),
                              math_ops.multiply(magnitude, unary_ops.sin(angle)))
    return phase, weights


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF names
    """Discrete cosine transform of type I, II or III over the last axis of a real tensor.

    Args:
        input: float32/float64 `[..., N]`.
        type: 1, 2 or 3.
        n: crop or zero-pad the last axis to this length first.
        axis: must be -1.
        norm: None or "ortho" (orthonormal scaling; not for type 1).
        name: optional name (default "dct").

    Returns:
        A tensor like `input` (last axis `n` when given).

    Raises:
        ValueError: a bad type, n, axis or norm, or a scalar input.
        TypeError: `input` is not float32/float64.

    Example:
        >>> tf.signal.dct([1.0, 2.0, 4.0, 3.0])   # -> [20.0, -5.226, -2.828, 2.165]
    """
    _validate_dct(type, n, axis, norm)
    with _scope(name, "dct"):
        x = convert_to_tensor(input, name="input")
        real = x.dtype.base_dtype
        if real not in (dtypes.float32, dtypes.float64):
            raise TypeError(f"dct: input must be float32 or float64, got {real!r}")
        if x.shape.ndims is None or x.shape.ndims < 1:
            raise ValueError(f"dct: input must have known rank >= 1, got {x.shape}")
        static = x.shape._dim_list[-1] is not None
        if n is not None:
            if static:
                x = _fit_last(x, int(n))
            else:
                x = fft_ops._fit_tensor(x, convert_to_tensor(np.array([n], np.int32)))
                x.set_shape(x.shape.merge_with([None] * (x.shape.ndims - 1) + [int(n)]))
        static = x.shape._dim_list[-1] is not None
        size = int(x.shape._dim_list[-1]) if static else array_ops.shape(x)[x.shape.ndims - 1]
        if type == 1:
            extended = concat_ops.concat([x, array_ops.reverse(x[..., 1:-1], [-1])], -1)
            return unary_ops.real(fft_ops.rfft(extended))
        phase, weights = _dct_tables(size, real, type, norm)
        double = [2 * size] if static else array_ops.reshape(2 * size, [1])
        if type == 2:
            spectrum = fft_ops.rfft(x, double)[..., :size]
            result = unary_ops.real(math_ops.multiply(spectrum, phase))
            return result if weights is None else math_ops.multiply(result, weights)
        shifted = math_ops.multiply(unary_ops.complex(x, array_ops.zeros_like(x)), phase)
        return fft_ops.irfft(shifted, double)[..., :size]


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF names
    """Inverse DCT: the DCT of the inverse type (II <-> III, I <-> I).

    With norm="ortho" this is the exact inverse of `dct`; without, the result is scaled by
    `2N` (type II/III) or `2(N - 1)` (type I), as in scipy.fftpack.
    """
    _validate_dct(type, n, axis, norm)
    inverse_type = {1: 1, 2: 3, 3: 2}[type]
    return dct(input, type=inverse_type, n=n, axis=axis, norm=norm, name=name or "idct")


# -- mel filterbanks ----------------------------------------------------------------------------

_MEL_BREAK_HERTZ = 700.0
_MEL_HIGH_Q = 1127.0


def _hertz_to_mel(frequencies):
    return _MEL_HIGH_Q * np.log1p(frequencies / frequencies.dtype.type(_MEL_BREAK_HERTZ))


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None):
    """A `[num_spectrogram_bins, num_mel_bins]` matrix of triangular mel filters.

    Multiplying a linear magnitude spectrogram (`[..., num_spectrogram_bins]`, bins evenly
    spaced from 0 to the Nyquist frequency) by it gives a mel spectrogram. The mel scale is
    `1127 ln(1 + f / 700)`; filters are centred on `num_mel_bins` points evenly spaced in mel
    between the edges; the DC bin gets no weight.

    Args:
        num_mel_bins: number of mel bands (> 0).
        num_spectrogram_bins: number of linear frequency bins (usually fft_length // 2 + 1).
        sample_rate: samples per second of the signal (> 0).
        lower_edge_hertz: lowest frequency included (>= 0).
        upper_edge_hertz: highest frequency included (<= sample_rate / 2).
        dtype: a floating dtype.
        name: optional name (default "linear_to_mel_weight_matrix").

    Raises:
        ValueError: an argument is out of range or `dtype` is not floating.

    Example:
        >>> tf.signal.linear_to_mel_weight_matrix(40, 257, 16000, 20.0, 8000.0).shape
        [257, 40]
    """
    dtype = dtypes.as_dtype(dtype)
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if num_spectrogram_bins <= 0:
        raise ValueError(f"num_spectrogram_bins must be positive. Got: {num_spectrogram_bins}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype!r}")
    np_dtype = dtype.as_numpy_dtype
    with _scope(name, "linear_to_mel_weight_matrix") as scope:
        nyquist = np_dtype(sample_rate) / np_dtype(2)
        linear = np.linspace(0, nyquist, num_spectrogram_bins, dtype=np_dtype)[1:]
        bins_mel = _hertz_to_mel(linear)[:, None]
        edges = np.linspace(_hertz_to_mel(np.asarray(lower_edge_hertz, np_dtype)),
                            _hertz_to_mel(np.asarray(upper_edge_hertz, np_dtype)),
                            num_mel_bins + 2, dtype=np_dtype)
        lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
        rising = (bins_mel - lower) / (center - lower)
        falling = (upper - bins_mel) / (upper - center)
        weights = np.maximum(np_dtype(0), np.minimum(rising, falling))
        weights = np.concatenate([np.zeros([1, num_mel_bins], np_dtype), weights], 0)
        return convert_to_tensor(weights.astype(np_dtype), name=scope)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: the orthonormal DCT-II of log mel spectrograms.

    Args:
        log_mel_spectrograms: float `[..., num_mel_bins]`.
        name: optional name (default "mfccs_from_log_mel_spectrograms").

    Returns:
        A tensor like the input; keep the first 13 or so coefficients for speech features.

    Raises:
        ValueError: the rank is unknown or the input is a scalar.
    """
    with _scope(name, "mfccs_from_log_mel_spectrograms"):
        x = convert_to_tensor(log_mel_spectrograms, preferred_dtype=dtypes.float32,
                              name="log_mel_spectrograms")
        if x.shape.ndims is None or x.shape.ndims < 1:
            raise ValueError(f"mfccs_from_log_mel_spectrograms: input must have known rank >= "
                             f"1, got {x.shape}")
        coefficients = dct(x, type=2)
        bins = x.shape._dim_list[-1]
        np_real = x.dtype.base_dtype.as_numpy_dtype
        if bins is not None:
            return math_ops.multiply(coefficients, np_real(1.0 / np.sqrt(2.0 * int(bins))))
        count = cast_ops.cast(array_ops.shape(x)[x.shape.ndims - 1], x.dtype.base_dtype)
        return math_ops.multiply(coefficients,
                                 unary_ops.rsqrt(math_ops.multiply(count, np_real(2))))
