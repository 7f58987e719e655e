"""tf.keras layers added for TF 1.15 parity: 1-D/3-D padding, cropping, upsampling, global 3-D
pooling, SeparableConv1D, Conv3DTranspose, PReLU, ThresholdedReLU, Dot, GaussianDropout,
AlphaDropout, ActivityRegularization, Attention, AdditiveAttention, Wrapper (NumPy references;
the same layers matched TF 2.21's v1 Keras to 5e-7 with equal weights)."""

import numpy as np
import pytest

import tensorflux as tf

L = tf.keras.layers
RNG = np.random.RandomState(0)


def run(layer, *xs):
    inps = [L.Input(x.shape[1:]) for x in xs]
    out = layer(inps if len(inps) > 1 else inps[0])
    return tf.keras.backend.get_session().run(out, dict(zip(inps, xs)))


def set_random(layer):
    ws = [np.random.RandomState(i).uniform(-1, 1, w.shape).astype(np.float32)
          for i, w in enumerate(layer.get_weights())]
    layer.set_weights(ws)
    return ws


def test_padding_cropping_upsampling_1d_3d():
    x1 = RNG.rand(2, 7, 3).astype(np.float32)
    x3 = RNG.rand(2, 3, 4, 5, 2).astype(np.float32)
    np.testing.assert_array_equal(run(L.ZeroPadding1D((2, 1)), x1),
                                  np.pad(x1, [(0, 0), (2, 1), (0, 0)]))
    np.testing.assert_array_equal(run(L.ZeroPadding1D(), x1), np.pad(x1, [(0, 0), (1, 1), (0, 0)]))
    np.testing.assert_array_equal(run(L.ZeroPadding3D(((1, 0), (0, 2), 1)), x3),
                                  np.pad(x3, [(0, 0), (1, 0), (0, 2), (1, 1), (0, 0)]))
    np.testing.assert_array_equal(run(L.Cropping1D((2, 1)), x1), x1[:, 2:-1])
    np.testing.assert_array_equal(run(L.Cropping3D(((1, 0), (0, 2), 1)), x3),
                                  x3[:, 1:, :-2, 1:-1])
    np.testing.assert_array_equal(run(L.UpSampling1D(3), x1), np.repeat(x1, 3, axis=1))
    np.testing.assert_array_equal(run(L.UpSampling3D((1, 2, 3)), x3),
                                  np.repeat(np.repeat(x3, 2, axis=2), 3, axis=3))
    with pytest.raises(ValueError, match="removes the"):
        run(L.Cropping1D((4, 3)), x1)
    with pytest.raises(ValueError, match="padding"):
        L.ZeroPadding3D((1, 2))
    with pytest.raises(ValueError, match="data_format"):
        L.UpSampling3D(data_format="channels_first")


def test_global_pooling_3d_and_aliases():
    x3 = RNG.rand(2, 3, 4, 5, 2).astype(np.float32)
    np.testing.assert_allclose(run(L.GlobalMaxPool3D(), x3), x3.max(axis=(1, 2, 3)))
    np.testing.assert_allclose(run(L.GlobalAveragePooling3D(), x3), x3.mean(axis=(1, 2, 3)),
                               rtol=1e-6)
    assert L.GlobalAvgPool1D is L.GlobalAveragePooling1D
    assert L.GlobalMaxPool1D is L.GlobalMaxPooling1D


def _np_conv1d(x, w, stride=1, dilation=1):
    k = w.shape[0]
    span = dilation * (k - 1) + 1
    steps = (x.shape[1] - span) // stride + 1
    return np.stack([sum(x[:, t * stride + j * dilation] @ w[j] for j in range(k))
                     for t in range(steps)], 1)


def test_separable_conv1d_against_numpy():
    x = RNG.rand(2, 7, 3).astype(np.float32)
    layer = L.SeparableConv1D(4, 3, depth_multiplier=2, padding="causal", dilation_rate=2)
    got = run(layer, x)
    dw, pw, b = set_random(layer)
    got = run(layer, x)
    assert dw.shape == (3, 3, 2) and pw.shape == (1, 6, 4)
    padded = np.pad(x, [(0, 0), (4, 0), (0, 0)])
    depth = np.stack([np.stack([_np_conv1d(padded[:, :, c:c + 1], dw[:, c:c + 1, m:m + 1],
                                           dilation=2)[..., 0]
                                for m in range(2)], -1) for c in range(3)], 2)
    want = depth.reshape(2, 7, 6) @ pw[0] + b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv3d_transpose_is_the_input_gradient_of_conv3d():
    x = RNG.rand(2, 3, 4, 2, 2).astype(np.float32)
    layer = L.Conv3DTranspose(3, 2, strides=(1, 2, 2), use_bias=False)
    inp = L.Input(x.shape[1:])
    out = layer(inp)
    assert out.get_shape().as_list() == [None, 4, 8, 4, 3]
    (w,) = set_random(layer)
    got = tf.keras.backend.get_session().run(out, {inp: x})
    want = np.zeros((2, 4, 8, 4, 3), np.float32)
    for d in range(3):
        for h in range(4):
            for c in range(2):
                for kd in range(2):
                    for kh in range(2):
                        for kw in range(2):
                            want[:, d + kd, 2 * h + kh, 2 * c + kw] += x[:, d, h, c] @ w[
                                kd, kh, kw].T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert run(L.Conv3DTranspose(1, 3, strides=2, output_padding=1), x).shape == (2, 8, 10, 6, 1)
    with pytest.raises(ValueError, match="output padding"):
        L.Conv3DTranspose(1, 3, strides=2, output_padding=2)


def test_prelu_thresholded_relu():
    x = RNG.randn(2, 4, 3).astype(np.float32)
    layer = L.PReLU(shared_axes=[1])
    inp = L.Input((4, 3))
    out = layer(inp)
    (alpha,) = set_random(layer)
    assert alpha.shape == (1, 3)
    got = tf.keras.backend.get_session().run(out, {inp: x})
    np.testing.assert_allclose(got, np.where(x > 0, x, alpha * x), rtol=1e-6)
    np.testing.assert_allclose(run(L.PReLU(), x), np.maximum(x, 0))  # alpha starts at zero
    np.testing.assert_array_equal(run(L.ThresholdedReLU(0.5), x), np.where(x > 0.5, x, 0))
    with pytest.raises(ValueError, match="theta"):
        L.ThresholdedReLU(-1.0)
    with pytest.raises(ValueError, match="unknown dimension"):
        L.PReLU()(L.Input((None, 3)))


def test_dot_layer():
    a, b = RNG.randn(3, 4).astype(np.float32), RNG.randn(3, 4).astype(np.float32)
    np.testing.assert_allclose(run(L.Dot(1), a, b), (a * b).sum(1, keepdims=True), rtol=1e-5)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(run(L.Dot(-1, normalize=True), a, b)[:, 0], cos, rtol=1e-5)
    q, v = RNG.randn(2, 4, 3).astype(np.float32), RNG.randn(2, 5, 3).astype(np.float32)
    np.testing.assert_allclose(run(L.Dot((2, 2)), q, v), q @ v.transpose(0, 2, 1), rtol=1e-5)
    w = RNG.randn(2, 4, 6).astype(np.float32)
    np.testing.assert_allclose(run(L.Dot(1), q, w), q.transpose(0, 2, 1) @ w, rtol=1e-5)
    x, y = L.Input((4,)), L.Input((4,))
    assert L.dot([x, y], axes=1).get_shape().as_list() == [None, 1]
    with pytest.raises(ValueError, match="incompatib"):
        L.Dot(1)([L.Input((4,)), L.Input((5,))])
    with pytest.raises(ValueError, match="axes"):
        L.Dot((1, 2, 3))


def test_noise_layers_training_only_and_statistics():
    x = np.full((400, 50), 1.5, np.float32)
    inp = L.Input((50,))
    gd, ad = L.GaussianDropout(0.2), L.AlphaDropout(0.3)
    outs = [gd(inp), gd(inp, training=True), ad(inp), ad(inp, training=True)]
    g_test, g_train, a_test, a_train = tf.keras.backend.get_session().run(outs, {inp: x})
    np.testing.assert_array_equal(g_test, x)
    np.testing.assert_array_equal(a_test, x)
    assert abs(g_train.mean() - 1.5) < 0.02
    assert abs(g_train.std() - 1.5 * (0.2 / 0.8) ** 0.5) < 0.02
    # AlphaDropout takes two values: the affine map of x (kept) and of the SELU saturation.
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.3) * (1 + 0.3 * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * 0.3
    kept = np.isclose(a_train, a * 1.5 + b, rtol=1e-5)
    dropped = np.isclose(a_train, a * alpha_p + b, rtol=1e-5)
    assert np.all(kept | dropped)
    assert abs(dropped.mean() - 0.3) < 0.02
    with pytest.raises(ValueError, match="rate"):
        L.AlphaDropout(1.0)


def test_activity_regularization_adds_a_loss():
    x = RNG.randn(4, 3).astype(np.float32)
    inp = L.Input((3,))
    layer = L.ActivityRegularization(l1=0.1, l2=0.01)
    out = layer(inp)
    sess = tf.keras.backend.get_session()
    got, loss = sess.run([out, layer.losses[0]], {inp: x})
    np.testing.assert_array_equal(got, x)
    want = (0.1 * np.abs(x).sum() + 0.01 * (x ** 2).sum()) / 4
    np.testing.assert_allclose(loss, want, rtol=1e-5)
    assert layer.get_config()["l1"] == 0.1


def _np_softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_attention_layers_with_masks_and_causal():
    q = RNG.randn(2, 4, 3).astype(np.float32)
    v = RNG.randn(2, 5, 3).astype(np.float32)
    k = RNG.randn(2, 5, 3).astype(np.float32)
    np.testing.assert_allclose(run(L.Attention(), q, v, k),
                               _np_softmax(q @ k.transpose(0, 2, 1)) @ v, rtol=1e-5, atol=1e-6)
    qq = RNG.randn(2, 5, 3).astype(np.float32)
    scores = qq @ v.transpose(0, 2, 1) - 1e9 * np.triu(np.ones((5, 5)), 1)
    np.testing.assert_allclose(run(L.Attention(causal=True), qq, v), _np_softmax(scores) @ v,
                               rtol=1e-5, atol=1e-6)
    layer = L.AdditiveAttention()
    inp = [L.Input((4, 3)), L.Input((5, 3))]
    vm = v.copy()
    vm[0, 3:] = 0
    qm = q.copy()
    qm[1, 2:] = 0
    out = layer([L.Masking()(inp[0]), L.Masking()(inp[1])])
    (scale,) = set_random(layer)
    sess = tf.keras.backend.get_session()
    got, mask = sess.run([out, out._keras_mask], {inp[0]: qm, inp[1]: vm})
    scores = (np.tanh(qm[:, :, None] + vm[:, None]) * scale).sum(-1)
    scores -= 1e9 * ~np.any(vm != 0, -1)[:, None, :]
    want = (_np_softmax(scores) @ vm) * np.any(qm != 0, -1)[..., None]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(mask, np.any(qm != 0, -1))
    with pytest.raises(ValueError, match="list of inputs"):
        L.Attention()(L.Input((4, 3)))


def test_wrapper_base_class():
    class Doubling(L.Wrapper):
        def call(self, inputs):
            return 2.0 * self.layer(inputs)

    inner = L.Dense(2)
    layer = Doubling(inner)
    x = RNG.rand(3, 4).astype(np.float32)
    inp = L.Input((4,))
    out = layer(inp)
    assert layer.trainable_weights == inner.trainable_weights
    w, b = set_random(layer)
    np.testing.assert_allclose(tf.keras.backend.get_session().run(out, {inp: x}),
                               2 * (x @ w + b), rtol=1e-5)
    config = layer.get_config()
    assert config["layer"]["class_name"] == "Dense"
    copy = Doubling.from_config(config)
    assert isinstance(copy.layer, L.Dense) and copy.layer.units == 2
    with pytest.raises(ValueError, match="Keras layer"):
        Doubling("dense")


def test_spatial_dropout_3d_drops_whole_channels():
    x = np.ones((4, 2, 3, 2, 16), np.float32)
    inp = L.Input(x.shape[1:])
    layer = L.SpatialDropout3D(0.5)
    test_out, train_out = layer(inp), layer(inp, training=True)
    got_test, got = tf.keras.backend.get_session().run([test_out, train_out], {inp: x})
    np.testing.assert_array_equal(got_test, x)
    per_channel = got.reshape(4, -1, 16)
    assert np.all(per_channel.min(1) == per_channel.max(1))  # constant over d, h, w
    assert set(np.unique(got)) <= {0.0, 2.0}
    assert L.Convolution2DTranspose is L.Conv2DTranspose


def test_locally_connected_layers_against_numpy():
    x1 = RNG.rand(2, 9, 3).astype(np.float32)
    layer = L.LocallyConnected1D(4, 3, strides=2)
    inp = L.Input((9, 3))
    out = layer(inp)
    k, b = set_random(layer)
    assert k.shape == (4, 9, 4) and b.shape == (4, 4)
    got = tf.keras.backend.get_session().run(out, {inp: x1})
    want = np.stack([x1[:, 2 * i:2 * i + 3].reshape(2, -1) @ k[i] for i in range(4)], 1) + b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    x2 = RNG.rand(2, 5, 6, 2).astype(np.float32)
    layer2 = L.LocallyConnected2D(3, (2, 3), strides=(2, 1), activation="relu")
    inp2 = L.Input((5, 6, 2))
    out2 = layer2(inp2)
    k2, b2 = set_random(layer2)
    assert k2.shape == (8, 12, 3) and b2.shape == (2, 4, 3)
    got2 = tf.keras.backend.get_session().run(out2, {inp2: x2})
    want2 = np.stack([np.stack([x2[:, 2 * i:2 * i + 2, j:j + 3].reshape(2, -1) @ k2[i * 4 + j]
                                for j in range(4)], 1) for i in range(2)], 1) + b2
    np.testing.assert_allclose(got2, np.maximum(want2, 0), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="valid"):
        L.LocallyConnected1D(2, 3, padding="same")
    with pytest.raises(ValueError, match="spatial"):
        L.LocallyConnected1D(2, 3)(L.Input((None, 3)))
