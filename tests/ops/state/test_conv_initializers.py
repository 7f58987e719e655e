"""Orthogonal convolution-kernel initializers: isometry of circular convolutions (NumPy),
centre taps, seeds and errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib import framework as contrib_framework
from tensorflux.ops.state import conv_initializers as conv_init


def _kernel(init, shape):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(init(shape))


def _circular_conv(x, kernel):
    """out[p, o] = sum_{taps j, i} x[(p + j) mod size, i] * kernel[j, i, o], any rank."""
    spatial = kernel.shape[:-2]
    out = np.zeros(x.shape[:-1] + (kernel.shape[-1],))
    for tap in np.ndindex(*spatial):
        shifted = np.roll(x, shift=[-t for t in tap], axis=tuple(range(len(spatial))))
        out += shifted @ kernel[tap]
    return out


@pytest.mark.parametrize("init_cls,shape,grid", [
    (conv_init.convolutional_orthogonal_1d, [3, 4, 6], (9,)),
    (conv_init.convolutional_orthogonal_1d, [4, 5, 5], (11,)),
    (conv_init.convolutional_orthogonal_2d, [2, 3, 3, 4], (6, 7)),
    (conv_init.convolutional_orthogonal_3d, [2, 2, 2, 2, 4], (4, 5, 3)),
    (conv_init.convolutional_delta_orthogonal, [3, 3, 4, 6], (5, 6)),
])
def test_circular_convolution_scales_norms_by_gain(init_cls, shape, grid):
    kernel = _kernel(init_cls(gain=1.7, seed=5, dtype=tf.float64), shape)
    assert kernel.shape == tuple(shape) and kernel.dtype == np.float64
    rng = np.random.RandomState(0)
    for _ in range(3):
        x = rng.normal(size=grid + (shape[-2],))
        ratio = np.linalg.norm(_circular_conv(x, kernel)) / np.linalg.norm(x)
        np.testing.assert_allclose(ratio, 1.7, rtol=1e-9)


def test_taps_sum_to_a_scaled_matrix_with_orthonormal_rows():
    kernel = _kernel(conv_init.convolutional_orthogonal_2d(gain=0.5, seed=1), [3, 2, 3, 5])
    total = kernel.sum(axis=(0, 1))
    np.testing.assert_allclose(total @ total.T, 0.25 * np.eye(3), atol=1e-5)


def test_delta_kernel_is_zero_off_centre():
    kernel = _kernel(conv_init.convolutional_delta_orthogonal(seed=2), [3, 5, 4, 4])
    centre = kernel[1, 2]
    np.testing.assert_allclose(centre @ centre.T, np.eye(4), atol=1e-5)
    rest = kernel.copy()
    rest[1, 2] = 0
    assert not rest.any()


def test_seeds_repeat_and_unseeded_calls_differ():
    a = _kernel(conv_init.convolutional_orthogonal_1d(seed=7), [3, 4, 4])
    b = _kernel(conv_init.convolutional_orthogonal_1d(seed=7), [3, 4, 4])
    c = _kernel(conv_init.convolutional_orthogonal_1d(seed=8), [3, 4, 4])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    with tf.Graph().as_default(), tf.Session() as sess:
        init = conv_init.convolutional_orthogonal_1d()
        first, second = sess.run([init([3, 4, 4]), init([3, 4, 4])])
    assert not np.allclose(first, second)


def test_get_variable_accepts_the_class_and_contrib_names():
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.get_variable("k", shape=[3, 3, 2, 2],
                            initializer=conv_init.convolutional_orthogonal_2d)
        sess.run(v.initializer)
        total = sess.run(v).sum(axis=(0, 1))
    assert abs(abs(np.linalg.det(total)) - 1.0) < 1e-5
    assert contrib_framework.convolutional_orthogonal_3d is conv_init.ConvolutionOrthogonal3D


@pytest.mark.parametrize("init_cls,bad_shape", [
    (conv_init.convolutional_orthogonal_1d, [3, 6, 5]),
    (conv_init.convolutional_orthogonal_1d, [3, 3, 4, 4]),
    (conv_init.convolutional_orthogonal_2d, [3, 3, 6, 5]),
    (conv_init.convolutional_orthogonal_3d, [3, 3, 4, 4]),
    (conv_init.convolutional_delta_orthogonal, [3, 3, 6, 5]),
    (conv_init.convolutional_delta_orthogonal, [4, 4]),
])
def test_bad_shapes_and_dtypes_raise_value_error(init_cls, bad_shape):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank|In_filters"):
            init_cls()(bad_shape)
    with pytest.raises(ValueError, match="floating point"):
        init_cls(dtype=tf.string)
