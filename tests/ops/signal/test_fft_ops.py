"""FFT ops (FFT/IFFT/RFFT/IRFFT in 1-3 D) against numpy.fft, shapes, errors and gradients."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
RNG = np.random.RandomState(0)
C1 = (RNG.randn(3, 8) + 1j * RNG.randn(3, 8)).astype(np.complex64)
C3 = RNG.randn(2, 3, 4, 5) + 1j * RNG.randn(2, 3, 4, 5)
R1 = RNG.randn(2, 7).astype(np.float32)
R3 = RNG.randn(2, 4, 3, 6)
H1 = np.fft.rfft(RNG.randn(2, 8))
H2 = np.fft.rfftn(RNG.randn(3, 5, 6), axes=(-2, -1)).astype(np.complex64)


ROWS = [
    Row("FFT", lambda: tf.fft(C1), np.fft.fft(C1).astype(np.complex64)),
    Row("IFFT", lambda: tf.ifft(C3), np.fft.ifft(C3)),
    Row("FFT2D", lambda: tf.fft2d(C3), np.fft.fft2(C3)),
    Row("IFFT2D", lambda: tf.signal.ifft2d(C1), np.fft.ifft2(C1).astype(np.complex64)),
    Row("FFT3D", lambda: tf.spectral.fft3d(C3), np.fft.fftn(C3, axes=(-3, -2, -1))),
    Row("IFFT3D", lambda: tf.ifft3d(C3), np.fft.ifftn(C3, axes=(-3, -2, -1))),
    Row("RFFT", lambda: tf.signal.rfft(R1), np.fft.rfft(R1).astype(np.complex64)),
    Row("RFFT", lambda: tf.signal.rfft(R1, [4]), np.fft.rfft(R1, 4).astype(np.complex64)),
    Row("RFFT", lambda: tf.signal.rfft(R1, [10]), np.fft.rfft(R1, 10).astype(np.complex64)),
    Row("IRFFT", lambda: tf.signal.irfft(tf.constant(H1)), np.fft.irfft(H1)),
    Row("IRFFT", lambda: tf.signal.irfft(tf.constant(H1), [7]), np.fft.irfft(H1, 7)),
    Row("IRFFT", lambda: tf.spectral.irfft(tf.constant(H1), [3]), np.fft.irfft(H1, 3)),
    Row("RFFT2D", lambda: tf.signal.rfft2d(tf.constant(R3), [3, 4]),
        np.fft.rfftn(R3, s=[3, 4], axes=(-2, -1))),
    Row("IRFFT2D", lambda: tf.signal.irfft2d(H2),
        np.fft.irfftn(H2, axes=(-2, -1)).astype(np.float32)),
    Row("IRFFT2D", lambda: tf.signal.irfft2d(H2, [6, 9]),
        np.fft.irfftn(H2, s=[6, 9], axes=(-2, -1)).astype(np.float32)),
    Row("RFFT3D", lambda: tf.signal.rfft3d(tf.constant(R3)),
        np.fft.rfftn(R3, axes=(-3, -2, -1))),
    Row("IRFFT3D", lambda: tf.signal.irfft3d(
        tf.constant(np.fft.rfftn(R3, axes=(-3, -2, -1))), [4, 3, 6]), R3),
]

COVERED_OPS = {row.op for row in ROWS}


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    out = row.build()
    assert out.op.type == row.op
    value = _run(out)
    expected = np.asarray(row.expected)
    assert out.shape.is_compatible_with(value.shape), (out.shape, value.shape)
    assert out.shape.as_list() == list(value.shape)
    assert value.dtype == out.dtype.as_numpy_dtype == expected.dtype
    tol = 1e-4 if value.dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(value, expected, rtol=tol, atol=tol)


def test_dtypes_and_names():
    x64 = tf.constant(R3)
    assert tf.signal.rfft(x64).op.name == "rfft"
    assert tf.fft(C1).op.name == "FFT"
    assert tf.signal.irfft2d(H2, name="inv").op.name == "inv"
    assert tf.signal.rfft(x64).dtype == tf.complex128
    assert tf.signal.rfft([1.0, 2.0]).dtype == tf.complex64
    # As in TF, NumPy float64 / complex128 values convert to the preferred 32-bit types.
    assert tf.signal.rfft(R3).dtype == tf.complex64
    assert tf.signal.irfft(H1).dtype == tf.float32
    assert tf.signal.irfft(tf.constant(H1)).dtype == tf.float64
    op = tf.signal.rfft(x64, [8]).op
    assert op.get_attr("Treal") == tf.float64 and op.get_attr("Tcomplex") == tf.complex128


def test_irfft_ignores_dc_and_nyquist_imaginary_parts():
    # Reference TF 2.21: irfft([1+2j, 3+1j, 2+5j]) -> [2.25, -0.75, -0.75, 0.25].
    out = _run(tf.signal.irfft(tf.constant([1 + 2j, 3 + 1j, 2 + 5j], tf.complex64)))
    np.testing.assert_allclose(out, [2.25, -0.75, -0.75, 0.25], atol=1e-6)


def test_dynamic_shapes():
    p = tf.placeholder(tf.float32, [None, None])
    spectrum = tf.signal.rfft(p)
    assert spectrum.shape.as_list() == [None, None]
    back = tf.signal.irfft(spectrum)
    x = RNG.randn(3, 6).astype(np.float32)
    s, b = _run([spectrum, back], {p: x})
    np.testing.assert_allclose(s, np.fft.rfft(x), atol=1e-5)
    np.testing.assert_allclose(b, x, atol=1e-5)
    n = tf.placeholder(tf.int32, [1])
    assert tf.signal.rfft(tf.zeros([2, 5]), n).shape.as_list() == [2, None]
    np.testing.assert_allclose(_run(tf.signal.rfft(x, n), {n: [4]}), np.fft.rfft(x, 4),
                               atol=1e-5)


def test_empty_and_errors():
    assert _run(tf.fft(np.zeros([2, 0], np.complex64))).shape == (2, 0)
    with pytest.raises(TypeError, match="complex64"):
        tf.fft(tf.constant([1.0]))
    with pytest.raises(ValueError, match="RFFT requires"):
        tf.signal.rfft(tf.constant([1 + 1j]))
    with pytest.raises(ValueError, match="rank"):
        tf.fft2d(C1[0])
    with pytest.raises(ValueError, match="fft_length"):
        tf.signal.rfft2d(R3, [4])
    n = tf.placeholder(tf.int32, [None])
    with pytest.raises(errors.InvalidArgumentError, match="fft_length"):
        _run(tf.signal.rfft(R1, n), {n: [2, 3]})


def test_shift():
    x = np.arange(15).reshape(3, 5)
    np.testing.assert_array_equal(_run(tf.signal.fftshift(x)), np.fft.fftshift(x))
    np.testing.assert_array_equal(_run(tf.signal.ifftshift(x)), np.fft.ifftshift(x))
    np.testing.assert_array_equal(_run(tf.signal.fftshift(x, axes=1)), np.fft.fftshift(x, 1))
    np.testing.assert_array_equal(_run(tf.signal.ifftshift(x, axes=[0])),
                                  np.fft.ifftshift(x, 0))
    assert tf.signal.fftshift(x).op.name.startswith("fftshift")


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.lists(st.integers(1, 5), min_size=3, max_size=4),
       st.integers(1, 9))
def test_round_trips_match_numpy(rank, shape, last):
    axes = tuple(range(-rank, 0))
    length = list(shape[-rank:-1]) + [last]
    with tf.Graph().as_default():
        x = tf.constant(np.random.RandomState(len(shape)).randn(*shape))
        forward = getattr(tf.signal, "rfft" + ("", "2d", "3d")[rank - 1])(x, length)
        inverse = getattr(tf.signal, "irfft" + ("", "2d", "3d")[rank - 1])(forward, length)
        full = getattr(tf.signal, "fft" + ("", "2d", "3d")[rank - 1])(tf.cast(x, tf.complex128))
        f, i, c, x = _run([forward, inverse, full, x])
    np.testing.assert_allclose(f, np.fft.rfftn(x, s=length, axes=axes), atol=1e-9)
    np.testing.assert_allclose(i, np.fft.irfftn(f, s=length, axes=axes), atol=1e-9)
    np.testing.assert_allclose(c, np.fft.fftn(x, axes=axes), atol=1e-9)


def test_gradients_with_unknown_shapes_match_static_ones():
    x = RNG.randn(2, 5)
    spectrum = RNG.randn(2, 3) + 1j * RNG.randn(2, 3)
    results = []
    for shape in ([2, 5], [None, None]):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float64, shape)
            q = tf.placeholder(tf.complex128, [2, 3] if shape[0] else [None, None])
            forward = tf.signal.rfft(p, [8])
            inverse = tf.signal.irfft(q, [3])
            loss = tf.reduce_sum(tf.real(forward) * 0.3 + tf.imag(forward)) + \
                tf.reduce_sum(inverse * inverse)
            results.append(_run(tf.gradients(loss, [p, q]), {p: x, q: spectrum}))
    for static, dynamic in zip(*results):
        np.testing.assert_allclose(dynamic, static, atol=1e-12)


# -- gradients -----------------------------------------------------------------------------------

def _complex_case(fn, shape, seed=0):
    """fn(tf, complex_x) -> complex y; the loss sees Re(y) + 0.6 Im(y)."""

    def build(tf):
        rng = np.random.RandomState(seed)
        re, im = tf.placeholder(tf.float64, shape), tf.placeholder(tf.float64, shape)
        y = fn(tf, tf.complex(re, im))
        if y.dtype.is_complex:
            y = tf.real(y) + 0.6 * tf.imag(y)
        return y, [re, im], [rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)]

    return build


def _real_case(fn, shape, seed=0):
    def build(tf):
        x = tf.placeholder(tf.float64, shape)
        y = fn(tf, x)
        return tf.real(y) + 0.6 * tf.imag(y), [x], [
            np.random.RandomState(seed).uniform(-1, 1, shape)]

    return build


GRADIENT_CASES = [
    ("FFT", _complex_case(lambda tf, x: tf.fft(x), [2, 4])),
    ("IFFT", _complex_case(lambda tf, x: tf.ifft(x), [3])),
    ("FFT2D", _complex_case(lambda tf, x: tf.fft2d(x), [2, 3])),
    ("IFFT2D", _complex_case(lambda tf, x: tf.ifft2d(x), [2, 2])),
    ("FFT3D", _complex_case(lambda tf, x: tf.fft3d(x), [2, 1, 2])),
    ("IFFT3D", _complex_case(lambda tf, x: tf.ifft3d(x), [1, 2, 3])),
    ("RFFT", _real_case(lambda tf, x: tf.signal.rfft(x), [2, 5])),
    ("RFFT", _real_case(lambda tf, x: tf.signal.rfft(x, [6]), [4])),
    ("RFFT", _real_case(lambda tf, x: tf.signal.rfft(x, [3]), [5])),
    ("IRFFT", _complex_case(lambda tf, x: tf.signal.irfft(x), [2, 4])),
    ("IRFFT", _complex_case(lambda tf, x: tf.signal.irfft(x, [5]), [3])),
    ("IRFFT", _complex_case(lambda tf, x: tf.signal.irfft(x, [4]), [4])),
    ("IRFFT", _complex_case(lambda tf, x: tf.signal.irfft(x, [6]), [2])),
    ("RFFT2D", _real_case(lambda tf, x: tf.signal.rfft2d(x, [3, 4]), [2, 3])),
    ("IRFFT2D", _complex_case(lambda tf, x: tf.signal.irfft2d(x, [2, 4]), [3, 3])),
    ("RFFT3D", _real_case(lambda tf, x: tf.signal.rfft3d(x), [2, 2, 3])),
    ("IRFFT3D", _complex_case(lambda tf, x: tf.signal.irfft3d(x, [2, 2, 3]), [2, 2, 2])),
]
