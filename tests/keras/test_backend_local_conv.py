"""tf.keras.backend.local_conv1d / local_conv2d against a NumPy loop and LocallyConnected."""

import numpy as np
import pytest

import tensorflux as tf

K = tf.keras.backend
rng = np.random.RandomState(3)


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as session:
        yield session


def _numpy_local(x, kernel, ksize, strides, out_shape, channels_first):
    """Direct loop: out[b, pos, f] = sum(patch(b, pos) * kernel[pos, :, f])."""
    batch = x.shape[0]
    out = np.zeros((batch,) + tuple(out_shape) + (kernel.shape[-1],), np.float64)
    for p, pos in enumerate(np.ndindex(*out_shape)):
        window = tuple(slice(i * s, i * s + k) for i, s, k in zip(pos, strides, ksize))
        if channels_first:
            patch = x[(slice(None), slice(None)) + window]
        else:
            patch = x[(slice(None),) + window + (slice(None),)]
        out[(slice(None),) + pos] = patch.reshape(batch, -1) @ kernel[p]
    if channels_first:
        out = np.moveaxis(out, -1, 1)
    return out


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("length,ksize,stride", [(7, 3, 1), (8, 2, 3), (5, 5, 1)])
def test_local_conv1d_matches_loop(sess, data_format, length, ksize, stride):
    channels, filters = 3, 4
    out_len = (length - ksize) // stride + 1
    shape = (2, length, channels) if data_format == "channels_last" else (2, channels, length)
    x = rng.randn(*shape).astype(np.float32)
    kernel = rng.randn(out_len, ksize * channels, filters).astype(np.float32)
    y = K.local_conv1d(tf.constant(x), tf.constant(kernel), (ksize,), (stride,), data_format)
    want = _numpy_local(x.astype(np.float64), kernel.astype(np.float64), (ksize,), (stride,),
                        (out_len,), data_format == "channels_first")
    got = sess.run(y)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_local_conv2d_matches_loop(sess, data_format):
    channels, filters, ksize, strides = 2, 3, (2, 3), (2, 1)
    rows, cols = 5, 6
    out_shape = ((rows - 2) // 2 + 1, (cols - 3) // 1 + 1)
    shape = ((3, rows, cols, channels) if data_format == "channels_last"
             else (3, channels, rows, cols))
    x = rng.randn(*shape).astype(np.float32)
    kernel = rng.randn(out_shape[0] * out_shape[1], 6 * channels, filters).astype(np.float32)
    y = K.local_conv2d(tf.constant(x), tf.constant(kernel), ksize, strides, out_shape,
                       data_format)
    want = _numpy_local(x.astype(np.float64), kernel.astype(np.float64), ksize, strides,
                        out_shape, data_format == "channels_first")
    np.testing.assert_allclose(sess.run(y), want, rtol=1e-5, atol=1e-5)


def test_local_conv2d_equals_locally_connected_layer(sess):
    layer = tf.keras.layers.LocallyConnected2D(4, (3, 2), strides=(1, 2))
    x = tf.constant(rng.randn(2, 6, 7, 3).astype(np.float32))
    want = layer(x)
    y = K.local_conv2d(x, layer.kernel, (3, 2), (1, 2), layer.output_sizes, "channels_last")
    sess.run(tf.global_variables_initializer())
    bias = sess.run(layer.bias)
    got, ref = sess.run([y, want])
    np.testing.assert_allclose(got + bias, ref, rtol=1e-5, atol=1e-5)


def test_local_conv_errors(sess):
    x = tf.constant(np.zeros((1, 4, 2), np.float32))
    with pytest.raises(ValueError, match="Unknown data_format"):
        K.local_conv1d(x, tf.constant(np.zeros((2, 6, 1), np.float32)), (3,), (1,), "nhwc")
    with pytest.raises(ValueError, match="positions"):
        K.local_conv2d(tf.constant(np.zeros((1, 4, 4, 1), np.float32)),
                       tf.constant(np.zeros((3, 4, 1), np.float32)), (2, 2), (2, 2), (2, 2))
    with pytest.raises(ValueError, match="kernel"):
        K.local_conv1d(x, tf.constant(np.zeros((2, 6), np.float32)), (3,), (1,))
