"""Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 and the tf.nn.conv3d wrappers."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case as _case
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.ops.nn import conv3d as conv3d_ops

COVERED_OPS = {"Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"}


def _geometry(size, k, s, d, padding):
    eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        need = max(0, (out - 1) * s + eff - size)
        return out, need // 2, need - need // 2
    return (size - eff) // s + 1, 0, 0


def conv3d_ref(x, w, strides, padding, dilations=(1, 1, 1)):
    """Direct NDHWC convolution: one tensordot per output position."""
    geo = [_geometry(x.shape[i + 1], w.shape[i], strides[i], dilations[i], padding)
           for i in range(3)]
    pads = [(0, 0)] + [(b, a) for _, b, a in geo] + [(0, 0)]
    xp = np.pad(x, pads)
    out = np.zeros((x.shape[0], *(o for o, _, _ in geo), w.shape[4]))
    for pos in itertools.product(*(range(o) for o, _, _ in geo)):
        idx = [np.arange(w.shape[i]) * dilations[i] + pos[i] * strides[i] for i in range(3)]
        window = xp[:, idx[0][:, None, None], idx[1][None, :, None], idx[2][None, None, :], :]
        out[(slice(None), *pos)] = np.tensordot(window, w, axes=([1, 2, 3, 4], [0, 1, 2, 3]))
    return out


RNG = np.random.RandomState(0)
X = RNG.randn(2, 5, 6, 4, 3)
W = RNG.randn(2, 3, 2, 3, 4)


@pytest.mark.parametrize("strides,padding,dilations", [
    ([1, 1, 1, 1, 1], "VALID", [1, 1, 1, 1, 1]),
    ([1, 2, 1, 2, 1], "SAME", [1, 1, 1, 1, 1]),
    ([1, 1, 2, 3, 1], "VALID", [1, 1, 1, 1, 1]),
    ([1, 1, 1, 1, 1], "SAME", [1, 2, 2, 1, 1]),
])
def test_conv3d_values_and_gradients(strides, padding, dilations):
    x, w = tf.constant(X), tf.constant(W)
    y = tf.nn.conv3d(x, w, strides, padding, dilations=dilations)
    expected = conv3d_ref(X, W, strides[1:4], padding, dilations[1:4])
    g = RNG.randn(*expected.shape)
    dx, dw = tf.gradients(y, [x, w], g)
    value, dx_v, dw_v = run([y, dx, dw])
    assert y.shape.as_list() == list(expected.shape)
    assert value.dtype == np.float64
    np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-10)
    # <g, conv(x, w)> is bilinear: its gradients contract against the direct reference.
    eps = 1e-6
    geometry = (strides[1:4], padding, dilations[1:4])
    for base, grad, positions, conv in [
            (X, dx_v, [(0, 1, 2, 3, 0), (1, 4, 5, 0, 2)], lambda b: conv3d_ref(b, W, *geometry)),
            (W, dw_v, [(0, 0, 0, 0, 0), (1, 2, 1, 2, 3)], lambda b: conv3d_ref(X, b, *geometry))]:
        for i in positions:
            bumped = base.copy()
            bumped[i] += eps
            numeric = np.sum(g * (conv(bumped) - expected)) / eps
            assert abs(grad[i] - numeric) < 1e-4


def test_backprop_ops_match_adjoints():
    g = RNG.randn(2, 3, 6, 2, 4)
    dx = conv3d_ops.Conv3DBackpropInputV2([2, 5, 6, 4, 3], W, g, strides=[1, 2, 1, 2, 1],
                                          padding="SAME")
    dw = tf.nn.conv3d_backprop_filter_v2(X, [2, 3, 2, 3, 4], g, [1, 2, 1, 2, 1], "SAME")
    dx_v, dw_v = run([dx, dw])
    assert dx.shape.as_list() == [2, 5, 6, 4, 3] and dw.shape.as_list() == [2, 3, 2, 3, 4]
    # Adjoint identities: <conv(x, w), g> = <x, dx(g)> = <w, dw(x, g)>.
    inner = np.sum(conv3d_ref(X, W, (2, 1, 2), "SAME") * g)
    np.testing.assert_allclose(np.sum(X * dx_v), inner, rtol=1e-10)
    np.testing.assert_allclose(np.sum(W * dw_v), inner, rtol=1e-10)
    assert tf.nn.conv3d_backprop_filter is tf.nn.conv3d_backprop_filter_v2


def test_conv3d_transpose_and_int64_sizes():
    g = RNG.randn(2, 3, 6, 2, 4)
    y = tf.nn.conv3d_transpose(g, W, [2, 5, 6, 4, 3], [1, 2, 1, 2, 1], "SAME")
    y64 = tf.nn.conv3d_transpose(g, W, tf.constant([2, 5, 6, 4, 3], tf.int64), [2, 1, 2], "SAME")
    assert y.op.type == "Conv3DBackpropInputV2" and y.shape.as_list() == [2, 5, 6, 4, 3]
    a, b = run([y, y64])
    inner = np.sum(conv3d_ref(X, W, (2, 1, 2), "SAME") * g)
    np.testing.assert_allclose(np.sum(X * a), inner, rtol=1e-10)
    assert b.shape == (2, 5, 6, 4, 3)


def test_ncdhw_matches_ndhwc():
    xf = X.astype(np.float32)
    y = tf.nn.conv3d(np.moveaxis(xf, -1, 1), W.astype(np.float32), [1, 1, 1, 2, 2], "SAME",
                     data_format="NCDHW")
    expected = np.moveaxis(conv3d_ref(X, W, (1, 2, 2), "SAME"), -1, 1)
    value = run(y)
    assert value.dtype == np.float32 and y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4)


def test_ncdhw_gradients_match_ndhwc():
    g = RNG.randn(2, 3, 6, 2, 4)
    x, w = tf.constant(X), tf.constant(W)
    xc = tf.constant(np.moveaxis(X, -1, 1))
    y = tf.nn.conv3d(x, w, [1, 2, 1, 2, 1], "SAME")
    yc = tf.nn.conv3d(xc, w, [1, 1, 2, 1, 2], "SAME", data_format="NCDHW")
    grads = tf.gradients(y, [x, w], g) + tf.gradients(yc, [xc, w], np.moveaxis(g, -1, 1))
    dx, dw, dxc, dwc = run(grads)
    np.testing.assert_allclose(np.moveaxis(dxc, 1, -1), dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dwc, dw, rtol=1e-10, atol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="in_channels"):
        tf.nn.conv3d(X, np.zeros((1, 1, 1, 2, 1)), [1, 1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="strides"):
        tf.nn.conv3d(X, W, [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="strides"):
        tf.nn.conv3d(X, W, [2, 1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension"):
        tf.nn.conv3d(X[:, :1], W, 1, "VALID")
    with pytest.raises(ValueError, match="both"):
        tf.nn.conv3d(X, W, 1, "SAME", filters=W)
    x = tf.placeholder(tf.float64, [None, None, None, None, 3])
    y = tf.nn.conv3d(x, W, 1, "VALID")
    assert y.shape.as_list() == [None, None, None, None, 4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Conv3D"):
        run(y, {x: np.zeros((1, 1, 6, 4, 3))})


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 2), d=st.integers(2, 5), h=st.integers(2, 5), c=st.integers(1, 3),
       k=st.integers(1, 2), s=st.integers(1, 3), depth=st.integers(1, 3),
       padding=st.sampled_from(["SAME", "VALID"]))
def test_conv3d_hypothesis(n, d, h, c, k, s, depth, padding):
    rng = np.random.RandomState(1)
    x = rng.randn(n, d, h, 3, c)
    w = rng.randn(k, 2, k, c, depth)
    with tf.Graph().as_default():
        y = tf.nn.conv3d(x, w, [1, s, 1, s, 1], padding)
        np.testing.assert_allclose(run(y), conv3d_ref(x, w, (s, 1, s), padding),
                                   rtol=1e-10, atol=1e-10)


_W = np.random.RandomState(3).uniform(-1, 1, (2, 2, 1, 2, 2))
_X = np.random.RandomState(4).uniform(-1, 1, (1, 3, 3, 2, 2))

GRADIENT_CASES = [
    ("Conv3D", _case(lambda tf, x, w: tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME"),
                     [1, 3, 3, 2, 2], [2, 2, 1, 2, 2])),
    ("Conv3DBackpropInputV2", _case(
        lambda tf, w, g: tf.nn.conv3d_transpose(g, w, [1, 3, 3, 2, 2], [1, 2, 1, 1, 1],
                                                "SAME"),
        [2, 2, 1, 2, 2], [1, 2, 3, 2, 2])),
    ("Conv3DBackpropFilterV2", _case(
        lambda tf, x, g: tf.nn.conv3d_backprop_filter_v2(x, [2, 2, 1, 2, 2], g,
                                                         [1, 2, 1, 1, 1], "SAME"),
        [1, 3, 3, 2, 2], [1, 2, 3, 2, 2])),
]


# -- tf.layers ---------------------------------------------------------------------------------


def test_conv3d_layer_variables_and_values():
    x = tf.placeholder(tf.float32, [None, 4, 5, 6, 2])
    y = tf.layers.conv3d(x, 3, [2, 3, 1], strides=(1, 2, 1), padding="same",
                         activation=tf.nn.relu, bias_initializer=tf.constant_initializer(0.5))
    layer = tf.layers.Conv3D(4, 2, name="c")
    z = layer(y)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["c/bias", "c/kernel", "conv3d/bias", "conv3d/kernel"]
    assert layer.kernel.shape.as_list() == [2, 2, 2, 3, 4]
    assert y.shape.as_list() == [None, 4, 3, 6, 3] and z.shape.as_list() == [None, 3, 2, 5, 4]
    xv = np.random.RandomState(0).randn(2, 4, 5, 6, 2).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        y_v, kernel = sess.run([y, tf.global_variables()[0]], {x: xv})
    expected = np.maximum(conv3d_ref(xv.astype(np.float64), kernel.astype(np.float64),
                                     (1, 2, 1), "SAME") + 0.5, 0)
    np.testing.assert_allclose(y_v, expected, rtol=1e-4, atol=1e-4)


def test_conv3d_transpose_layer_and_channels_first():
    x = tf.placeholder(tf.float32, [None, 2, 3, 2, 5])
    y = tf.layers.conv3d_transpose(x, 4, 2, strides=2, padding="same")
    v = tf.layers.Conv3DTranspose(2, [3, 1, 1], strides=(1, 1, 2), padding="valid")(x)
    c = tf.layers.conv3d(np.ones((1, 2, 3, 3, 3), np.float32), 2, 2, data_format="channels_first",
                         bias_initializer=tf.ones_initializer(),
                         kernel_initializer=tf.ones_initializer())
    assert y.shape.as_list() == [None, 4, 6, 4, 4] and v.shape.as_list() == [None, 4, 3, 4, 2]
    assert tf.get_variable_scope().name == ""
    kernels = {var.op.name: var.shape.as_list() for var in tf.global_variables()}
    assert kernels["conv3d_transpose/kernel"] == [2, 2, 2, 4, 5]
    assert kernels["conv3d_transpose_1/kernel"] == [3, 1, 1, 2, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        y_v, c_v = sess.run([y, c], {x: np.ones((3, 2, 3, 2, 5), np.float32)})
    assert y_v.shape == (3, 4, 6, 4, 4)
    np.testing.assert_allclose(c_v, np.full((1, 2, 2, 2, 2), 2 * 2 * 2 * 2 + 1.0))


def test_pooling3d_layers():
    x = np.arange(2 * 4 * 4 * 4, dtype=np.float32).reshape(2, 4, 4, 4, 1)
    m = tf.layers.max_pooling3d(x, 2, 2)
    a = tf.layers.AveragePooling3D([2, 2, 2], [2, 2, 2], padding="same")(x)
    f = tf.layers.max_pooling3d(np.moveaxis(x, -1, 1), 2, 2, data_format="channels_first")
    assert m.op.name.startswith("max_pooling3d/") and a.op.name.startswith("average_pooling3d")
    m_v, a_v, f_v = run([m, a, f])
    blocks = x.reshape(2, 2, 2, 2, 2, 2, 2, 1)
    np.testing.assert_array_equal(m_v, blocks.max(axis=(2, 4, 6)))
    np.testing.assert_allclose(a_v, blocks.mean(axis=(2, 4, 6)))
    np.testing.assert_array_equal(f_v, np.moveaxis(m_v, -1, 1))
    with pytest.raises(ValueError, match="pool_size"):
        tf.layers.max_pooling3d(x, [2, 2], 2)
