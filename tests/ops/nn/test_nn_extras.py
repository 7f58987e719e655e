"""Composite tf.nn functions: conv_transpose, atrous_conv2d_transpose, with_space_to_batch,
required_space_to_batch_paddings, depthwise backprop aliases, batch_norm_with_global_normalization.
"""

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.nn import conv_composites as nn_extras

COVERED_OPS = {"BatchNormWithGlobalNormalization", "BatchNormWithGlobalNormalizationGrad"}


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def _checksum(value):
    value = np.asarray(value)
    return float(np.sum(value * np.cos(np.arange(value.size)).reshape(value.shape)))


def test_matches_tensorflow():
    """Cos-weighted checksums of the same computations in TF (tf.compat.v1)."""
    rng = np.random.RandomState(0)
    x = rng.randn(2, 5, 6, 3)
    w = rng.randn(3, 3, 4, 3)
    outs = []
    for rate, pad, shape in [(2, "SAME", [2, 5, 6, 4]), (3, "VALID", [2, 11, 12, 4]),
                             (1, "SAME", [2, 5, 6, 4]), (2, "VALID", [2, 9, 10, 4])]:
        xi = x if pad == "SAME" else rng.randn(2, shape[1] - 2 * rate, shape[2] - 2 * rate, 3)
        outs.append(tf.nn.atrous_conv2d_transpose(xi, w, shape, rate, pad))
    outs.append(tf.nn.conv_transpose(x, w, [2, 10, 12, 4], strides=2))
    outs.append(tf.nn.conv_transpose(x[:, 0], w[0], [2, 13, 4], strides=[2], padding="VALID"))
    x3, w3 = rng.randn(1, 3, 4, 2, 3), rng.randn(2, 2, 2, 4, 3)
    outs.append(tf.nn.conv_transpose(x3, w3, [1, 6, 8, 4, 4], strides=[1, 2, 2, 2, 1]))
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [2, 1]])
    f = tf.constant(rng.randn(3, 3, 3, 2))
    for pad, rates in [("SAME", [2, 2]), ("VALID", [2, 1]), ("SAME", [1, 1])]:
        outs.append(tf.nn.with_space_to_batch(
            x, rates, pad, lambda t, n, p: tf.nn.conv2d(t, f, [1, 1, 1, 1], p),
            filter_shape=[3, 3]))
    m, v, b, g = rng.randn(3), rng.rand(3) + 0.5, rng.randn(3), rng.randn(3)
    outs.append(tf.nn.batch_norm_with_global_normalization(x, m, v, b, g, 1e-3, True))
    outs.append(tf.nn.batch_norm_with_global_normalization(x, m, v, b, g, 1e-3, False))
    values = _run(outs + [paddings, crops])
    expected = [(2, 5, 6, 4), (2, 11, 12, 4), (2, 5, 6, 4), (2, 9, 10, 4), (2, 10, 12, 4),
                (2, 13, 4), (1, 6, 8, 4, 4), (2, 5, 6, 2), (2, 1, 4, 2), (2, 5, 6, 2),
                (2, 5, 6, 3), (2, 5, 6, 3)]
    assert [v.shape for v in values[:-2]] == expected
    np.testing.assert_allclose(
        [_checksum(v) for v in values[:-2]],
        [-46.72784344, 20.08198432, 12.33514249, 45.04280997, -3.70460331, -13.19682453,
         -6.63839148, -18.32793052, -3.99762303, 80.3602807, 6.47291519, -10.49079867],
        atol=1e-7)
    np.testing.assert_array_equal(values[-2], [[1, 0], [2, 3]])
    np.testing.assert_array_equal(values[-1], [[0, 0], [0, 2]])
    assert values[-2].dtype == np.int32


@pytest.mark.parametrize("rate,padding", [(2, "SAME"), (3, "VALID"), (2, "VALID")])
def test_atrous_transpose_is_the_adjoint_of_atrous_conv(rate, padding):
    rng = np.random.RandomState(rate)
    z = rng.randn(1, 9, 8, 2)
    w = rng.randn(2, 3, 2, 3)
    forward = _run(tf.nn.atrous_conv2d(z, w, rate, padding))
    y = rng.randn(*forward.shape)
    back = _run(tf.nn.atrous_conv2d_transpose(y, w, list(z.shape), rate, padding))
    np.testing.assert_allclose(np.sum(forward * y), np.sum(z * back), rtol=1e-10)


def test_with_space_to_batch_equals_dilated_conv_and_sees_valid_padding():
    rng = np.random.RandomState(1)
    x = rng.randn(2, 7, 9, 2)
    f = rng.randn(3, 2, 2, 4)
    seen = []

    def op(t, n, padding):
        seen.append((n, padding))
        return tf.nn.conv2d(t, f, [1, 1, 1, 1], padding)

    y = tf.nn.with_space_to_batch(x, [2, 3], "SAME", op, filter_shape=[3, 2])
    dilated = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", dilations=[1, 2, 3, 1])
    got, want = _run([y, dilated])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert seen == [(2, "VALID")]
    # Channels-first layout: spatial dims 2 and 3 (block 1 on dimension 1).
    xt = np.transpose(x, [0, 3, 1, 2])
    y = tf.nn.with_space_to_batch(
        xt, [2, 3], "VALID",
        lambda t, n, p: tf.transpose(tf.nn.conv2d(tf.transpose(t, [0, 2, 3, 1]), f,
                                                  [1, 1, 1, 1], p), [0, 3, 1, 2]),
        data_format="NCHW")
    want = _run(tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID", dilations=[1, 2, 3, 1]))
    np.testing.assert_allclose(_run(y), np.transpose(want, [0, 3, 1, 2]), rtol=1e-12)
    with pytest.raises(ValueError, match="filter_shape"):
        tf.nn.with_space_to_batch(x, [2, 2], "SAME", op)
    with pytest.raises(ValueError, match="spatial_dims"):
        tf.nn.with_space_to_batch(x, [2, 2], "VALID", op, spatial_dims=[2, 1])


def test_conv_transpose_dispatch_and_gradients():
    rng = np.random.RandomState(2)
    x = tf.constant(rng.randn(1, 4, 4, 3))
    w = tf.constant(rng.randn(3, 3, 2, 3))
    y = tf.nn.conv_transpose(x, w, [1, 8, 8, 2], strides=2)
    assert y.op.type == "Conv2DBackpropInput"
    np.testing.assert_allclose(*_run([y, tf.nn.conv2d_transpose(x, w, [1, 8, 8, 2],
                                                                [1, 2, 2, 1])]))
    grad = _run(tf.gradients(tf.reduce_sum(y), x)[0])
    assert grad.shape == (1, 4, 4, 3)
    with pytest.raises(ValueError, match="rank 3, 4 or 5"):
        tf.nn.conv_transpose(tf.zeros([2, 3]), w, [2, 3], 1)
    with pytest.raises(ValueError, match="strides"):
        tf.nn.conv_transpose(x, w, [1, 8, 8, 2], strides=[1, 2, 2])
    with pytest.raises(ValueError, match="rate"):
        tf.nn.atrous_conv2d_transpose(x, w, [1, 4, 4, 2], 0, "SAME")


def test_depthwise_backprop_aliases():
    rng = np.random.RandomState(3)
    x = tf.constant(rng.randn(1, 5, 5, 2))
    w = tf.constant(rng.randn(3, 3, 2, 2))
    y = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME")
    g = tf.constant(rng.randn(1, 5, 5, 4))
    gx, gw = tf.gradients(y, [x, w], grad_ys=g)
    ax = tf.nn.depthwise_conv2d_backprop_input([1, 5, 5, 2], w, g, [1, 1, 1, 1], "SAME")
    aw = tf.nn.depthwise_conv2d_backprop_filter(x, [3, 3, 2, 2], g, [1, 1, 1, 1], "SAME")
    got_x, got_w, want_x, want_w = _run([ax, aw, gx, gw])
    np.testing.assert_allclose(got_x, want_x)
    np.testing.assert_allclose(got_w, want_w)


def test_batch_norm_with_global_normalization_formula():
    rng = np.random.RandomState(4)
    x = rng.randn(4, 3)
    m, v, b, g = rng.randn(3), rng.rand(3) + 0.1, rng.randn(3), rng.randn(3)
    y = tf.nn.batch_norm_with_global_normalization(input=x, mean=m, variance=v, beta=b,
                                                   gamma=g, variance_epsilon=0.01,
                                                   scale_after_normalization=True)
    np.testing.assert_allclose(_run(y), (x - m) / np.sqrt(v + 0.01) * g + b, rtol=1e-12)


@pytest.mark.parametrize("scale", [True, False])
def test_legacy_batch_norm_op_and_grad_op(scale):
    rng = np.random.RandomState(5)
    x, bp = rng.randn(2, 3, 2, 3), rng.randn(2, 3, 2, 3)
    m, v, b, g = rng.randn(3), rng.rand(3) + 0.5, rng.randn(3), rng.randn(3)
    y = nn_extras.BatchNormWithGlobalNormalization(x, m, v, b, g, variance_epsilon=0.01,
                                                   scale_after_normalization=scale)
    grads = nn_extras.BatchNormWithGlobalNormalizationGrad(
        x, m, v, g, bp, variance_epsilon=0.01, scale_after_normalization=scale)
    assert y.shape.as_list() == [2, 3, 2, 3] and grads.dv.shape.as_list() == [3]
    y_v, (dx, dm, dv, db, dg) = _run([y, list(grads)])
    gamma = g if scale else 1.0
    rstd = 1 / np.sqrt(v + 0.01)
    np.testing.assert_allclose(y_v, (x - m) * rstd * gamma + b, rtol=1e-12)
    np.testing.assert_allclose(dx, bp * rstd * gamma, rtol=1e-12)
    np.testing.assert_allclose(dm, -(bp * rstd * gamma).sum(axis=(0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(dv, (bp * (x - m)).sum(axis=(0, 1, 2)) * gamma * -0.5 * rstd ** 3,
                               rtol=1e-12)
    np.testing.assert_allclose(db, bp.sum(axis=(0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(dg, (bp * (x - m) * rstd).sum(axis=(0, 1, 2)) if scale else 0,
                               rtol=1e-12)
    with pytest.raises(ValueError, match="BatchNormWithGlobalNormalization"):
        nn_extras.BatchNormWithGlobalNormalization(x, m[:2], v, b, g, variance_epsilon=0.01,
                                                   scale_after_normalization=scale)
    fed = tf.placeholder_with_default(m, [None])
    with pytest.raises(errors.InvalidArgumentError, match="depth"):
        _run(nn_extras.BatchNormWithGlobalNormalization(
            x, fed[:2], v, b, g, variance_epsilon=0.01, scale_after_normalization=scale))


def _bn_case(scale):
    def build(tf):
        rng = np.random.RandomState(6)
        shapes = [[2, 2, 3, 3], [3], [3], [3], [3]]
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        values = [rng.randn(*s) for s in shapes]
        values[2] = rng.rand(3) + 0.5
        y = nn_extras.BatchNormWithGlobalNormalization(*xs, variance_epsilon=0.001,
                                                       scale_after_normalization=scale)
        return y, xs, values

    return build


GRADIENT_CASES = [
    ("BatchNormWithGlobalNormalization", _bn_case(True)),
    ("BatchNormWithGlobalNormalization", _bn_case(False)),
]
