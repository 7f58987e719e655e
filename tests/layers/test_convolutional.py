"""tf.nn.conv1d & co. and the tf.layers 1-D / transposed / separable layers vs NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

RNG = np.random.RandomState(7)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _same_pads(size, kernel_extent, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel_extent - size, 0)
    return out, total // 2, total - total // 2


def ref_conv1d(x, k, stride=1, dilation=1, padding="VALID"):
    """x [N, W, C], k [K, C, F] -> [N, out, F]."""
    taps = k.shape[0]
    extent = (taps - 1) * dilation + 1
    if padding == "SAME":
        out, lo, hi = _same_pads(x.shape[1], extent, stride)
        x = np.pad(x, [(0, 0), (lo, hi), (0, 0)])
    else:
        out = (x.shape[1] - extent) // stride + 1
    cols = np.stack([x[:, i * stride + np.arange(taps) * dilation, :] for i in range(out)], 1)
    return np.einsum("nokc,kcf->nof", cols, k)


def ref_conv2d(x, k, strides=(1, 1), dilations=(1, 1), padding="VALID"):
    """x [N, H, W, C], k [KH, KW, C, F] -> NHWC."""
    pads, outs = [], []
    for axis in (0, 1):
        extent = (k.shape[axis] - 1) * dilations[axis] + 1
        size = x.shape[axis + 1]
        if padding == "SAME":
            out, lo, hi = _same_pads(size, extent, strides[axis])
        else:
            out, lo, hi = (size - extent) // strides[axis] + 1, 0, 0
        pads.append((lo, hi))
        outs.append(out)
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    result = np.zeros((x.shape[0], *outs, k.shape[3]))
    for i in range(k.shape[0]):
        for j in range(k.shape[1]):
            rows = i * dilations[0] + np.arange(outs[0]) * strides[0]
            cols = j * dilations[1] + np.arange(outs[1]) * strides[1]
            patch = x[:, rows][:, :, cols]
            result += np.einsum("nhwc,cf->nhwf", patch, k[i, j])
    return result


def ref_conv2d_transpose(x, k, strides, padding):
    """x [N, H, W, C], k [KH, KW, F, C] -> [N, OH, OW, F] (TF1 layer output sizes)."""
    n, h, w, _ = x.shape
    kh, kw, f, _ = k.shape
    sh, sw = strides
    full = np.zeros((n, (h - 1) * sh + kh, (w - 1) * sw + kw, f))
    for i in range(kh):
        for j in range(kw):
            full[:, i:i + (h - 1) * sh + 1:sh, j:j + (w - 1) * sw + 1:sw] += \
                np.einsum("nhwc,fc->nhwf", x, k[i, j])
    result = full
    for axis, (size, kernel, stride) in enumerate([(h, kh, sh), (w, kw, sw)], start=1):
        out = size * stride if padding == "SAME" else size * stride + max(kernel - stride, 0)
        lo = max((size - 1) * stride + kernel - out, 0) // 2 if padding == "SAME" else 0
        extra = max(lo + out - result.shape[axis], 0)
        pad = [(0, 0)] * 4
        pad[axis] = (0, extra)
        result = np.take(np.pad(result, pad), np.arange(lo, lo + out), axis=axis)
    return result


def ref_separable(x, depthwise, pointwise, strides, padding, dilations=(1, 1)):
    """Depthwise as a block-diagonal conv2d, then the 1x1 pointwise product."""
    kh, kw, c, m = depthwise.shape
    full = np.zeros((kh, kw, c, c * m))
    for ch in range(c):
        full[:, :, ch, ch * m:(ch + 1) * m] = depthwise[:, :, ch, :]
    return np.einsum("nhwc,cf->nhwf", ref_conv2d(x, full, strides, dilations, padding),
                     pointwise[0, 0])


def ref_pool1d(x, size, stride, padding, op):
    width = x.shape[1]
    if padding == "SAME":
        out, lo, hi = _same_pads(width, size, stride)
    else:
        out, lo, hi = (width - size) // stride + 1, 0, 0
    fill = -np.inf if op == "max" else np.nan
    padded = np.pad(x.astype(np.float64), [(0, 0), (lo, hi), (0, 0)], constant_values=fill)
    windows = np.stack([padded[:, i * stride:i * stride + size] for i in range(out)], 1)
    return windows.max(2) if op == "max" else np.nanmean(windows, 2)


# -- tf.nn ------------------------------------------------------------------------------------

@pytest.mark.parametrize("stride, dilation, padding", [
    (1, 1, "VALID"), (2, 1, "SAME"), (1, 2, "SAME"), (3, 1, "VALID"), ([1, 2, 1], 1, "SAME"),
])
def test_nn_conv1d_nwc(stride, dilation, padding):
    x = RNG.randn(2, 11, 3)
    k = RNG.randn(3, 3, 4)
    y = tf.nn.conv1d(x, k, stride, padding, dilations=dilation)
    assert y.name == "conv1d/Squeeze:0"
    step = stride if isinstance(stride, int) else stride[1]
    expected = ref_conv1d(x, k, step, dilation, padding)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(_run(y), expected, rtol=1e-10)


def test_nn_conv1d_ncw_and_aliases():
    x = RNG.randn(2, 9, 3)
    k = RNG.randn(2, 3, 5)
    y = tf.nn.conv1d(input=x.transpose(0, 2, 1), filters=k, stride=[1, 1, 2], padding="SAME",
                     data_format="NCW", name="c1")
    assert y.name == "c1/Squeeze:0"
    np.testing.assert_allclose(_run(y), ref_conv1d(x, k, 2, 1, "SAME").transpose(0, 2, 1),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.conv1d(x, k, 1, "SAME", data_format="NHCW")
    with pytest.raises(ValueError, match="length 1 or 3"):
        tf.nn.conv1d(x, k, [1, 1], "SAME")
    with pytest.raises(ValueError, match="both"):
        tf.nn.conv1d(x, k, 1, "SAME", input=x)


def test_nn_conv1d_transpose_is_the_input_gradient_of_conv1d():
    x = tf.constant(RNG.randn(2, 8, 3))
    k = tf.constant(RNG.randn(3, 5, 3))
    y = tf.nn.conv1d(x, tf.transpose(k, [0, 2, 1]), 2, "SAME")
    dy = tf.constant(RNG.randn(2, 4, 5))
    dx, = tf.gradients(y, x, grad_ys=dy)
    t = tf.nn.conv1d_transpose(dy, tf.transpose(k, [0, 2, 1]), [2, 8, 3], 2, "SAME")
    assert t.shape.as_list() == [2, 8, 3]
    dynamic = tf.nn.conv1d_transpose(dy, tf.transpose(k, [0, 2, 1]), tf.constant([2, 8, 3]), 2)
    got_dx, got_t, got_dynamic = _run([dx, t, dynamic])
    np.testing.assert_allclose(got_t, got_dx, rtol=1e-10)
    np.testing.assert_allclose(got_dynamic, got_dx, rtol=1e-10)


def test_nn_pool1d():
    x = RNG.randn(2, 9, 3).astype(np.float32)
    mp = tf.nn.max_pool1d(x, 2, 2, "VALID")
    ap = tf.nn.avg_pool1d(x, 3, 2, "SAME")
    ncw = tf.nn.max_pool1d(x.transpose(0, 2, 1), [3], [1], "SAME", data_format="NCW")
    assert (mp.name, ap.name) == ("MaxPool1d/Squeeze:0", "AvgPool1D/Squeeze:0")
    got = _run([mp, ap, ncw])
    np.testing.assert_allclose(got[0], ref_pool1d(x, 2, 2, "VALID", "max"), rtol=1e-6)
    np.testing.assert_allclose(got[1], ref_pool1d(x, 3, 2, "SAME", "avg"), rtol=1e-5)
    np.testing.assert_allclose(got[2], ref_pool1d(x, 3, 1, "SAME", "max").transpose(0, 2, 1),
                               rtol=1e-6)


@pytest.mark.parametrize("build", [
    lambda x, k: tf.nn.conv1d(x, k, 2, "SAME"),
    lambda x, k: tf.nn.conv1d(x, k, 1, "VALID", dilations=2),
    lambda x, k: tf.nn.conv1d_transpose(x, k, [1, 12, 3], 2, "SAME"),
])
def test_nn_1d_gradients_match_finite_differences(build):
    xv, kv = RNG.randn(1, 6, 3), RNG.randn(3, 3, 3)
    x, k = tf.constant(xv), tf.constant(kv)
    y = build(x, k)
    with tf.Session():
        err = tf.test.compute_gradient_error([x, k], [[1, 6, 3], [3, 3, 3]], y,
                                             y.shape.as_list(), x_init_value=[xv, kv])
    assert err < 1e-6


# -- tf.layers --------------------------------------------------------------------------------

def _names_and_shapes():
    return [(v.op.name, v.shape.as_list()) for v in tf.trainable_variables()]


@pytest.mark.parametrize("kwargs", [
    dict(), dict(strides=2, padding="same"), dict(dilation_rate=2),
    dict(padding="causal", dilation_rate=2),
])
def test_conv1d_layer(kwargs):
    x = RNG.randn(2, 10, 3).astype(np.float32)
    y = tf.layers.conv1d(tf.constant(x), 4, 3, activation=tf.nn.relu,
                         bias_initializer=tf.constant_initializer(0.25), **kwargs)
    assert _names_and_shapes() == [("conv1d/kernel", [3, 3, 4]), ("conv1d/bias", [4])]
    got, kernel = _run([y, tf.trainable_variables()[0]])
    stride, dilation = kwargs.get("strides", 1), kwargs.get("dilation_rate", 1)
    padding = kwargs.get("padding", "valid").upper()
    if padding == "CAUSAL":
        x = np.pad(x, [(0, 0), (2 * dilation, 0), (0, 0)])
        padding = "VALID"
    expected = np.maximum(ref_conv1d(x, kernel, stride, dilation, padding) + 0.25, 0)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_conv1d_class_channels_first_and_reuse():
    x = RNG.randn(2, 3, 7).astype(np.float32)
    layer = tf.layers.Conv1D(2, 2, data_format="channels_first", use_bias=False, name="c")
    a = layer(tf.constant(x))
    b = layer(tf.constant(x * 2))
    assert _names_and_shapes() == [("c/kernel", [2, 3, 2])]
    assert a.shape.as_list() == [2, 2, 6]
    got_a, got_b, kernel = _run([a, b, layer.kernel])
    expected = ref_conv1d(x.transpose(0, 2, 1), kernel).transpose(0, 2, 1)
    np.testing.assert_allclose(got_a, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_b, 2 * expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="padding"):
        tf.layers.Conv1D(2, 2, padding="full")


@pytest.mark.parametrize("kernel_size, strides, padding", [
    (3, 2, "same"), ((3, 2), (2, 1), "valid"), (2, 3, "valid"), (1, 1, "same"),
])
def test_conv2d_transpose_layer(kernel_size, strides, padding):
    x = RNG.randn(2, 4, 5, 3).astype(np.float32)
    y = tf.layers.conv2d_transpose(tf.constant(x), 5, kernel_size, strides=strides,
                                   padding=padding,
                                   bias_initializer=tf.constant_initializer(-0.5))
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    assert _names_and_shapes() == [("conv2d_transpose/kernel", [kh, kw, 5, 3]),
                                   ("conv2d_transpose/bias", [5])]
    got, kernel = _run([y, tf.trainable_variables()[0]])
    steps = (strides, strides) if isinstance(strides, int) else strides
    expected = ref_conv2d_transpose(x, kernel, steps, padding.upper()) - 0.5
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_conv2d_transpose_dynamic_batch_and_channels_first():
    p = tf.placeholder(tf.float32, [None, 3, 4, 4])
    layer = tf.layers.Conv2DTranspose(2, 3, strides=2, padding="same",
                                      data_format="channels_first")
    y = layer(p)
    assert y.shape.as_list() == [None, 2, 8, 8]
    x = RNG.randn(3, 3, 4, 4).astype(np.float32)
    got, kernel = _run([y, layer.kernel], {p: x})
    expected = ref_conv2d_transpose(x.transpose(0, 2, 3, 1), kernel, (2, 2), "SAME")
    np.testing.assert_allclose(got, expected.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)
    unknown = tf.placeholder(tf.float32, [None, None, None, 2])
    z = tf.layers.conv2d_transpose(unknown, 3, 2, strides=2, padding="valid")
    assert z.shape.as_list() == [None, None, None, 3]
    assert _run(z, {unknown: np.ones((1, 3, 2, 2), np.float32)}).shape == (1, 6, 4, 3)


@pytest.mark.parametrize("kwargs", [
    dict(), dict(depth_multiplier=2, strides=2, padding="same"), dict(dilation_rate=2),
])
def test_separable_conv2d_layer(kwargs):
    x = RNG.randn(2, 7, 7, 3).astype(np.float32)
    y = tf.layers.separable_conv2d(tf.constant(x), 4, 3, **kwargs)
    m = kwargs.get("depth_multiplier", 1)
    assert _names_and_shapes() == [("separable_conv2d/depthwise_kernel", [3, 3, 3, m]),
                                   ("separable_conv2d/pointwise_kernel", [1, 1, 3 * m, 4]),
                                   ("separable_conv2d/bias", [4])]
    got, dk, pk = _run([y] + tf.trainable_variables()[:2])
    stride = kwargs.get("strides", 1)
    rate = kwargs.get("dilation_rate", 1)
    expected = ref_separable(x, dk, pk, (stride, stride), kwargs.get("padding", "valid").upper(),
                             (rate, rate))
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_separable_conv1d_layer(data_format):
    x = RNG.randn(2, 10, 3).astype(np.float32)
    inputs = x if data_format == "channels_last" else x.transpose(0, 2, 1)
    layer = tf.layers.SeparableConv1D(6, 3, strides=2, padding="same", depth_multiplier=2,
                                      data_format=data_format,
                                      bias_initializer=tf.constant_initializer(1.0))
    y = layer(tf.constant(inputs))
    assert _names_and_shapes() == [("separable_conv1d/depthwise_kernel", [3, 3, 2]),
                                   ("separable_conv1d/pointwise_kernel", [1, 6, 6]),
                                   ("separable_conv1d/bias", [6])]
    got, dk, pk = _run([y, layer.depthwise_kernel, layer.pointwise_kernel])
    expected = ref_separable(x[:, None], dk[None], pk[None], (1, 2), "SAME")[:, 0] + 1.0
    if data_format == "channels_first":
        expected = expected.transpose(0, 2, 1)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_pooling1d_layers():
    x = RNG.randn(2, 9, 3).astype(np.float32)
    mp = tf.layers.max_pooling1d(x, 2, 2)
    ap = tf.layers.average_pooling1d(x, 3, 2, padding="same")
    cf = tf.layers.MaxPooling1D(2, 1, data_format="channels_first")(x)
    assert [t.name for t in (mp, ap, cf)] == ["max_pooling1d/Squeeze:0",
                                              "average_pooling1d/Squeeze:0",
                                              "max_pooling1d_1/Squeeze:0"]
    assert cf.shape.as_list() == [2, 9, 2]
    got = _run([mp, ap, cf])
    np.testing.assert_allclose(got[0], ref_pool1d(x, 2, 2, "VALID", "max"), rtol=1e-6)
    np.testing.assert_allclose(got[1], ref_pool1d(x, 3, 2, "SAME", "avg"), rtol=1e-5)
    np.testing.assert_allclose(
        got[2], ref_pool1d(x.transpose(0, 2, 1), 2, 1, "VALID", "max").transpose(0, 2, 1),
        rtol=1e-6)


def test_layers_train_and_share_checkpoint_names(tmp_path):
    x = tf.placeholder(tf.float32, [None, 8, 2])
    h = tf.layers.conv1d(x, 3, 3, padding="same", activation=tf.nn.tanh, name="enc")
    h = tf.layers.separable_conv1d(h, 2, 3, name="sep")
    h = tf.layers.max_pooling1d(h, 2, 2)
    loss = tf.reduce_mean(tf.square(h - 0.5))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    saver = tf.train.Saver()
    feed = {x: RNG.randn(4, 8, 2).astype(np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(20):
            sess.run(train, feed)
        assert sess.run(loss, feed) < first
        path = saver.save(sess, str(tmp_path / "model"))
    names = sorted(name for name, _ in tf.train.list_variables(path))
    assert [n for n in names if "Adam" not in n and "power" not in n] == [
        "enc/bias", "enc/kernel", "sep/bias", "sep/depthwise_kernel", "sep/pointwise_kernel"]


@settings(max_examples=12, deadline=None)
@given(st.integers(4, 9), st.integers(1, 4), st.integers(1, 3), st.integers(1, 2),
       st.sampled_from(["SAME", "VALID"]))
def test_nn_conv1d_matches_reference(width, taps, stride, dilation, padding):
    if padding == "VALID" and (taps - 1) * dilation + 1 > width:
        return
    with tf.Graph().as_default():
        x = RNG.randn(1, width, 2)
        k = RNG.randn(taps, 2, 3)
        got = _run(tf.nn.conv1d(x, k, stride, padding, dilations=dilation))
    np.testing.assert_allclose(got, ref_conv1d(x, k, stride, dilation, padding), rtol=1e-9,
                               atol=1e-12)
