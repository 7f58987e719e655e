"""DecodeWav / EncodeWav: 16-bit PCM WAV files <-> float32 [samples, channels] audio.

The codec is `lib/formats/wav.py`. DecodeWav's `desired_channels` keeps the first channels or
repeats the last one; `desired_samples` truncates or pads with zeros (-1: the file's own).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.formats import wav

__all__: list = []

DecodeWav = define_op(
    "DecodeWav", inputs=["contents: string"], outputs=["audio: float", "sample_rate: int32"],
    attrs=["desired_channels: int = -1", "desired_samples: int = -1"], differentiable=False)


@DecodeWav.shape_fn
def _decode_wav_shape(contents, *, desired_channels, desired_samples):
    contents.with_rank(0)
    samples = desired_samples if desired_samples >= 0 else None
    channels = desired_channels if desired_channels >= 0 else None
    return [TensorShape([samples, channels]), TensorShape([])]


@DecodeWav.kernel
def _decode_wav_kernel(contents, *, desired_channels, desired_samples):
    if np.ndim(contents) != 0:
        raise errors.InvalidArgumentError(None, None, f"contents must be a scalar, got shape "
                                          f"{list(np.shape(contents))}")
    data = contents.item() if hasattr(contents, "item") else contents
    try:
        audio, rate = wav.decode(bytes(data))
    except wav.WavError as err:
        raise errors.InvalidArgumentError(None, None, f"DecodeWav: {err}") from None
    if desired_channels >= 0 and desired_channels != audio.shape[1]:
        columns = np.minimum(np.arange(desired_channels), audio.shape[1] - 1)
        audio = audio[:, columns]
    if desired_samples >= 0:
        if desired_samples <= audio.shape[0]:
            audio = audio[:desired_samples]
        else:
            pad = np.zeros((desired_samples - audio.shape[0], audio.shape[1]), np.float32)
            audio = np.concatenate([audio, pad])
    return np.ascontiguousarray(audio, np.float32), np.int32(rate)


EncodeWav = define_op(
    "EncodeWav", inputs=["audio: float", "sample_rate: int32"], outputs=["contents: string"],
    differentiable=False)


@EncodeWav.shape_fn
def _encode_wav_shape(audio, sample_rate):
    audio.with_rank(2)
    sample_rate.with_rank(0)
    return TensorShape([])


@EncodeWav.kernel
def _encode_wav_kernel(audio, sample_rate):
    if audio.ndim != 2:
        raise errors.InvalidArgumentError(None, None, f"audio must be 2-D [samples, channels], "
                                          f"got shape {list(audio.shape)}")
    rate = int(sample_rate)
    if not 0 < rate <= 0xFFFFFFFF // max(2 * audio.shape[1], 1):
        raise errors.InvalidArgumentError(None, None, f"sample_rate out of range: {rate}")
    if audio.shape[1] < 1 or audio.shape[1] > 0xFFFF:
        raise errors.InvalidArgumentError(None, None, f"audio must have 1..65535 channels, "
                                          f"got {audio.shape[1]}")
    return np.array(wav.encode(audio, rate), dtype=object)


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """Decodes a 16-bit PCM WAV file.

    Args:
        contents: a scalar string tensor, the file's bytes.
        desired_channels: channels wanted (-1: the file's); extra ones repeat the last.
        desired_samples: samples wanted (-1: all); fewer truncate, more pad with zeros.
        name: optional name.

    Returns:
        `(audio, sample_rate)`: float32 [samples, channels] in [-1, 1), and an int32 scalar.
    """
    return DecodeWav(contents, desired_channels=desired_channels,
                     desired_samples=desired_samples, name=name)


def encode_wav(audio, sample_rate, name=None):
    """Encodes float32 [samples, channels] audio in [-1, 1] as a 16-bit PCM WAV file.

    Args:
        audio: float32 [samples, channels]; values are clamped to the int16 range.
        sample_rate: int32 scalar, samples per second.
        name: optional name.

    Returns:
        A scalar string tensor.
    """
    return EncodeWav(audio, sample_rate, name=name)
