"""Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool and their backprop ops against slow,
loop-based NumPy references (test-only), plus values recorded from TensorFlow on ties."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import pooling as pooling_ops

COVERED_OPS = {
    "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter", "MaxPool",
    "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad",
}

RNG = np.random.default_rng(1234)


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


# -- slow references ------------------------------------------------------------------------


def ref_pads(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max(0, (out - 1) * stride + eff - size)
        return out, total // 2
    return (size - eff) // stride + 1, 0


def windows(h, w, kh, kw, strides, dilations, padding):
    """Yields (a, b, i, j, row, col) for every output (a, b) and in-bounds kernel offset."""
    oh, top = ref_pads(h, kh, strides[0], dilations[0], padding)
    ow, left = ref_pads(w, kw, strides[1], dilations[1], padding)
    for a, b in itertools.product(range(oh), range(ow)):
        for i, j in itertools.product(range(kh), range(kw)):
            r = a * strides[0] + i * dilations[0] - top
            c = b * strides[1] + j * dilations[1] - left
            if 0 <= r < h and 0 <= c < w:
                yield a, b, i, j, r, c


def out_hw(h, w, kh, kw, strides, dilations, padding):
    return (ref_pads(h, kh, strides[0], dilations[0], padding)[0],
            ref_pads(w, kw, strides[1], dilations[1], padding)[0])


def ref_conv(x, f, strides, dilations, padding):
    n, h, w, _ = x.shape
    kh, kw, _, o = f.shape
    out = np.zeros((n, *out_hw(h, w, kh, kw, strides, dilations, padding), o))
    for a, b, i, j, r, c in windows(h, w, kh, kw, strides, dilations, padding):
        out[:, a, b, :] += x[:, r, c, :] @ f[i, j]
    return out


def ref_conv_backprop_input(shape, f, g, strides, dilations, padding):
    dx = np.zeros(shape)
    for a, b, i, j, r, c in windows(shape[1], shape[2], f.shape[0], f.shape[1], strides,
                                    dilations, padding):
        dx[:, r, c, :] += g[:, a, b, :] @ f[i, j].T
    return dx


def ref_conv_backprop_filter(x, fshape, g, strides, dilations, padding):
    df = np.zeros(fshape)
    for a, b, i, j, r, c in windows(x.shape[1], x.shape[2], fshape[0], fshape[1], strides,
                                    dilations, padding):
        df[i, j] += x[:, r, c, :].T @ g[:, a, b, :]
    return df


def ref_depthwise(x, f, strides, dilations, padding):
    n, h, w, c_in = x.shape
    kh, kw, _, m = f.shape
    out = np.zeros((n, *out_hw(h, w, kh, kw, strides, dilations, padding), c_in, m))
    for a, b, i, j, r, c in windows(h, w, kh, kw, strides, dilations, padding):
        out[:, a, b] += x[:, r, c, :, None] * f[i, j]
    return out.reshape(out.shape[:3] + (c_in * m,))


def ref_pool(x, k, strides, padding, mode):
    n, h, w, c = x.shape
    oh, ow = out_hw(h, w, k[0], k[1], strides, (1, 1), padding)
    out = np.zeros((n, oh, ow, c))
    for a, b in itertools.product(range(oh), range(ow)):
        cells = [x[:, r, cc, :] for a2, b2, _, _, r, cc in
                 windows(h, w, k[0], k[1], strides, (1, 1), padding) if (a2, b2) == (a, b)]
        stack = np.stack(cells)
        out[:, a, b, :] = stack.max(0) if mode == "max" else stack.mean(0)
    return out


def ref_max_pool_grad(x, g, k, strides, padding):
    """Each output's gradient goes to the first maximum of its window in row-major order."""
    n, h, w, c = x.shape
    dx = np.zeros_like(x, dtype=np.float64)
    best = {}
    for a, b, _, _, r, cc in windows(h, w, k[0], k[1], strides, (1, 1), padding):
        for bn, ch in itertools.product(range(n), range(c)):
            key = (bn, a, b, ch)
            if key not in best or x[bn, r, cc, ch] > x[(bn, *best[key], ch)]:
                best[key] = (r, cc)
    for (bn, a, b, ch), (r, cc) in best.items():
        dx[bn, r, cc, ch] += g[bn, a, b, ch]
    return dx


def to_nchw(x):
    return np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))


def from_nchw(x):
    return np.transpose(x, (0, 2, 3, 1))


# -- Conv2D ---------------------------------------------------------------------------------

CONV_ROWS = [
    # (input NHWC, filter, strides, dilations, padding, data_format)
    ((2, 5, 7, 3), (3, 3, 3, 4), (1, 1), (1, 1), "SAME", "NHWC"),
    ((1, 7, 6, 2), (3, 2, 2, 3), (2, 2), (1, 1), "SAME", "NHWC"),
    ((2, 8, 8, 3), (3, 3, 3, 2), (1, 1), (2, 2), "SAME", "NHWC"),
    ((1, 9, 7, 2), (2, 3, 2, 2), (2, 1), (1, 2), "VALID", "NHWC"),
    ((2, 5, 6, 3), (3, 3, 3, 4), (2, 2), (1, 1), "SAME", "NCHW"),
    ((1, 6, 5, 2), (2, 2, 2, 3), (1, 1), (2, 1), "VALID", "NCHW"),
]


@pytest.mark.parametrize("xs,fs,strides,dilations,padding,fmt", CONV_ROWS)
def test_conv2d_and_backprops_match_reference(xs, fs, strides, dilations, padding, fmt):
    x = RNG.standard_normal(xs)
    f = RNG.standard_normal(fs)
    expect = ref_conv(x, f, strides, dilations, padding)
    g = RNG.standard_normal(expect.shape)
    conv = to_nchw if fmt == "NCHW" else np.asarray
    back = from_nchw if fmt == "NCHW" else np.asarray
    s4 = [1, *strides, 1] if fmt == "NHWC" else [1, 1, *strides]
    d4 = [1, *dilations, 1] if fmt == "NHWC" else [1, 1, *dilations]
    x_in = tf.constant(conv(x))
    y = tf.nn.conv2d(x_in, f, strides=s4, padding=padding, data_format=fmt, dilations=d4)
    in_sizes = list(conv(x).shape)
    dx = tf.nn.conv2d_backprop_input(in_sizes, f, tf.constant(conv(g)), strides=s4,
                                     padding=padding, data_format=fmt, dilations=d4)
    df = tf.nn.conv2d_backprop_filter(x_in, list(fs), tf.constant(conv(g)), strides=s4,
                                      padding=padding, data_format=fmt, dilations=d4)
    assert y.op.type == "Conv2D" and dx.op.type == "Conv2DBackpropInput"
    assert y.shape.as_list() == list(conv(expect).shape)
    assert dx.shape.as_list() == in_sizes and df.shape.as_list() == list(fs)
    yv, dxv, dfv = run([y, dx, df])
    assert yv.dtype == np.float64
    np.testing.assert_allclose(back(yv), expect, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(back(dxv),
                               ref_conv_backprop_input(xs, f, g, strides, dilations, padding),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dfv, ref_conv_backprop_filter(x, fs, g, strides, dilations,
                                                             padding), rtol=1e-10, atol=1e-10)


@settings(max_examples=20, deadline=None)
@given(h=st.integers(1, 7), w=st.integers(1, 7), k=st.integers(1, 3), s=st.integers(1, 3),
       d=st.integers(1, 2), padding=st.sampled_from(["SAME", "VALID"]))
def test_conv2d_random_geometry(h, w, k, s, d, padding):
    if padding == "VALID" and min(h, w) < (k - 1) * d + 1:
        return
    x = RNG.standard_normal((2, h, w, 2)).astype(np.float32)
    f = RNG.standard_normal((k, k, 2, 3)).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.nn.conv2d(x, f, strides=s, padding=padding, dilations=d)
        value = run(y)
    assert value.dtype == np.float32
    assert y.shape.as_list() == list(value.shape)
    np.testing.assert_allclose(value, ref_conv(x, f, (s, s), (d, d), padding), rtol=1e-4,
                               atol=1e-4)


def test_conv2d_explicit_padding():
    x = RNG.standard_normal((1, 4, 5, 2))
    f = RNG.standard_normal((3, 3, 2, 2))
    y = tf.nn.conv2d(x, f, strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]])
    assert y.op.get_attr("padding") == b"EXPLICIT"
    assert list(y.op.get_attr("explicit_paddings")) == [0, 0, 1, 2, 0, 1, 0, 0]
    xp = np.pad(x, ((0, 0), (1, 2), (0, 1), (0, 0)))
    value = run(y)
    assert y.shape.as_list() == [1, 5, 4, 2]
    np.testing.assert_allclose(value, ref_conv(xp, f, (1, 1), (1, 1), "VALID"), atol=1e-12)


def test_conv2d_int32():
    x = np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1)
    f = np.ones((2, 2, 1, 1), np.int32)
    value = run(tf.nn.conv2d(x, f, strides=2, padding="VALID"))
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value[0, :, :, 0], [[10, 18], [42, 50]])


def test_conv2d_large_batch_is_chunked(monkeypatch):
    from tensorflux.lib.numerics import conv2d as conv_kernels

    monkeypatch.setattr(conv_kernels, "_PATCH_BYTES", 4096)
    x = RNG.standard_normal((5, 6, 6, 2))
    f = RNG.standard_normal((3, 3, 2, 3))
    g = RNG.standard_normal((5, 6, 6, 3))
    y = tf.nn.conv2d(x, f, strides=1, padding="SAME")
    dx = tf.nn.conv2d_backprop_input([5, 6, 6, 2], f, g, strides=1, padding="SAME")
    df = tf.nn.conv2d_backprop_filter(x, [3, 3, 2, 3], g, strides=1, padding="SAME")
    yv, dxv, dfv = run([y, dx, df])
    np.testing.assert_allclose(yv, ref_conv(x, f, (1, 1), (1, 1), "SAME"), atol=1e-10)
    np.testing.assert_allclose(dxv, ref_conv_backprop_input(x.shape, f, g, (1, 1), (1, 1),
                                                            "SAME"), atol=1e-10)
    np.testing.assert_allclose(dfv, ref_conv_backprop_filter(x, f.shape, g, (1, 1), (1, 1),
                                                             "SAME"), atol=1e-10)


def test_conv2d_recorded_from_tensorflow():
    x = np.arange(2 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 2) / 10
    f = np.linspace(-1, 1, 2 * 2 * 2 * 1, dtype=np.float32).reshape(2, 2, 2, 1)
    value = run(tf.nn.conv2d(x, f, strides=[1, 2, 2, 1], padding="SAME"))
    # Recorded with TensorFlow 2.21 (tf.compat.v1.nn.conv2d, same inputs).
    expect = [1.6571429, -0.14285718, -2.942857, -2.8142858, 1.6571428, -2.1999998, -7.0571427,
              -5.9]
    np.testing.assert_allclose(value.reshape(-1), expect, rtol=1e-5, atol=1e-6)
    x2 = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) / 7
    f2 = np.linspace(-1, 1, 36, dtype=np.float32).reshape(3, 3, 2, 2)
    nchw = run(tf.nn.conv2d(x2, f2, strides=2, padding="SAME", data_format="NCHW"))
    expect = [5.3142858, 7.22449, 0.465307, 1.8857152, -9.877551, -8.016327, -10.008163,
              -8.669388]  # TF's NHWC result for the same image
    np.testing.assert_allclose(from_nchw(nchw).reshape(-1), expect, rtol=1e-5, atol=1e-5)


def test_conv2d_errors():
    x = tf.placeholder(tf.float32, [1, 2, 2, 3])
    with pytest.raises(ValueError, match="Conv2D.*Negative dimension"):
        tf.nn.conv2d(x, np.ones((3, 3, 3, 1), np.float32), strides=1, padding="VALID")
    with pytest.raises(ValueError, match="input depth"):
        tf.nn.conv2d(x, np.ones((1, 1, 2, 1), np.float32), strides=1, padding="VALID")
    batch_stride = tf.nn.conv2d(x, np.ones((1, 1, 3, 1), np.float32), strides=[2, 1, 1, 1],
                                padding="VALID")  # as TF: accepted here, refused at run time
    with pytest.raises(tf.errors.UnimplementedError, match="strides in the batch and depth"):
        run(batch_stride, {x: np.ones((1, 2, 2, 3), np.float32)})
    with pytest.raises(ValueError, match="strides should be of length"):
        tf.nn.conv2d(x, np.ones((1, 1, 3, 1), np.float32), strides=[1, 1, 1],
                     padding="VALID")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(x, np.ones((1, 1, 3, 1), np.float32), strides=1, padding="FULL")
    # Unknown static shapes: the kernel checks at run time.
    x_any = tf.placeholder(tf.float32)
    y = tf.nn.conv2d(x_any, np.ones((1, 1, 2, 1), np.float32), strides=1, padding="VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Conv2D.*depth"):
        run(y, {x_any: np.ones((1, 2, 2, 3), np.float32)})


def test_backprop_ops_reject_mismatched_out_backprop():
    """An output_shape (or out_backprop) that no convolution of these sizes produces is a
    clear error naming the op and the expected shape."""
    value = tf.placeholder(tf.float64, [1, 3, 3, 4])
    f = RNG.standard_normal((3, 3, 2, 4))
    y = tf.nn.conv2d_transpose(value, f, output_shape=[1, 9, 9, 2], strides=[1, 2, 2, 1],
                               padding="SAME")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Conv2DBackpropInput: out_backprop has shape \[1, 3, 3, 4\].*"
                             r"gives \[1, 5, 5, 4\]"):
        run(y, {value: np.ones((1, 3, 3, 4))})
    x = tf.placeholder(tf.float64, [1, 6, 6, 2])
    g = tf.placeholder(tf.float64)
    df = tf.nn.conv2d_backprop_filter(x, [3, 3, 2, 4], g, [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Conv2DBackpropFilter.*gives"):
        run(df, {x: np.ones((1, 6, 6, 2)), g: np.ones((1, 5, 5, 4))})


def test_conv2d_transpose_is_backprop_input():
    value = RNG.standard_normal((2, 3, 3, 4))
    f = RNG.standard_normal((3, 3, 2, 4))
    y = tf.nn.conv2d_transpose(value, f, output_shape=[2, 6, 6, 2], strides=[1, 2, 2, 1],
                               padding="SAME")
    assert y.op.type == "Conv2DBackpropInput"
    assert y.shape.as_list() == [2, 6, 6, 2]
    np.testing.assert_allclose(run(y), ref_conv_backprop_input((2, 6, 6, 2), f, value, (2, 2),
                                                               (1, 1), "SAME"), atol=1e-10)
    with pytest.raises(ValueError, match="input channels"):
        tf.nn.conv2d_transpose(value, np.ones((3, 3, 2, 5)), [2, 6, 6, 2], strides=2)


def test_conv2d_transpose_dynamic_output_shape_keeps_known_dims():
    value = tf.placeholder(tf.float64, [None, 3, 3, 4])
    f = RNG.standard_normal((3, 3, 2, 4))
    packed = tf.stack([tf.shape(value)[0], 6, 6, 2])
    y = tf.nn.conv2d_transpose(value, f, output_shape=packed, strides=[1, 2, 2, 1])
    y_list = tf.nn.conv2d_transpose(value, f, [tf.shape(value)[0], 6, 6, 2], [1, 2, 2, 1])
    dx = tf.nn.conv2d_backprop_input(packed, f, value, [1, 2, 2, 1], "SAME")
    for t in (y, y_list, dx):
        assert t.shape.as_list() == [None, 6, 6, 2]
    v = RNG.standard_normal((2, 3, 3, 4))
    expect = ref_conv_backprop_input((2, 6, 6, 2), f, v, (2, 2), (1, 1), "SAME")
    for got in run([y, y_list, dx], {value: v}):
        np.testing.assert_allclose(got, expect, atol=1e-10)


# -- DepthwiseConv2dNative ------------------------------------------------------------------


@pytest.mark.parametrize("strides,dilations,padding,fmt", [
    ((1, 1), (1, 1), "SAME", "NHWC"), ((2, 2), (1, 1), "SAME", "NHWC"),
    ((1, 1), (2, 2), "VALID", "NHWC"), ((2, 1), (1, 1), "SAME", "NCHW"),
])
def test_depthwise_and_backprops(strides, dilations, padding, fmt):
    x = RNG.standard_normal((2, 6, 5, 3))
    f = RNG.standard_normal((3, 2, 3, 2))
    expect = ref_depthwise(x, f, strides, dilations, padding)
    g = RNG.standard_normal(expect.shape)
    conv = to_nchw if fmt == "NCHW" else np.asarray
    back = from_nchw if fmt == "NCHW" else np.asarray
    s4 = [1, *strides, 1] if fmt == "NHWC" else [1, 1, *strides]
    d4 = [1, *dilations, 1] if fmt == "NHWC" else [1, 1, *dilations]
    y = tf.nn.depthwise_conv2d_native(conv(x), f, s4, padding, data_format=fmt, dilations=d4)
    dx = tf.nn.depthwise_conv2d_native_backprop_input(
        list(conv(x).shape), f, conv(g), s4, padding, data_format=fmt, dilations=d4)
    df = tf.nn.depthwise_conv2d_native_backprop_filter(
        conv(x), list(f.shape), conv(g), s4, padding, data_format=fmt, dilations=d4)
    assert y.shape.as_list() == list(conv(expect).shape)
    yv, dxv, dfv = run([y, dx, df])
    np.testing.assert_allclose(back(yv), expect, atol=1e-10)
    # Depthwise = a grouped conv; check the backprops through the dense-conv identity.
    dense = np.zeros(f.shape[:2] + (3, 6))
    for c in range(3):
        dense[:, :, c, c * 2:(c + 1) * 2] = f[:, :, c, :]
    np.testing.assert_allclose(
        back(dxv), ref_conv_backprop_input(x.shape, dense, g, strides, dilations, padding),
        atol=1e-10)
    full = ref_conv_backprop_filter(x, dense.shape, g, strides, dilations, padding)
    expect_df = np.stack([full[:, :, c, c * 2:(c + 1) * 2] for c in range(3)], axis=2)
    np.testing.assert_allclose(dfv, expect_df, atol=1e-10)


def test_depthwise_conv2d_rate_and_separable():
    x = RNG.standard_normal((1, 7, 7, 2))
    dw = RNG.standard_normal((3, 3, 2, 2))
    pw = RNG.standard_normal((1, 1, 4, 3))
    y = tf.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "SAME", rate=[2, 2])
    np.testing.assert_allclose(run(y), ref_depthwise(x, dw, (1, 1), (2, 2), "SAME"),
                               atol=1e-10)
    z = tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "VALID")
    depth = ref_depthwise(x, dw, (1, 1), (1, 1), "VALID")
    np.testing.assert_allclose(run(z), depth @ pw[0, 0], atol=1e-10)


# -- pooling --------------------------------------------------------------------------------

POOL_ROWS = [
    ((2, 4, 4, 3), (2, 2), (2, 2), "VALID", "NHWC"),
    ((1, 5, 7, 2), (3, 3), (2, 2), "SAME", "NHWC"),
    ((1, 5, 5, 2), (3, 2), (1, 2), "SAME", "NHWC"),
    ((2, 6, 5, 2), (2, 3), (2, 1), "VALID", "NCHW"),
    ((1, 5, 6, 3), (3, 3), (2, 2), "SAME", "NCHW"),
]


@pytest.mark.parametrize("xs,k,s,padding,fmt", POOL_ROWS)
def test_pooling_and_gradients(xs, k, s, padding, fmt):
    x = RNG.permutation(np.prod(xs)).reshape(xs).astype(np.float64)  # distinct values
    conv = to_nchw if fmt == "NCHW" else np.asarray
    back = from_nchw if fmt == "NCHW" else np.asarray
    k4 = [1, *k, 1] if fmt == "NHWC" else [1, 1, *k]
    s4 = [1, *s, 1] if fmt == "NHWC" else [1, 1, *s]
    x_t = tf.constant(conv(x))
    mx = tf.nn.max_pool(x_t, k4, s4, padding, data_format=fmt)
    av = tf.nn.avg_pool(x_t, k4, s4, padding, data_format=fmt)
    expect_max = ref_pool(x, k, s, padding, "max")
    g = RNG.standard_normal(expect_max.shape)
    dmax = pooling_ops.MaxPoolGrad(x_t, mx, conv(g), ksize=k4, strides=s4, padding=padding,
                                   data_format=fmt)
    davg = pooling_ops.AvgPoolGrad(list(conv(x).shape), conv(g), ksize=k4, strides=s4,
                                   padding=padding, data_format=fmt)
    gg = RNG.standard_normal(xs)
    dmax2 = pooling_ops.MaxPoolGradGrad(x_t, mx, conv(gg), ksize=k4, strides=s4,
                                        padding=padding, data_format=fmt)
    assert mx.shape.as_list() == list(conv(expect_max).shape) == av.shape.as_list()
    assert dmax.shape.as_list() == list(conv(x).shape) == davg.shape.as_list()
    mv, avv, dmv, dav, dm2 = run([mx, av, dmax, davg, dmax2])
    np.testing.assert_allclose(back(mv), expect_max)
    np.testing.assert_allclose(back(avv), ref_pool(x, k, s, padding, "avg"), atol=1e-12)
    expect_dmax = ref_max_pool_grad(x, g, k, s, padding)
    np.testing.assert_allclose(back(dmv), expect_dmax, atol=1e-12)
    # AvgPoolGrad is the adjoint of AvgPool: <avg(x), g> == <x, avg_grad(g)>.
    np.testing.assert_allclose(np.sum(back(avv) * g), np.sum(x * back(dav)), rtol=1e-10)
    # MaxPoolGradGrad is the adjoint of MaxPoolGrad in its gradient argument.
    np.testing.assert_allclose(np.sum(back(dm2) * g), np.sum(gg * expect_dmax), rtol=1e-10)


MAX_POOL_TIES = [  # recorded with TensorFlow 2.21: grad_ys = 1, 2, 3, ... over the output
    (2, 2, "VALID", [[0, 1, 2, 0], [0, 0, 0, 0], [0, 3, 4, 0], [0, 0, 0, 0]]),
    (3, 1, "SAME", [[0, 24, 12, 0], [19, 0, 0, 23], [0, 42, 16, 0], [0, 0, 0, 0]]),
    (3, 2, "SAME", [[0, 1, 2, 0], [0, 0, 0, 0], [0, 3, 4, 0], [0, 0, 0, 0]]),
]


@pytest.mark.parametrize("k,s,padding,expect", MAX_POOL_TIES)
def test_max_pool_grad_ties_match_tensorflow(k, s, padding, expect):
    x = np.array([[1, 3, 3, 0], [3, 2, 1, 3], [0, 3, 3, 1], [2, 1, 3, 3]],
                 np.float32).reshape(1, 4, 4, 1)
    y = tf.nn.max_pool(x, k, s, padding)
    n_out = int(np.prod(y.shape.as_list()))
    g = np.arange(1, n_out + 1, dtype=np.float32).reshape(y.shape.as_list())
    dx = pooling_ops.MaxPoolGrad(x, y, g, ksize=[1, k, k, 1], strides=[1, s, s, 1],
                                 padding=padding)
    np.testing.assert_array_equal(run(dx).reshape(4, 4), expect)


def test_max_pool_int_and_explicit_padding():
    x = tf.constant(np.arange(-8, 8, dtype=np.int32).reshape(1, 4, 4, 1))
    y = tf.nn.max_pool(x, 2, 2, "SAME")
    value = run(y)
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value[0, :, :, 0], [[-3, -1], [5, 7]])
    z = tf.nn.max_pool(-x, [1, 2, 2, 1], [1, 2, 2, 1], [[0, 0], [1, 1], [1, 1], [0, 0]])
    assert z.shape.as_list() == [1, 3, 3, 1]
    np.testing.assert_array_equal(run(z)[0, :, :, 0], [[8, 7, 5], [4, 3, 1], [-4, -5, -7]])


def test_pool_errors():
    x = tf.placeholder(tf.float32, [1, 2, 2, 1])
    with pytest.raises(ValueError, match="Negative dimension"):
        tf.nn.max_pool(x, 3, 1, "VALID")
    batch_window = tf.nn.avg_pool(x, [2, 2, 1, 1], [1, 1, 1, 1], "VALID")  # TF: run time
    with pytest.raises(tf.errors.UnimplementedError, match="batch dimension"):
        run(batch_window, {x: np.ones((1, 2, 2, 1), np.float32)})
    with pytest.raises(ValueError, match="ksize should be of length"):
        tf.nn.max_pool(x, [2, 2, 2], 1, "VALID")
    with pytest.raises(TypeError):
        tf.nn.avg_pool(tf.placeholder(tf.int32, [1, 2, 2, 1]), 2, 2, "VALID")


# -- gradient cases (float64, small) --------------------------------------------------------


def _conv_case(fmt="NHWC", strides=2, padding="SAME", dilations=1):
    def build(tf):
        x_shape = (2, 5, 4, 2) if fmt == "NHWC" else (2, 2, 5, 4)
        x = tf.placeholder(tf.float64, x_shape)
        f = tf.placeholder(tf.float64, (3, 2, 2, 3))
        y = tf.nn.conv2d(x, f, strides=strides, padding=padding, data_format=fmt,
                         dilations=dilations)
        return y, [x, f], [RNG.standard_normal(x_shape), RNG.standard_normal((3, 2, 2, 3))]

    return build


def _conv_backprop_input_case(tf):
    f = tf.placeholder(tf.float64, (3, 3, 2, 3))
    g = tf.placeholder(tf.float64, (1, 3, 2, 3))
    y = tf.nn.conv2d_backprop_input([1, 5, 4, 2], f, g, strides=[1, 2, 2, 1], padding="SAME")
    return y, [f, g], [RNG.standard_normal((3, 3, 2, 3)), RNG.standard_normal((1, 3, 2, 3))]


def _conv_backprop_filter_case(tf):
    x = tf.placeholder(tf.float64, (1, 4, 5, 2))
    g = tf.placeholder(tf.float64, (1, 2, 3, 2))
    y = tf.nn.conv2d_backprop_filter(x, [2, 2, 2, 2], g, strides=[1, 2, 2, 1], padding="SAME")
    return y, [x, g], [RNG.standard_normal((1, 4, 5, 2)), RNG.standard_normal((1, 2, 3, 2))]


def _depthwise_case(fmt):
    def build(tf):
        shape = (1, 4, 5, 2) if fmt == "NHWC" else (1, 2, 4, 5)
        x = tf.placeholder(tf.float64, shape)
        f = tf.placeholder(tf.float64, (2, 3, 2, 2))
        s = [1, 2, 1, 1] if fmt == "NHWC" else [1, 1, 2, 1]
        y = tf.nn.depthwise_conv2d_native(x, f, s, "SAME", data_format=fmt)
        return y, [x, f], [RNG.standard_normal(shape), RNG.standard_normal((2, 3, 2, 2))]

    return build


def _depthwise_backprop_input_case(tf):
    f = tf.placeholder(tf.float64, (2, 2, 2, 2))
    g = tf.placeholder(tf.float64, (1, 2, 3, 4))
    y = tf.nn.depthwise_conv2d_native_backprop_input([1, 4, 5, 2], f, g, [1, 2, 2, 1], "SAME")
    return y, [f, g], [RNG.standard_normal((2, 2, 2, 2)), RNG.standard_normal((1, 2, 3, 4))]


def _depthwise_backprop_filter_case(tf):
    x = tf.placeholder(tf.float64, (1, 3, 4, 2))
    g = tf.placeholder(tf.float64, (1, 3, 4, 2))
    y = tf.nn.depthwise_conv2d_native_backprop_filter(x, [2, 2, 2, 1], g, 1, "SAME")
    return y, [x, g], [RNG.standard_normal((1, 3, 4, 2)), RNG.standard_normal((1, 3, 4, 2))]


def _distinct(shape):
    return RNG.permutation(int(np.prod(shape))).reshape(shape) * 0.1


def _max_pool_case(fmt, padding):
    def build(tf):
        shape = (1, 5, 4, 2) if fmt == "NHWC" else (1, 2, 5, 4)
        x = tf.placeholder(tf.float64, shape)
        k = [1, 3, 2, 1] if fmt == "NHWC" else [1, 1, 3, 2]
        s = [1, 2, 2, 1] if fmt == "NHWC" else [1, 1, 2, 2]
        return tf.nn.max_pool(x, k, s, padding, data_format=fmt), [x], [_distinct(shape)]

    return build


def _max_pool_grad_case(padding="SAME", explicit=False):
    def build(tf):
        x_value = _distinct((1, 4, 5, 1))
        x = tf.constant(x_value)
        pad = [[0, 0], [1, 0], [0, 1], [0, 0]] if explicit else padding
        y = tf.nn.max_pool(x, 2, 2, pad)
        g = tf.placeholder(tf.float64, y.shape)
        attrs = {k: y.op.get_attr(k) for k in ("ksize", "strides", "padding",
                                               "explicit_paddings")}
        dx = pooling_ops.MaxPoolGrad(x, y, g, **attrs)
        return dx, [g], [RNG.standard_normal(y.shape.as_list())]

    return build


def _max_pool_grad_grad_case(tf):
    x = tf.constant(_distinct((1, 4, 4, 2)))
    y = tf.nn.max_pool(x, 2, 2, "VALID")
    gg = tf.placeholder(tf.float64, (1, 4, 4, 2))
    out = pooling_ops.MaxPoolGradGrad(x, y, gg, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                      padding="VALID")
    return out, [gg], [RNG.standard_normal((1, 4, 4, 2))]


def _avg_pool_case(fmt):
    def build(tf):
        shape = (1, 5, 4, 2) if fmt == "NHWC" else (1, 2, 5, 4)
        x = tf.placeholder(tf.float64, shape)
        k = [1, 3, 3, 1] if fmt == "NHWC" else [1, 1, 3, 3]
        s = [1, 2, 1, 1] if fmt == "NHWC" else [1, 1, 2, 1]
        y = tf.nn.avg_pool(x, k, s, "SAME", data_format=fmt)
        return y, [x], [RNG.standard_normal(shape)]

    return build


def _avg_pool_grad_case(tf):
    g = tf.placeholder(tf.float64, (1, 3, 2, 2))
    y = pooling_ops.AvgPoolGrad([1, 5, 4, 2], g, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
                                padding="SAME")
    return y, [g], [RNG.standard_normal((1, 3, 2, 2))]


def _conv_transpose_case(tf):
    value = tf.placeholder(tf.float64, (1, 2, 3, 3))
    f = tf.placeholder(tf.float64, (3, 3, 2, 3))
    y = tf.nn.conv2d_transpose(value, f, [1, 4, 5, 2], strides=[1, 2, 2, 1], padding="SAME")
    return y, [value, f], [RNG.standard_normal((1, 2, 3, 3)), RNG.standard_normal((3, 3, 2, 3))]


GRADIENT_CASES = [
    ("Conv2D", _conv_case()),
    ("Conv2D", _conv_case("NCHW", strides=1, padding="VALID", dilations=[1, 1, 2, 1])),
    ("Conv2DBackpropInput", _conv_backprop_input_case),
    ("Conv2DBackpropInput", _conv_transpose_case),
    ("Conv2DBackpropFilter", _conv_backprop_filter_case),
    ("DepthwiseConv2dNative", _depthwise_case("NHWC")),
    ("DepthwiseConv2dNative", _depthwise_case("NCHW")),
    ("DepthwiseConv2dNativeBackpropInput", _depthwise_backprop_input_case),
    ("DepthwiseConv2dNativeBackpropFilter", _depthwise_backprop_filter_case),
    ("MaxPool", _max_pool_case("NHWC", "SAME")),
    ("MaxPool", _max_pool_case("NCHW", "VALID")),
    ("MaxPoolGrad", _max_pool_grad_case()),
    ("MaxPoolGrad", _max_pool_grad_case(explicit=True)),
    ("MaxPoolGradGrad", _max_pool_grad_grad_case),
    ("AvgPool", _avg_pool_case("NHWC")),
    ("AvgPool", _avg_pool_case("NCHW")),
    ("AvgPoolGrad", _avg_pool_grad_case),
]


def test_conv2d_second_derivative_through_backprop_filter():
    """d/dx of <d conv / d f, v> exists and matches finite differences on a tiny case."""
    x = tf.placeholder(tf.float64, (1, 3, 3, 1))
    f = tf.constant(RNG.standard_normal((2, 2, 1, 1)))
    y = tf.nn.conv2d(x, f, strides=1, padding="SAME")
    (df,) = tf.gradients(tf.reduce_sum(y * y), [f])
    (ddx,) = tf.gradients(tf.reduce_sum(df), [x])
    x0 = RNG.standard_normal((1, 3, 3, 1))
    with tf.Session() as sess:
        analytic = sess.run(ddx, {x: x0})
        numeric = np.zeros_like(x0)
        for idx in np.ndindex(x0.shape):
            up, down = x0.copy(), x0.copy()
            up[idx] += 1e-6
            down[idx] -= 1e-6
            numeric[idx] = (sess.run(tf.reduce_sum(df), {x: up})
                            - sess.run(tf.reduce_sum(df), {x: down})) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_conv_ops_reexported():
    assert tf.nn.conv2d is conv_ops.conv2d
    assert tf.nn.max_pool is pooling_ops.max_pool


def test_convolution_and_atrous_conv2d():
    x = RNG.standard_normal((1, 6, 6, 2))
    f = RNG.standard_normal((3, 3, 2, 2))
    y = tf.nn.convolution(x, f, "SAME", strides=[2, 2], dilation_rate=[1, 1])
    np.testing.assert_allclose(run(y), ref_conv(x, f, (2, 2), (1, 1), "SAME"), atol=1e-10)
    a = tf.nn.atrous_conv2d(x, f, rate=2, padding="VALID")
    assert a.op.get_attr("dilations") == [1, 2, 2, 1]
    np.testing.assert_allclose(run(a), ref_conv(x, f, (1, 1), (2, 2), "VALID"), atol=1e-10)
    with pytest.raises(ValueError, match="must be one of 1, 2 or 3"):  # 0 spatial dims
        tf.nn.convolution(np.ones((4, 2)), np.ones((2, 2)), "VALID")
    with pytest.raises(ValueError, match="rate"):
        tf.nn.atrous_conv2d(x, f, rate=0, padding="VALID")
