"""tf.image metrics and filters (total_variation, psnr, ssim, ssim_multiscale, sobel_edges,
image_gradients, YUV/YIQ) against NumPy references and values recorded from TensorFlow 2.21.
They compose existing ops, so there is no op table here; gradients are checked end to end."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf

RNG = np.random.RandomState(3)
A = RNG.uniform(0, 1, (2, 13, 14, 3)).astype(np.float32)
B = np.clip(A + RNG.normal(0, 0.1, A.shape), 0, 1).astype(np.float32)
BIG1 = RNG.uniform(0, 1, (1, 181, 177, 2)).astype(np.float32)
BIG2 = np.clip(BIG1 + RNG.normal(0, 0.2, BIG1.shape), 0, 1).astype(np.float32)
A8, B8 = (A * 255).astype(np.uint8), (B * 255).astype(np.uint8)

# Recorded from TensorFlow 2.21 on the arrays above.
TF_VALUES = {
    "tv3": 329.1355895996094,
    "tv4": [329.1355895996094, 324.0931396484375],
    "psnr": [20.3646297454834, 20.448320388793945],
    "psnr_u8": [20.36731719970703, 20.442890167236328],
    "ssim": [0.9370923042297363, 0.9474785923957825],
    "ssim_u8": [0.9372792840003967, 0.9474931359291077],
    "ssim_small": [0.9282934069633484, 0.9434647560119629],
    "ms": [0.8481485843658447],
    "ms3": [0.9489812254905701, 0.9322538375854492],
}


def test_matches_tensorflow():
    out = {
        "tv3": tf.image.total_variation(A[0]), "tv4": tf.image.total_variation(A),
        "psnr": tf.image.psnr(A, B, 1.0), "psnr_u8": tf.image.psnr(A8, B8, 255),
        "ssim": tf.image.ssim(A, B, 1.0), "ssim_u8": tf.image.ssim(A8, B8, 255),
        "ssim_small": tf.image.ssim(A, B, 1.0, filter_size=5, filter_sigma=0.8, k1=0.02,
                                    k2=0.05),
        "ms": tf.image.ssim_multiscale(BIG1, BIG2, 1.0),
        "ms3": tf.image.ssim_multiscale(A, B, 1.0, power_factors=(0.3, 0.7), filter_size=3),
    }
    values = run(out)
    for key, want in TF_VALUES.items():
        assert out[key].shape.is_compatible_with(np.shape(want)), key
        assert values[key].dtype == np.float32, key
        np.testing.assert_allclose(values[key], want, rtol=1e-5, err_msg=key)


def test_total_variation_reference_and_gradient():
    x = np.random.RandomState(0).randn(2, 4, 5, 3)
    want = (np.abs(np.diff(x, axis=1)).sum(axis=(1, 2, 3))
            + np.abs(np.diff(x, axis=2)).sum(axis=(1, 2, 3)))
    placeholder = tf.placeholder(tf.float64, [None, None, None, 3])
    tv = tf.image.total_variation(placeholder)
    value, grad = run([tv, tf.gradients(tf.reduce_sum(tv), placeholder)[0]], {placeholder: x})
    np.testing.assert_allclose(value, want)
    sign = np.zeros_like(x)
    for axis in (1, 2):
        d = np.sign(np.diff(x, axis=axis))
        pad = [(0, 0)] * 4
        pad[axis] = (1, 0)
        sign += np.pad(d, pad)
        pad[axis] = (0, 1)
        sign -= np.pad(d, pad)
    np.testing.assert_allclose(grad, sign)
    with pytest.raises(ValueError, match="3 or 4"):
        tf.image.total_variation(np.zeros((3, 3)))


def test_psnr_formula_and_identical_images():
    mse = np.mean((A.astype(np.float64) - B) ** 2, axis=(1, 2, 3))
    np.testing.assert_allclose(run(tf.image.psnr(A, B, 1.0)), 10 * np.log10(1 / mse),
                               rtol=1e-5)
    assert np.isinf(run(tf.image.psnr(A, A, 1.0))).all()


def test_ssim_identity_symmetry_and_gradient():
    np.testing.assert_allclose(run(tf.image.ssim(A, A, 1.0)), 1.0, rtol=1e-6)
    np.testing.assert_allclose(run(tf.image.ssim(A, B, 1.0)), run(tf.image.ssim(B, A, 1.0)),
                               rtol=1e-6)
    x = tf.placeholder(tf.float32, A.shape)
    loss = tf.reduce_sum(tf.image.ssim(x, B, 1.0))
    grad = run(tf.gradients(loss, x)[0], {x: A})
    # a small step along the gradient raises SSIM by about |grad|^2 * step
    step = 1e-3 / np.abs(grad).max()
    before, after = run(loss, {x: A}), run(loss, {x: A + step * grad})
    np.testing.assert_allclose(after - before, step * np.sum(grad.astype(np.float64) ** 2),
                               rtol=0.05)
    with pytest.raises(ValueError, match="filter_size"):
        tf.image.ssim(A[:, :5], B[:, :5], 1.0)


def test_sobel_edges_reference():
    x = np.random.RandomState(1).randn(2, 5, 6, 2)
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    want = np.zeros(x.shape + (2,))
    for k, kernel in enumerate((ky, ky.T)):
        for i in range(3):
            for j in range(3):
                want[..., k] += kernel[i, j] * padded[:, i:i + 5, j:j + 6]
    out = tf.image.sobel_edges(tf.constant(x))
    assert out.shape.as_list() == [2, 5, 6, 2, 2] and out.dtype == tf.float64
    np.testing.assert_allclose(run(out), want, atol=1e-12)


def test_image_gradients():
    x = np.random.RandomState(2).randn(2, 3, 4, 2).astype(np.float32)
    dy, dx = tf.image.image_gradients(x)
    assert dy.shape.as_list() == dx.shape.as_list() == [2, 3, 4, 2]
    got_dy, got_dx = run([dy, dx])
    np.testing.assert_array_equal(got_dy, np.pad(np.diff(x, axis=1), [(0, 0), (0, 1), (0, 0),
                                                                      (0, 0)]))
    np.testing.assert_array_equal(got_dx, np.pad(np.diff(x, axis=2), [(0, 0), (0, 0), (0, 1),
                                                                      (0, 0)]))
    with pytest.raises(ValueError, match="4D"):
        tf.image.image_gradients(x[0])


@pytest.mark.parametrize("forward,backward,y_row", [
    (tf.image.rgb_to_yiq, tf.image.yiq_to_rgb, [0.299, 0.587, 0.114]),
    (tf.image.rgb_to_yuv, tf.image.yuv_to_rgb, [0.299, 0.587, 0.114]),
])
def test_color_round_trips(forward, backward, y_row):
    x = tf.placeholder(tf.float64, [None, None, 3])
    value = np.random.RandomState(4).uniform(0, 1, (3, 5, 3))
    converted, back = run([forward(x), backward(forward(x))], {x: value})
    # luma is the standard weighted sum; the round trip is the identity
    np.testing.assert_allclose(converted[..., 0], value @ np.array(y_row), atol=1e-12)
    np.testing.assert_allclose(back, value, atol=2e-4)  # TF's matrices are rounded inverses
    # grays have no chroma
    gray = run(forward(np.full((2, 3), 0.4)))
    np.testing.assert_allclose(gray[:, 1:], 0, atol=1e-4)
    with pytest.raises(ValueError, match="3 channels"):
        forward(np.zeros((2, 4)))


def test_color_matches_tensorflow_pixel():
    # Recorded from TensorFlow 2.21 for the pixel [0.2, 0.5, 0.9].
    pixel = np.array([0.2, 0.5, 0.9], np.float32)
    np.testing.assert_allclose(run(tf.image.rgb_to_yiq(pixel)), [0.4559, -0.3073077, 0.0610115],
                               atol=1e-6)
    np.testing.assert_allclose(run(tf.image.rgb_to_yuv(pixel)), [0.4559, 0.2185465, -0.2244967],
                               atol=1e-6)


def test_unknown_shape_images_give_the_static_results():
    a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    fed = {a: A, b: B}
    for fn in (tf.image.ssim, tf.image.psnr):
        static = run(fn(tf.constant(A), tf.constant(B), 1.0))
        np.testing.assert_allclose(run(fn(a, b, 1.0), fed), static, rtol=1e-6)
    big = {a: BIG1, b: BIG2}
    np.testing.assert_allclose(run(tf.image.ssim_multiscale(a, b, 1.0), big),
                               run(tf.image.ssim_multiscale(BIG1, BIG2, 1.0)), rtol=1e-5)


def test_image_rank_checks_static_and_at_run_time():
    with pytest.raises(ValueError, match="rank at least 3"):
        tf.image.ssim(tf.ones([20, 20]), tf.ones([20, 20]), 1.0)
    a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    for fn in (tf.image.ssim, tf.image.psnr):
        with pytest.raises(tf.errors.InvalidArgumentError, match="at least 3 dimensions"):
            run(fn(a, b, 1.0), {a: np.ones(4), b: np.ones(4)})
