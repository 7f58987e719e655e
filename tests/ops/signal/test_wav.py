"""DecodeWav / EncodeWav (tf.audio): 16-bit PCM WAV against hand-built files and NumPy."""

import struct

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

COVERED_OPS = {"DecodeWav", "EncodeWav"}


def _wav(pcm: np.ndarray, rate=8000, bits=16, audio_format=1, extra=b""):
    channels = pcm.shape[1]
    data = pcm.astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", audio_format, channels, rate, rate * channels * bits // 8,
                      channels * bits // 8, bits)
    body = (b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + extra + b"data"
            + struct.pack("<I", len(data)) + data)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def test_encode_writes_the_canonical_file():
    audio = np.array([[-1.0, 0.5], [0.3, 0.99999], [1.5, -1.5], [1 / 65536, -3 / 65536]],
                     np.float32)
    contents = tf.audio.encode_wav(audio, 16000)
    assert contents.get_shape().as_list() == []
    # x * 32768 rounded half away from zero, clamped to int16.
    pcm = np.array([[-32768, 16384], [9830, 32767], [32767, -32768], [1, -2]])
    assert run(contents) == _wav(pcm, rate=16000)


def test_decode_round_trip_and_desired_shape():
    rng = np.random.RandomState(0)
    pcm = rng.randint(-32768, 32768, size=(50, 3))
    contents = tf.constant(_wav(pcm, rate=22050))
    audio, rate = tf.audio.decode_wav(contents)
    assert audio.get_shape().as_list() == [None, None]
    got, got_rate = run([audio, rate])
    np.testing.assert_array_equal(got, pcm / 32768.0)
    assert got_rate == 22050 and got.dtype == np.float32
    again = run(tf.audio.decode_wav(tf.audio.encode_wav(got, rate)).audio)
    np.testing.assert_array_equal(again, got)
    fewer = tf.audio.decode_wav(contents, desired_channels=2, desired_samples=10)
    more = tf.audio.decode_wav(contents, desired_channels=5, desired_samples=60)
    assert fewer.audio.get_shape().as_list() == [10, 2]
    f, m = run([fewer.audio, more.audio])
    np.testing.assert_array_equal(f, pcm[:10, :2] / 32768.0)
    np.testing.assert_array_equal(m[:50, :3], pcm / 32768.0)
    np.testing.assert_array_equal(m[:50, 3:], np.repeat(pcm[:, 2:] / 32768.0, 2, axis=1))
    np.testing.assert_array_equal(m[50:], 0)


def test_decode_skips_unknown_chunks():
    pcm = np.array([[1], [-2], [300]])
    contents = _wav(pcm, extra=b"LIST" + struct.pack("<I", 3) + b"abc\x00")
    np.testing.assert_array_equal(run(tf.audio.decode_wav(contents).audio), pcm / 32768.0)


@pytest.mark.parametrize("contents", [
    b"", b"RIFF", b"RIFX" + b"\x00" * 40,
    _wav(np.zeros((2, 1)), bits=8), _wav(np.zeros((2, 1)), audio_format=3),
    _wav(np.zeros((4, 1)))[:-3],
])
def test_decode_rejects_bad_files(contents):
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.audio.decode_wav(contents))


def test_encode_needs_rank_2():
    with pytest.raises(ValueError):
        tf.audio.encode_wav(np.zeros([3], np.float32), 100)
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.audio.encode_wav(np.zeros([3, 1], np.float32), 0))
