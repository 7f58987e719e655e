"""tf.contrib.layers.instance_norm: per-example, per-channel moments vs NumPy."""

import numpy as np
import pytest

import tensorflux as tf

layers = tf.contrib.layers
RNG = np.random.RandomState(11)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _ref(x, axes, eps, gamma=1.0, beta=0.0):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_nhwc_matches_numpy_and_creates_beta_gamma():
    x = RNG.randn(3, 5, 4, 2).astype(np.float32) * 3 + 1
    y = layers.instance_norm(tf.constant(x))
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["InstanceNorm/beta", "InstanceNorm/gamma"]
    assert [v.shape.as_list() for v in tf.trainable_variables()] == [[2], [2]]
    assert y.shape.as_list() == [3, 5, 4, 2]
    np.testing.assert_allclose(_run(y), _ref(x, (1, 2), 1e-6), rtol=1e-4, atol=1e-5)


def test_nchw_uses_axis_1_as_channels():
    x = RNG.randn(2, 3, 4, 5).astype(np.float32)
    init = {"gamma": tf.constant_initializer([1.0, 2.0, 0.5]),
            "beta": tf.constant_initializer([0.0, -1.0, 3.0])}
    y = layers.instance_norm(tf.constant(x), data_format="NCHW", epsilon=0.01,
                             param_initializers=init)
    gamma = np.array([1.0, 2.0, 0.5]).reshape(1, 3, 1, 1)
    beta = np.array([0.0, -1.0, 3.0]).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(_run(y), _ref(x, (2, 3), 0.01, gamma, beta), rtol=1e-4,
                               atol=1e-5)


def test_rank3_no_params_activation_and_unknown_batch():
    x = RNG.randn(4, 7, 3).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, 7, 3])
    y = layers.instance_norm(ph, center=False, scale=False, activation_fn=tf.nn.relu,
                             scope="inorm")
    assert tf.global_variables() == []
    assert y.shape.as_list() == [None, 7, 3]
    np.testing.assert_allclose(_run(y, {ph: x}), np.maximum(_ref(x, (1,), 1e-6), 0),
                               rtol=1e-4, atol=1e-5)


def test_gradient_of_normalized_output_matches_finite_differences():
    x = RNG.randn(2, 3, 3, 2)
    xt = tf.constant(x)
    y = layers.instance_norm(xt, center=False, scale=False)
    w = RNG.randn(*x.shape)
    g = tf.gradients(tf.reduce_sum(y * w), xt)[0]
    got = _run(g)
    eps = 1e-6
    num = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = ((_ref(xp, (1, 2), 1e-6) * w).sum() - (_ref(xm, (1, 2), 1e-6) * w).sum()) / (
            2 * eps)
    np.testing.assert_allclose(got, num, rtol=1e-4, atol=1e-6)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="data_format"):
        layers.instance_norm(tf.ones([2, 3, 3, 1]), data_format="NDHWC")
    with pytest.raises(ValueError, match="undefined channels"):
        layers.instance_norm(tf.placeholder(tf.float32, [2, 3, None]))
    with pytest.raises(ValueError, match="undefined rank"):
        layers.instance_norm(tf.placeholder(tf.float32))


def test_arg_scope_normalizer_fn_in_conv2d():
    x = RNG.randn(2, 6, 6, 1).astype(np.float32)
    with tf.contrib.framework.arg_scope([layers.conv2d], normalizer_fn=layers.instance_norm,
                                        normalizer_params={"epsilon": 1e-3}):
        y = layers.conv2d(tf.constant(x), 2, [3, 3], activation_fn=None,
                          weights_initializer=tf.ones_initializer())
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["Conv/InstanceNorm/beta", "Conv/InstanceNorm/gamma", "Conv/weights"]
    pad = np.pad(x[..., 0], ((0, 0), (1, 1), (1, 1)))
    conv = np.stack([sum(pad[:, i:i + 6, j:j + 6] for i in range(3) for j in range(3))] * 2, -1)
    np.testing.assert_allclose(_run(y), _ref(conv, (1, 2), 1e-3), rtol=1e-4, atol=1e-4)
