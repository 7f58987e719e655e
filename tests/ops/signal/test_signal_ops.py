"""tf.signal: frame, overlap_and_add, windows, stft/inverse_stft, mel matrix, mfccs, dct/idct.

Reference literals were computed once with TensorFlow 2.21 (tf.compat.v1) on the same inputs.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf

S = tf.signal
X4 = np.array([1.0, 2.0, 4.0, 3.0], np.float32)
SINE = np.sin(np.arange(16.0)).astype(np.float32)


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def _close(t, expected, atol=1e-5):
    value = _run(t)
    expected = np.asarray(expected)
    assert t.shape.is_compatible_with(value.shape), (t.shape, value.shape)
    assert value.shape == expected.shape, (value.shape, expected.shape)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=atol)
    return value


# -- windows -------------------------------------------------------------------------------------

def test_windows_match_reference():
    _close(S.hann_window(5), [0.0, 0.5, 1.0, 0.5, 0.0])     # odd lengths ignore `periodic`
    _close(S.hann_window(6), [0.0, 0.25, 0.75, 1.0, 0.75, 0.25])
    _close(S.hann_window(5, periodic=False), [0.0, 0.5, 1.0, 0.5, 0.0])
    _close(S.hann_window(1), [1.0])
    _close(S.hamming_window(4), [0.08, 0.54, 1.0, 0.54])
    _close(S.hamming_window(4, periodic=False), [0.08, 0.77, 0.77, 0.08])
    assert S.hann_window(4, dtype=tf.float64).dtype == tf.float64
    with pytest.raises(ValueError, match="floating"):
        S.hann_window(4, dtype=tf.int32)


def test_window_with_tensor_length():
    n = tf.placeholder(tf.int32, [])
    w = S.hann_window(n)
    for length in (1, 5, 6):
        periodic = length + (1 - length % 2) - 1
        expected = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / max(periodic, 1))
        if length == 1:
            expected = [1.0]
        np.testing.assert_allclose(_run(w, {n: length}), expected, atol=1e-6)


# -- frame / overlap_and_add ---------------------------------------------------------------------

def test_frame_reference():
    x = np.arange(10, dtype=np.float32)
    _close(S.frame(x, 4, 3), [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    _close(S.frame(x, 4, 3, pad_end=True, pad_value=-1.0),
           [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9], [9, -1, -1, -1]])
    _close(S.frame(np.arange(12.0).reshape(6, 2), 3, 2, axis=0),
           np.array([[[0, 1], [2, 3], [4, 5]], [[4, 5], [6, 7], [8, 9]]], np.float64))
    assert S.frame(tf.placeholder(tf.float32, [None, 10]), 4, 3).shape.as_list() == [None, 3, 4]
    assert S.frame(x, 20, 3).shape.as_list() == [0, 20]


def test_frame_dynamic_length():
    p = tf.placeholder(tf.float32, [2, None])
    framed = S.frame(p, 4, 3, pad_end=True)
    assert framed.shape.as_list() == [2, None, 4]
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    expected = np.stack([np.pad(x, [(0, 0), (0, 3)])[:, i:i + 4] for i in (0, 3, 6)], 1)
    np.testing.assert_array_equal(_run(framed, {p: x}), expected)
    plain = S.frame(p, 4, 3)
    np.testing.assert_array_equal(_run(plain, {p: x}), expected[:, :2])
    np.testing.assert_array_equal(_run(plain, {p: x[:, :2]}).shape, (2, 0, 4))


def test_frame_and_window_with_tensor_lengths():
    p = tf.placeholder(tf.float32, [None, None])
    length, step = tf.placeholder(tf.int32, []), tf.placeholder(tf.int32, [])
    framed = S.frame(p, length, step, pad_end=True, pad_value=5.0)
    window = S.inverse_stft_window_fn(step)(length, tf.float32)
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    f, w = _run([framed, window], {p: x, length: 4, step: 3})
    padded = np.pad(x, [(0, 0), (0, 3)], constant_values=5.0)
    np.testing.assert_array_equal(f, np.stack([padded[:, i:i + 4] for i in (0, 3, 6)], 1))
    with tf.Graph().as_default():
        expected = _run(S.inverse_stft_window_fn(3)(4, tf.float32))
    np.testing.assert_allclose(w, expected, rtol=1e-6)


def test_overlap_and_add_reference():
    _close(S.overlap_and_add(np.arange(12.0).reshape(3, 4), 2),
           [0.0, 1.0, 6.0, 8.0, 14.0, 16.0, 10.0, 11.0])
    p = tf.placeholder(tf.float32, [None, None, 3])
    out = S.overlap_and_add(p, 2)
    assert out.shape.as_list() == [None, None]
    x = np.random.RandomState(0).randn(2, 4, 3).astype(np.float32)
    expected = np.zeros([2, 9], np.float32)
    for f in range(4):
        expected[:, 2 * f:2 * f + 3] += x[:, f]
    np.testing.assert_allclose(_run(out, {p: x}), expected, rtol=1e-6)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5), st.integers(1, 4), st.booleans())
def test_frame_then_overlap_add_matches_numpy(length, frame_length, step, pad_end):
    x = np.random.RandomState(length).randn(2, length)
    num = -(-length // step) if pad_end else max(0, 1 + (length - frame_length) // step)
    padded = np.pad(x, [(0, 0), (0, max(0, frame_length + step * (num - 1) - length))])
    expected = np.stack([padded[:, i * step:i * step + frame_length] for i in range(num)], 1) \
        if num else np.zeros([2, 0, frame_length])
    with tf.Graph().as_default():
        framed = S.frame(tf.constant(x), frame_length, step, pad_end=pad_end)
        added = S.overlap_and_add(framed, step)
        f, a = _run([framed, added])
    np.testing.assert_allclose(f, expected)
    total = np.zeros([2, max(0, (num - 1) * step + frame_length) if num else 0])
    for i in range(num):
        total[:, i * step:i * step + frame_length] += expected[:, i]
    np.testing.assert_allclose(a, total)


# -- stft --------------------------------------------------------------------------------------

STFT_REF = np.array([
    [-0.92045724, 1.40556133 - 1.27739596j, -1.07174349 + 0.91192931j,
     0.10804367 - 0.08868307j, 0.03673413],
    [1.20330191, -1.83747244 - 0.28434616j, 1.40107656 + 0.20299421j,
     -0.14124411 - 0.01974052j, -0.04802203],
    [-0.6526041, 0.99654293 + 1.64911818j, -0.75986606 - 1.17730093j,
     0.07660294 + 0.11448961j, 0.02604449]], np.complex64)


def test_stft_reference():
    out = S.stft(SINE, 8, 4)
    assert out.dtype == tf.complex64 and out.op.name.endswith("rfft")
    _close(out, STFT_REF)
    padded = S.stft(SINE, 6, 4, fft_length=8, pad_end=True)
    value = _close(padded, np.zeros([4, 5]) + _run(padded))
    np.testing.assert_allclose(value[3], [1.49828517, -0.38554722 - 1.27705431j,
                                          -0.74295557 + 0.54524612j,
                                          0.38554722 + 0.20885688j, -0.01237404], atol=1e-5)
    assert S.stft(tf.placeholder(tf.float32, [2, 100]), 20, 10).shape.as_list() == [2, 9, 17]


def test_inverse_stft_reference():
    _close(S.inverse_stft_window_fn(3)(8, tf.float32),
           [0.0, 0.14042343, 0.51095831, 0.87226039, 0.95887101, 0.87226039, 0.51095831,
            0.14042327])
    rebuilt = S.inverse_stft(S.stft(SINE, 8, 4), 8, 4, window_fn=S.inverse_stft_window_fn(4))
    value = _close(rebuilt, np.zeros(16) + _run(rebuilt))
    np.testing.assert_allclose(value[4:12], SINE[4:12], atol=1e-5)    # fully covered samples
    np.testing.assert_allclose(value[:3], [0.0, 0.02406227, 0.45464867], atol=1e-5)
    longer = S.inverse_stft(S.stft(SINE, 8, 4, fft_length=8), 10, 4)
    value = _close(longer, np.zeros(18) + _run(longer))
    np.testing.assert_allclose(value[:6], [0.0, 0.00057043, 0.02049435, 0.10120872, 0.20769344,
                                           0.2042264], atol=1e-5)


# -- mel, mfcc, dct ----------------------------------------------------------------------------

def test_mel_matrix_reference():
    expected = np.zeros([9, 4], np.float32)
    expected[1, :2] = [0.89565384, 0.10434615]
    expected[2, 1:3] = [0.86907822, 0.13092178]
    expected[3, 1:3] = [0.1091703, 0.89082968]
    expected[4, 2:] = [0.50557297, 0.49442706]
    expected[5, 2:] = [0.00482433, 0.99517566]
    expected[6, 3] = 0.57692438
    expected[7, 3] = 0.20334473
    out = S.linear_to_mel_weight_matrix(4, 9, 8000, 125.0, 3800.0)
    assert out.dtype == tf.float32
    _close(out, expected)
    assert S.linear_to_mel_weight_matrix().shape.as_list() == [129, 20]
    with pytest.raises(ValueError, match="Nyquist"):
        S.linear_to_mel_weight_matrix(4, 9, 8000, 125.0, 5000.0)
    with pytest.raises(ValueError, match="num_mel_bins"):
        S.linear_to_mel_weight_matrix(0)
    with pytest.raises(ValueError, match="lower_edge_hertz"):
        S.linear_to_mel_weight_matrix(lower_edge_hertz=4000.0, upper_edge_hertz=3000.0)


def test_dct_reference():
    _close(S.dct(X4), [20.0, -5.22625208, -2.82842684, 2.16478443])
    _close(S.dct(X4, norm="ortho"), [5.0, -1.84775913, -0.99999988, 0.76536685])
    _close(S.dct(X4, type=3), [12.64847183, -8.66939735, -0.64431095, 0.66523552])
    _close(S.dct(X4, type=3, norm="ortho"), [4.6183567, -2.91864824, -0.08135152, 0.38164306])
    _close(S.dct(X4, type=1), [16.0, -4.0, -2.0, 2.0])
    _close(S.dct(X4, n=6), [20.0, 5.27791691, -10.39230442, -2.82842684, 4.0, -0.37893772])
    _close(S.idct(X4, norm="ortho"), [4.6183567, -2.91864824, -0.08135152, 0.38164306])
    _close(S.mfccs_from_log_mel_spectrograms(X4[None]),
           [[7.07106781, -1.84775913, -0.99999988, 0.76536685]])
    assert tf.spectral.dct is S.dct


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 9), st.sampled_from([1, 2, 3]), st.sampled_from([None, "ortho"]))
def test_dct_matches_definition_and_idct_inverts(n, kind, norm):
    if kind == 1 and (norm or n < 2):
        return
    x = np.random.RandomState(n).randn(3, n)
    j, k = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")      # j: input, k: output
    if kind == 1:
        basis = 2 * np.cos(np.pi * j * k / (n - 1))
        basis[0], basis[-1] = 1, (-1.0) ** np.arange(n)
    elif kind == 2:
        basis = 2 * np.cos(np.pi * k * (2 * j + 1) / (2 * n))
        if norm:
            basis *= np.where(k == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))
    else:
        basis = 2 * np.cos(np.pi * j * (2 * k + 1) / (2 * n))
        basis[0] = 1
        if norm:
            basis *= np.where(j == 0, 1 / np.sqrt(n), np.sqrt(1 / (2 * n)))
    with tf.Graph().as_default():
        t = tf.constant(x)
        y = S.dct(t, type=kind, norm=norm)
        back = S.idct(y, type=kind, norm=norm)
        y_value, back_value = _run([y, back])
    np.testing.assert_allclose(y_value, x @ basis, atol=1e-9)
    if norm:
        np.testing.assert_allclose(back_value, x, atol=1e-9)
    else:
        scale = 2 * (n - 1) if kind == 1 else 2 * n
        np.testing.assert_allclose(back_value, x * scale, atol=1e-8)


def test_dct_errors():
    with pytest.raises(ValueError, match="Type-I"):
        S.dct(X4, type=1, norm="ortho")
    with pytest.raises(ValueError, match="Types"):
        S.dct(X4, type=5)
    with pytest.raises(ValueError, match="axis"):
        S.dct(X4, axis=0)
    with pytest.raises(TypeError, match="float32"):
        S.dct(np.ones(4, np.int32))
    with pytest.raises(ValueError, match="rank"):
        S.dct(tf.placeholder(tf.float32))


@pytest.mark.parametrize("kind,norm,n", [(1, None, None), (2, None, None), (2, "ortho", None),
                                         (3, None, None), (3, "ortho", 7), (2, None, 3)])
def test_dct_with_unknown_length_matches_static(kind, norm, n):
    x = np.random.RandomState(kind).randn(2, 5)
    p = tf.placeholder(tf.float64, [None, None])
    dynamic = S.dct(p, type=kind, norm=norm, n=n)
    static = S.dct(tf.constant(x), type=kind, norm=norm, n=n)
    if n is not None:
        assert dynamic.shape.as_list() == [None, n]
    d, s = _run([dynamic, static], {p: x})
    np.testing.assert_allclose(d, s, atol=1e-12)
    mfcc = S.mfccs_from_log_mel_spectrograms(p)
    np.testing.assert_allclose(_run(mfcc, {p: x}),
                               _run(S.mfccs_from_log_mel_spectrograms(tf.constant(x))),
                               atol=1e-12)


# -- gradients ---------------------------------------------------------------------------------

def _gradient_error(fn, shape, seed=0):
    x = tf.placeholder(tf.float64, shape)
    y = fn(x)
    if y.dtype.is_complex:
        y = tf.real(y) + 0.5 * tf.imag(y)
    value = np.random.RandomState(seed).uniform(-1, 1, shape)
    with tf.Session():
        return tf.test.compute_gradient_error(x, shape, y, y.shape.as_list(), x_init_value=value,
                                              delta=1e-6)


@pytest.mark.parametrize("fn,shape", [
    (lambda x: S.frame(x, 3, 2, pad_end=True), [2, 6]),
    (lambda x: S.overlap_and_add(x, 2), [2, 3, 4]),
    (lambda x: S.stft(x, 6, 3), [12]),
    (lambda x: S.inverse_stft(tf.complex(x, x * 0.5), 6, 3, fft_length=8), [3, 5]),
    (lambda x: S.dct(x, norm="ortho"), [2, 5]),
    (lambda x: S.dct(x, type=3), [5]),
    (lambda x: S.dct(x, type=1), [4]),
    (lambda x: S.mfccs_from_log_mel_spectrograms(x), [2, 6]),
], ids=["frame", "overlap_and_add", "stft", "inverse_stft", "dct2", "dct3", "dct1", "mfcc"])
def test_gradients_flow(fn, shape):
    assert _gradient_error(fn, shape) < 1e-6
