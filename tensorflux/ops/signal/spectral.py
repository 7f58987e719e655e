"""`tf.signal` framing, windows and short-time Fourier transforms, composed from public ops so
gradients flow: frame, overlap_and_add, hann_window, hamming_window, stft, inverse_stft,
inverse_stft_window_fn.

`frame` is a gather of a `[frames, frame_length]` index grid; `overlap_and_add` is its adjoint, a
segment sum. When lengths are known at graph construction the grids are NumPy constants;
otherwise they are computed in the graph.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import segment as segment_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.signal import fft as fft_ops


def _static_int(value):
    """The int value of a Python/NumPy integer or constant scalar tensor, else None."""
    if isinstance(value, Tensor):
        value = constant_value(value)
        if value is None:
            return None
    array = np.asarray(value)
    if array.ndim != 0 or not np.issubdtype(array.dtype, np.integer):
        return None
    return int(array)


def _int_scalar(value, name):
    t = convert_to_tensor(value, name=name)
    if t.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{name} must be an int32 or int64 scalar, got {t.dtype!r}")
    t.shape.assert_has_rank(0)
    return cast_ops.cast(t, dtypes.int32) if t.dtype.base_dtype != dtypes.int32 else t


def _grid(num_frames, frame_length, frame_step):
    """indices[f, j] = f * frame_step + j, as a constant or a graph tensor."""
    static = [_static_int(v) for v in (num_frames, frame_length, frame_step)]
    if None not in static:
        f, n, s = static
        return np.arange(f, dtype=np.int32)[:, None] * s + np.arange(n, dtype=np.int32)[None, :]
    starts = math_ops.multiply(sequence_ops.range(num_frames), frame_step)
    return math_ops.add(array_ops.expand_dims(starts, 1),
                        array_ops.expand_dims(sequence_ops.range(frame_length), 0))


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Splits `axis` of `signal` into overlapping frames of `frame_length`, `frame_step` apart.

    Args:
        signal: a tensor of known rank >= 1.
        frame_length: int scalar: samples per frame.
        frame_step: int scalar: samples between frame starts.
        pad_end: pad the end with `pad_value` so that every sample starts or joins a frame
            (`ceil(len / frame_step)` frames); otherwise only full frames are kept.
        pad_value: the padding value when `pad_end` is true.
        axis: the axis to frame (negative counts from the end).
        name: optional name (default "frame").

    Returns:
        `signal` with `axis` replaced by `[num_frames, frame_length]`.

    Raises:
        ValueError: `signal` has unknown rank or is a scalar, or `axis` is out of range.

    Example:
        >>> tf.signal.frame([0, 1, 2, 3, 4, 5, 6], 3, 2)   # -> [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    """
    with _scope(name, "frame"):
        signal = convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is None or rank < 1:
            raise ValueError(f"frame: signal must have known rank >= 1, got shape {signal.shape}")
        if not -rank <= axis < rank:
            raise ValueError(f"frame: axis {axis} is out of range for a rank-{rank} signal")
        axis = axis % rank
        frame_length = _int_scalar(frame_length, "frame_length")
        frame_step = _int_scalar(frame_step, "frame_step")
        static_length = _static_int(frame_length)
        static_step = _static_int(frame_step)
        dims = list(signal.shape._dim_list)
        length = dims[axis]
        if length is not None and static_length is not None and static_step is not None:
            length = int(length)
            if pad_end:
                num_frames = -(-length // static_step)
                extra = max(0, static_length + static_step * (num_frames - 1) - length)
            else:
                num_frames = max(0, 1 + (length - static_length) // static_step)
                extra = 0
        else:
            length = array_ops.shape(signal)[axis]
            if pad_end:
                num_frames = math_ops.floordiv(length + frame_step - 1, frame_step)
                extra = math_ops.maximum(
                    frame_length + frame_step * (num_frames - 1) - length, 0)
            else:
                num_frames = math_ops.maximum(
                    1 + math_ops.floordiv(length - frame_length, frame_step), 0)
                extra = 0
        if pad_end and not (isinstance(extra, int) and extra == 0):
            zeros = np.zeros([rank, 1], np.int32)
            after = array_ops.one_hot(axis, rank, dtype=dtypes.int32) * extra \
                if isinstance(extra, Tensor) else np.eye(rank, dtype=np.int32)[axis] * extra
            paddings = concat_ops.concat([zeros, array_ops.reshape(after, [rank, 1])], 1)
            pad_value = convert_to_tensor(pad_value, dtype=signal.dtype.base_dtype,
                                          name="pad_value")
            signal = pad_ops.pad(signal, paddings, constant_values=pad_value)
        indices = _grid(num_frames, frame_length, frame_step)
        framed = array_ops.gather(signal, indices, axis=axis)
        framed.set_shape(TensorShape(dims[:axis] + [_static_int(num_frames), static_length]
                                     + dims[axis + 1:]))
        return framed


def overlap_and_add(signal, frame_step, name=None):
    """Adds overlapping frames back into one signal (the adjoint of `frame` on its last axis).

    Args:
        signal: `[..., frames, frame_length]`, rank >= 2.
        frame_step: int scalar: samples between frame starts.
        name: optional name (default "overlap_and_add").

    Returns:
        `[..., (frames - 1) * frame_step + frame_length]`.

    Raises:
        ValueError: `signal` has rank < 2 or unknown rank.

    Example:
        >>> tf.signal.overlap_and_add([[1.0, 1.0], [1.0, 1.0]], 1)   # -> [1.0, 2.0, 1.0]
    """
    with _scope(name, "overlap_and_add"):
        signal = convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"overlap_and_add: signal must have known rank >= 2, got shape "
                             f"{signal.shape}")
        frame_step = _int_scalar(frame_step, "frame_step")
        frames, frame_length = signal.shape._dim_list[-2:]
        shape = array_ops.shape(signal)
        if frames is None:
            frames = shape[rank - 2]
        if frame_length is None:
            frame_length = shape[rank - 1]
        ids = array_ops.reshape(_grid(frames, frame_length, frame_step), [-1])
        static = [_static_int(v) for v in (frames, frame_length, frame_step)]
        if None not in static:
            out_length = (static[0] - 1) * static[2] + static[1] if static[0] else 0
            out_length = max(out_length, 0)
        else:
            out_length = math_ops.maximum((frames - 1) * frame_step + frame_length, 0)
        outer = shape[:rank - 2]
        flat = array_ops.reshape(signal, array_ops.stack(
            [reduction_ops.reduce_prod(outer), frames * frame_length]))
        summed = segment_ops.unsorted_segment_sum(array_ops.transpose(flat), ids, out_length)
        result = array_ops.reshape(array_ops.transpose(summed), concat_ops.concat(
            [outer, array_ops.reshape(out_length, [1])], 0))
        known = signal.shape._dim_list[:-2]
        result.set_shape(TensorShape(list(known) + [out_length if isinstance(out_length, int)
                                                    else None]))
        return result


# -- windows ----------------------------------------------------------------------------------

def _raised_cosine(window_length, periodic, dtype, a, b, name, default):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{default}: dtype must be a floating point type, got {dtype!r}")
    with _scope(name, default) as scope:
        length = _static_int(window_length)
        periodic_value = periodic if isinstance(periodic, bool) else constant_value(
            convert_to_tensor(periodic))
        if length is not None and periodic_value is not None:
            np_dtype = dtype.as_numpy_dtype
            if length == 1:
                return array_ops.ones([1], dtype, name=scope)
            # NOTE: as in TF, `periodic` only changes even lengths (denominator length, not
            # length - 1); odd lengths are always symmetric.
            denominator = length + int(bool(periodic_value)) * (1 - length % 2) - 1
            count = np.arange(length, dtype=np_dtype)
            angle = np_dtype(2 * np.pi) * count / np_dtype(denominator)
            window = np_dtype(a) - np_dtype(b) * np.cos(angle)
            return convert_to_tensor(window.astype(np_dtype), name=scope)
        length = _int_scalar(window_length, "window_length")
        periodic = cast_ops.cast(convert_to_tensor(periodic, name="periodic"), dtypes.int32)
        even = 1 - math_ops.floormod(length, 2)
        denominator = cast_ops.cast(length + periodic * even - 1, dtype)
        count = cast_ops.cast(sequence_ops.range(length), dtype)
        np_dtype = dtype.as_numpy_dtype
        angle = math_ops.truediv(math_ops.multiply(count, np_dtype(2 * np.pi)),
                                 math_ops.maximum(denominator, np_dtype(1)))
        window = math_ops.subtract(np_dtype(a),
                                   math_ops.multiply(np_dtype(b), unary_ops.cos(angle)))
        single = comparison_ops.equal(length, 1)
        return select_ops.where_v2(single, array_ops.ones_like(window), window, name=scope)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """The Hann window `0.5 - 0.5 cos(2 pi n / N)`.

    Args:
        window_length: int scalar.
        periodic: for even lengths, N = window_length (for spectral analysis) instead of
            window_length - 1 (symmetric, for filter design); odd lengths are always symmetric.
        dtype: a floating dtype.
        name: optional name (default "hann_window").

    Raises:
        ValueError: `dtype` is not floating.

    Example:
        >>> tf.signal.hann_window(4)   # -> [0.0, 0.5, 1.0, 0.5]
    """
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, name, "hann_window")


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """The Hamming window `0.54 - 0.46 cos(2 pi n / N)` (N as in `hann_window`)."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, name, "hamming_window")


# -- short-time Fourier transforms --------------------------------------------------------------

def _enclosing_power_of_two(value):
    static = _static_int(value)
    if static is not None:
        return int(2 ** np.ceil(np.log2(max(static, 1))))
    as_float = cast_ops.cast(value, dtypes.float64)
    exponent = math_ops.ceil(math_ops.truediv(unary_ops.log(as_float), np.log(2.0)))
    return cast_ops.cast(math_ops.pow(np.float64(2.0), exponent), dtypes.int32)


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """Short-time Fourier transform of real `signals` along their last axis.

    Args:
        signals: float32/float64 `[..., samples]`.
        frame_length: int scalar: window length in samples.
        frame_step: int scalar: hop in samples.
        fft_length: int scalar; default the smallest power of 2 enclosing `frame_length`.
        window_fn: `fn(length, dtype=...)` giving the window, or None for no window.
        pad_end: pad the end of `signals` with zeros (see `frame`).
        name: optional name (default "stft").

    Returns:
        complex `[..., frames, fft_length // 2 + 1]`.

    Raises:
        ValueError: `signals` is a scalar or has unknown rank.

    Example:
        >>> tf.signal.stft(tf.zeros([2, 100]), 20, 10).shape   # -> [2, 9, 17]
    """
    with _scope(name, "stft"):
        signals = convert_to_tensor(signals, preferred_dtype=dtypes.float32, name="signals")
        if signals.shape.ndims is None or signals.shape.ndims < 1:
            raise ValueError(f"stft: signals must have known rank >= 1, got {signals.shape}")
        frame_length = _int_scalar(frame_length, "frame_length")
        frame_step = _int_scalar(frame_step, "frame_step")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        else:
            fft_length = _int_scalar(fft_length, "fft_length")
        framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            window = window_fn(frame_length, dtype=framed.dtype.base_dtype)
            framed = math_ops.multiply(framed, window)
        return fft_ops.rfft(framed, array_ops.reshape(fft_length, [1]))


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A window function that makes `inverse_stft` invert `stft` with `forward_window_fn`.

    The returned `fn(frame_length, dtype)` divides the forward window by the sum of its squares
    over all frames overlapping each sample.

    Example:
        >>> window_fn = tf.signal.inverse_stft_window_fn(256)
        >>> tf.signal.inverse_stft(stfts, 1024, 256, window_fn=window_fn)
    """

    def inverse_window(frame_length, dtype):
        with _scope(name, "inverse_stft_window_fn"):
            step = _int_scalar(frame_step, "frame_step")
            length = _int_scalar(frame_length, "frame_length")
            forward = forward_window_fn(frame_length, dtype=dtype)
            denominator = unary_ops.square(forward)
            static = (_static_int(length), _static_int(step))
            if None not in static:
                overlaps = -(-static[0] // static[1])
                extra = overlaps * static[1] - static[0]
            else:
                overlaps = math_ops.floordiv(length + step - 1, step)
                extra = overlaps * step - length
            denominator = pad_ops.pad(denominator, array_ops.reshape(
                array_ops.stack([0, extra]) if isinstance(extra, Tensor) else [0, extra], [1, 2]))
            denominator = array_ops.reshape(denominator, array_ops.stack([overlaps, step]))
            denominator = reduction_ops.reduce_sum(denominator, 0, keepdims=True)
            denominator = pad_ops.tile(denominator, array_ops.stack([overlaps, 1]))
            denominator = array_ops.reshape(denominator, [-1])[:length]
            return math_ops.truediv(forward, denominator)

    return inverse_window


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """Inverse short-time Fourier transform: irfft of each frame, windowed, overlap-added.

    With `window_fn=tf.signal.inverse_stft_window_fn(frame_step)` this inverts `stft` (up to
    the edges not covered by every frame).

    Args:
        stfts: complex `[..., frames, fft_length // 2 + 1]`.
        frame_length: int scalar: window length in samples.
        frame_step: int scalar: hop in samples.
        fft_length: int scalar; default the smallest power of 2 enclosing `frame_length`.
        window_fn: `fn(length, dtype=...)` giving the synthesis window, or None.
        name: optional name (default "inverse_stft").

    Returns:
        real `[..., (frames - 1) * frame_step + frame_length]`.

    Raises:
        ValueError: `stfts` has rank < 2.
    """
    with _scope(name, "inverse_stft"):
        stfts = convert_to_tensor(stfts, name="stfts")
        stfts.shape.with_rank_at_least(2)
        length = _int_scalar(frame_length, "frame_length")
        frame_step = _int_scalar(frame_step, "frame_step")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(length)
        else:
            fft_length = _int_scalar(fft_length, "fft_length")
        real_frames = fft_ops.irfft(stfts, array_ops.reshape(fft_length, [1]))
        rank = real_frames.shape.ndims
        static_length = _static_int(length)
        last = real_frames.shape._dim_list[-1] if rank is not None else None
        if static_length is not None and last is not None:
            if last > static_length:
                real_frames = real_frames[..., :static_length]
            elif last < static_length:
                real_frames = pad_ops.pad(
                    real_frames, [[0, 0]] * (rank - 1) + [[0, static_length - int(last)]])
        else:
            real_frames = real_frames[..., :length]
            extra = math_ops.maximum(length - array_ops.shape(real_frames)[-1], 0)
            paddings = concat_ops.concat(
                [array_ops.zeros([array_ops.rank(real_frames) - 1, 2], dtypes.int32),
                 array_ops.reshape(array_ops.stack([0, extra]), [1, 2])], 0)
            real_frames = pad_ops.pad(real_frames, paddings)
        if window_fn is not None:
            window = window_fn(frame_length, dtype=stfts.dtype.real_dtype)
            real_frames = math_ops.multiply(real_frames, window)
        return overlap_and_add(real_frames, frame_step)
