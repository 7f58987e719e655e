"""Extra tf.keras layers: activation layers, padding, upsampling, transposed conv, wrappers."""

import numpy as np
import pytest

import tensorflux as tf

K = tf.keras


@pytest.fixture(autouse=True)
def _fresh_graph():
    K.backend.clear_session()
    yield
    K.backend.clear_session()


def _run(outputs, feed):
    return K.backend.get_session().run(outputs, feed)


def _gru_ref(x, kernel, recurrent, bias):
    """Keras' GRU (reset_after=False, hard_sigmoid gates z, r, h) in NumPy."""
    def gate(z):
        return np.clip(0.2 * z + 0.5, 0, 1)

    h = np.zeros((x.shape[0], recurrent.shape[0]))
    outs = []
    rz, rr, rh = np.split(recurrent, 3, axis=1)
    for t in range(x.shape[1]):
        xz, xr, xh = np.split(x[:, t] @ kernel + bias, 3, axis=1)
        z, r = gate(xz + h @ rz), gate(xr + h @ rr)
        h = z * h + (1 - z) * np.tanh(xh + (r * h) @ rh)
        outs.append(h)
    return np.stack(outs, 1), h


def test_activation_and_shape_layers():
    rng = np.random.RandomState(0)
    x = K.Input((2, 3))
    img = K.Input((2, 2, 1))
    data = rng.randn(2, 2, 3).astype(np.float32)
    pic = rng.randn(1, 2, 2, 1).astype(np.float32)
    outs = _run([K.layers.ReLU(max_value=1.0)(x), K.layers.LeakyReLU(0.1)(x),
                 K.layers.ELU()(x), K.layers.Softmax()(x), K.layers.Permute((2, 1))(x),
                 K.layers.RepeatVector(2)(K.layers.Flatten()(x)),
                 K.layers.UpSampling2D((2, 3))(img), K.layers.ZeroPadding2D(((1, 0), (0, 2)))(img)],
                {x: data, img: pic})
    e = np.exp(data - data.max(-1, keepdims=True))
    refs = [np.clip(data, 0, 1), np.where(data > 0, data, 0.1 * data),
            np.where(data > 0, data, np.expm1(data)), e / e.sum(-1, keepdims=True),
            data.transpose(0, 2, 1), np.repeat(data.reshape(2, 1, 6), 2, axis=1),
            pic.repeat(2, axis=1).repeat(3, axis=2), np.pad(pic, [[0, 0], [1, 0], [0, 2], [0, 0]])]
    for value, ref in zip(outs, refs):
        np.testing.assert_allclose(value, ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="permutation"):
        K.layers.Permute((1, 3))


@pytest.mark.parametrize("padding,stride,kernel", [("valid", 2, 3), ("same", 2, 2),
                                                   ("valid", 1, 2)])
def test_conv2d_transpose_matches_scatter_reference(padding, stride, kernel):
    rng = np.random.RandomState(1)
    x = K.Input((3, 3, 2))
    layer = K.layers.Conv2DTranspose(4, kernel, strides=stride, padding=padding)
    y = layer(x)
    w, b = layer.get_weights()
    assert w.shape == (kernel, kernel, 4, 2)
    data = rng.randn(2, 3, 3, 2).astype(np.float32)
    full = (3 - 1) * stride + kernel
    ref = np.zeros((2, full, full, 4))
    for a in range(kernel):
        for c in range(kernel):
            ref[:, a:a + 3 * stride:stride, c:c + 3 * stride:stride] += data @ w[a, c].T
    if padding == "same":
        total = full - 3 * stride
        ref = ref[:, total // 2:total // 2 + 3 * stride, total // 2:total // 2 + 3 * stride]
    got = _run(y, {x: data})
    assert y.get_shape().as_list() == [None, *got.shape[1:]]
    np.testing.assert_allclose(got, ref + b, rtol=1e-4, atol=1e-5)


def test_time_distributed_dense():
    x = K.Input((4, 3))
    wrapper = K.layers.TimeDistributed(K.layers.Dense(2))
    y = wrapper(x)
    assert [w.name for w in wrapper.weights] == ["time_distributed/kernel:0",
                                                 "time_distributed/bias:0"]
    data = np.random.RandomState(2).randn(5, 4, 3).astype(np.float32)
    kernel, bias = wrapper.get_weights()
    assert y.get_shape().as_list() == [None, 4, 2]
    np.testing.assert_allclose(_run(y, {x: data}), data @ kernel + bias, rtol=1e-5)


def test_bidirectional_gru_concat_and_sum():
    x = K.Input((4, 3))
    layer = K.layers.Bidirectional(K.layers.GRU(2, return_sequences=True))
    y = layer(x)
    assert [w.name for w in layer.weights][::3] == ["bidirectional/forward_gru/gru_cell/kernel:0",
                                                    "bidirectional/backward_gru/gru_cell/kernel:0"]
    rng = np.random.RandomState(3)
    weights = [rng.randn(*w.shape) * 0.5 for w in layer.get_weights()]
    layer.set_weights(weights)
    data = rng.randn(2, 4, 3).astype(np.float32)
    forward = _gru_ref(data, *weights[:3])[0]
    backward = _gru_ref(data[:, ::-1], *weights[3:])[0][:, ::-1]
    np.testing.assert_allclose(_run(y, {x: data}), np.concatenate([forward, backward], -1),
                               rtol=1e-4, atol=1e-5)
    summed = K.layers.Bidirectional(K.layers.LSTM(2), merge_mode="sum")(x)
    assert summed.get_shape().as_list() == [None, 2]
    with pytest.raises(ValueError, match="Invalid merge mode"):
        K.layers.Bidirectional(K.layers.LSTM(2), merge_mode="max")


def test_layer_normalization_matches_numpy():
    x = K.Input((3, 4))
    layer = K.layers.LayerNormalization()
    y = layer(x)
    assert [w.name for w in layer.weights] == ["layer_normalization/gamma:0",
                                               "layer_normalization/beta:0"]
    rng = np.random.RandomState(4)
    gamma, beta = rng.randn(4), rng.randn(4)
    layer.set_weights([gamma, beta])
    data = rng.randn(2, 3, 4).astype(np.float32)
    mean, var = data.mean(-1, keepdims=True), data.var(-1, keepdims=True)
    np.testing.assert_allclose(_run(y, {x: data}),
                               (data - mean) / np.sqrt(var + 1e-3) * gamma + beta, rtol=1e-4,
                               atol=1e-5)
    both = K.layers.LayerNormalization(axis=[1, 2], center=False, scale=False)(x)
    flat = data.reshape(2, -1)
    ref = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(_run(both, {x: data}).reshape(2, -1), ref, rtol=1e-4, atol=1e-5)


def test_noise_spatial_dropout_and_cropping():
    img = K.Input((4, 4, 50))
    data = np.ones((2, 4, 4, 50), np.float32)
    dropped = _run(K.layers.SpatialDropout2D(0.5)(img, training=True), {img: data})
    per_channel = dropped.reshape(2, 16, 50)
    assert np.all(per_channel == per_channel[:, :1]) and set(np.unique(dropped)) == {0.0, 2.0}
    np.testing.assert_array_equal(_run(K.layers.SpatialDropout2D(0.5)(img), {img: data}), data)
    noisy = _run(K.layers.GaussianNoise(0.5)(img, training=True), {img: data})
    assert 0.4 < noisy.std() < 0.6
    np.testing.assert_array_equal(_run(K.layers.GaussianNoise(0.5)(img), {img: data}), data)
    seq = K.Input((6, 40))
    s_drop = _run(K.layers.SpatialDropout1D(0.5)(seq, training=True),
                  {seq: np.ones((1, 6, 40), np.float32)})
    assert np.all(s_drop == s_drop[:, :1])
    pic = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    small = K.Input((4, 4, 1))
    np.testing.assert_array_equal(
        _run(K.layers.Cropping2D(((1, 2), (0, 1)))(small), {small: pic}), pic[:, 1:2, 0:3])
    with pytest.raises(ValueError, match="removes the whole input"):
        K.layers.Cropping2D(2)(small)


def test_depthwise_and_separable_conv2d_match_numpy():
    from numpy.lib.stride_tricks import sliding_window_view

    rng = np.random.RandomState(5)
    x = K.Input((5, 5, 3))
    depthwise = K.layers.DepthwiseConv2D(3, depth_multiplier=2)
    separable = K.layers.SeparableConv2D(4, 3)
    outs = [depthwise(x), separable(x)]
    assert [w.name for w in separable.weights] == ["separable_conv2d/depthwise_kernel:0",
                                                   "separable_conv2d/pointwise_kernel:0",
                                                   "separable_conv2d/bias:0"]
    for layer in (depthwise, separable):
        layer.set_weights([rng.randn(*w.shape) for w in layer.get_weights()])
    data = rng.randn(2, 5, 5, 3).astype(np.float32)
    windows = sliding_window_view(data, (3, 3), axis=(1, 2))          # n, 3, 3, c, i, j
    dk, db = depthwise.get_weights()
    ref = np.einsum("nhwcij,ijcm->nhwcm", windows, dk).reshape(2, 3, 3, 6) + db
    sk, pk, sb = separable.get_weights()
    mid = np.einsum("nhwcij,ijcm->nhwcm", windows, sk).reshape(2, 3, 3, 3)
    ref2 = mid @ pk[0, 0] + sb
    got = _run(outs, {x: data})
    np.testing.assert_allclose(got[0], ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], ref2, rtol=1e-4, atol=1e-4)


def test_conv3d_and_3d_pooling_match_numpy():
    from numpy.lib.stride_tricks import sliding_window_view

    rng = np.random.RandomState(6)
    v = K.Input((4, 4, 4, 2))
    conv = K.layers.Conv3D(3, 2)
    outs = [conv(v), K.layers.MaxPooling3D()(v), K.layers.AveragePooling3D(2)(v)]
    assert conv.weights[0].get_shape().as_list() == [2, 2, 2, 2, 3]
    data = rng.randn(2, 4, 4, 4, 2).astype(np.float32)
    kernel, bias = conv.get_weights()
    windows = sliding_window_view(data, (2, 2, 2), axis=(1, 2, 3))
    ref = np.einsum("ndhwcijk,ijkco->ndhwo", windows, kernel) + bias
    blocks = data.reshape(2, 2, 2, 2, 2, 2, 2, 2)
    got = _run(outs, {v: data})
    np.testing.assert_allclose(got[0], ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], blocks.max(axis=(2, 4, 6)))
    np.testing.assert_allclose(got[2], blocks.mean(axis=(2, 4, 6)), rtol=1e-5)
