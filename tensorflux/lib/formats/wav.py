"""16-bit PCM WAV (RIFF) encoding and decoding, as `tf.audio` reads and writes it.

Samples are floats in [-1, 1): decoding divides the int16 samples by 32768; encoding multiplies
by 32768, rounds half away from zero and clamps to [-32768, 32767]. The encoder writes the
canonical 44-byte header (RIFF, a 16-byte `fmt ` chunk, `data`); the decoder skips unknown
chunks and accepts only 16-bit integer PCM.
"""

from __future__ import annotations

import struct

import numpy as np


class WavError(ValueError):
    """The bytes are not a WAV file this codec reads."""


def encode(audio: np.ndarray, sample_rate: int) -> bytes:
    """`audio` ([samples, channels] floats) as a 16-bit PCM WAV file."""
    samples, channels = audio.shape
    scaled = np.asarray(audio, np.float64) * 32768.0
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    pcm = np.clip(rounded, -32768, 32767).astype("<i2").tobytes()
    block_align = 2 * channels
    fmt = struct.pack("<HHIIHH", 1, channels, sample_rate, sample_rate * block_align,
                      block_align, 16)
    body = (b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data"
            + struct.pack("<I", len(pcm)) + pcm)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def decode(data: bytes) -> tuple[np.ndarray, int]:
    """(float32 [samples, channels] audio, sample rate) of a 16-bit PCM WAV file.

    Raises:
        WavError: not RIFF/WAVE, truncated, missing chunks, or not 16-bit integer PCM.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise WavError("Header mismatch: expected a RIFF file of type WAVE")
    pos = 12
    fmt = None
    while pos + 8 <= len(data):
        chunk_id, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = data[pos + 8:pos + 8 + size]
        if len(body) < size:
            raise WavError(f"Chunk {chunk_id!r} claims {size} bytes but only {len(body)} remain")
        if chunk_id == b"fmt ":
            if size < 16:
                raise WavError(f"fmt chunk too short: {size} bytes")
            fmt = struct.unpack_from("<HHIIHH", body)
        elif chunk_id == b"data":
            if fmt is None:
                raise WavError("data chunk comes before the fmt chunk")
            return _samples(fmt, body)
        pos += 8 + size + (size & 1)  # chunks are padded to even sizes
    raise WavError("No data chunk found" if fmt is not None else "No fmt chunk found")


def _samples(fmt, body: bytes):
    audio_format, channels, sample_rate, _, block_align, bits = fmt
    if audio_format != 1:
        raise WavError(f"Bad audio format value of {audio_format}: only PCM (1) is supported")
    if bits != 16:
        raise WavError(f"Can only read 16-bit WAV files, but received {bits}")
    if channels < 1 or block_align != 2 * channels:
        raise WavError(f"Bad channel count {channels} or block size {block_align}")
    if len(body) % block_align:
        raise WavError(f"Data chunk of {len(body)} bytes is not a whole number of "
                       f"{block_align}-byte frames")
    pcm = np.frombuffer(body, "<i2").reshape(-1, channels)
    return (pcm.astype(np.float32) / np.float32(32768.0)), sample_rate
