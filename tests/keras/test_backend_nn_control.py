"""tf.keras.backend's nn, control-flow and state helpers against NumPy references."""

import numpy as np
import pytest

import tensorflux as tf

K = tf.keras.backend
rng = np.random.RandomState(0)


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as session:
        yield session


def _numpy_rnn(x, w, mask, zero_output=False):
    state = np.zeros((x.shape[0], w.shape[1]), np.float32)
    previous = np.zeros_like(state)
    outputs = []
    for t in range(x.shape[1]):
        new = np.tanh(x[:, t] @ w + state)
        keep = mask[:, t][:, None]
        out = np.where(keep, new, 0.0 if zero_output else previous)
        state = np.where(keep, new, state)
        previous = out
        outputs.append(out)
    return np.stack(outputs, 1), state


@pytest.mark.parametrize("unroll", [False, True])
@pytest.mark.parametrize("zero_output", [False, True])
def test_rnn_with_a_mask_matches_numpy(sess, unroll, zero_output):
    x = rng.randn(2, 5, 3).astype(np.float32)
    w = rng.randn(3, 4).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)

    def step(inputs, states):
        h = K.tanh(K.dot(inputs, tf.constant(w)) + states[0])
        return h, [h]

    last, outputs, states = K.rnn(step, tf.constant(x), [tf.zeros((2, 4))],
                                  mask=tf.constant(mask), unroll=unroll,
                                  zero_output_for_mask=zero_output)
    got_last, got_outputs, got_state = sess.run([last, outputs, states[0]])
    want_outputs, want_state = _numpy_rnn(x, w, mask, zero_output)
    np.testing.assert_allclose(got_outputs, want_outputs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_last, want_outputs[:, -1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-5, atol=1e-6)


def test_rnn_backwards_and_errors(sess):
    x = rng.randn(1, 4, 2).astype(np.float32)
    last, outputs, _ = K.rnn(lambda i, s: (i + s[0], [i + s[0]]), tf.constant(x),
                             [tf.zeros((1, 2))], go_backwards=True)
    np.testing.assert_allclose(sess.run(outputs)[0], np.cumsum(x[0, ::-1], 0), rtol=1e-6)
    with pytest.raises(ValueError, match="at least 3D"):
        K.rnn(lambda i, s: (i, s), tf.zeros((2, 3)), [tf.zeros((2, 3))])


def test_batch_dot_follows_tf1_keras(sess):
    a = rng.randn(4, 3).astype(np.float32)
    b = rng.randn(4, 3).astype(np.float32)
    got = sess.run(K.batch_dot(tf.constant(a), tf.constant(b), axes=1))
    np.testing.assert_allclose(got, (a * b).sum(1, keepdims=True), rtol=1e-5)
    x = rng.randn(4, 2, 3).astype(np.float32)
    y = rng.randn(4, 5, 3).astype(np.float32)
    got = sess.run(K.batch_dot(tf.constant(x), tf.constant(y), axes=[2, 2]))
    np.testing.assert_allclose(got, x @ y.transpose(0, 2, 1), rtol=1e-5)
    z = rng.randn(4, 3, 2).astype(np.float32)
    got = sess.run(K.batch_dot(tf.constant(a), tf.constant(z), axes=(1, 1)))
    np.testing.assert_allclose(got, np.einsum("bi,bij->bj", a, z), rtol=1e-5)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_convolutions_in_both_data_formats(sess, padding):
    image = rng.randn(2, 6, 6, 3).astype(np.float32)
    kernel = rng.randn(3, 3, 3, 4).astype(np.float32)
    last = sess.run(K.conv2d(tf.constant(image), tf.constant(kernel), padding=padding))
    first = sess.run(K.conv2d(tf.constant(image.transpose(0, 3, 1, 2)), tf.constant(kernel),
                              padding=padding, data_format="channels_first"))
    np.testing.assert_allclose(last, first.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    # One output pixel against the direct sum.
    offset = 1 if padding == "same" else 0
    want = np.einsum("hwc,hwco->o", image[0, 1 - offset:4 - offset, 1 - offset:4 - offset],
                     kernel)
    np.testing.assert_allclose(last[0, 1, 1], want, rtol=1e-4, atol=1e-5)


def test_causal_conv1d_sees_only_the_past(sess):
    seq = rng.randn(2, 7, 3).astype(np.float32)
    kernel = rng.randn(2, 3, 4).astype(np.float32)
    out = sess.run(K.conv1d(tf.constant(seq), tf.constant(kernel), padding="causal"))
    assert out.shape == (2, 7, 4)
    np.testing.assert_allclose(out[:, 0], seq[:, 0] @ kernel[1], rtol=1e-5)
    np.testing.assert_allclose(out[:, 3], seq[:, 2] @ kernel[0] + seq[:, 3] @ kernel[1],
                               rtol=1e-5)


def test_pooling_padding_resizing_and_bias(sess):
    image = rng.randn(1, 4, 4, 2).astype(np.float32)
    pooled = sess.run(K.pool2d(tf.constant(image), (2, 2), strides=(2, 2), pool_mode="avg"))
    np.testing.assert_allclose(pooled, image.reshape(1, 2, 2, 2, 2, 2).mean((2, 4)),
                               rtol=1e-6)
    padded = sess.run(K.spatial_2d_padding(tf.constant(image), ((1, 0), (0, 2))))
    np.testing.assert_allclose(padded, np.pad(image, [(0, 0), (1, 0), (0, 2), (0, 0)]))
    grown = sess.run(K.resize_images(tf.constant(image), 2, 3, "channels_last"))
    np.testing.assert_allclose(grown, image.repeat(2, 1).repeat(3, 2))
    bias = np.array([1.0, -1.0], np.float32)
    np.testing.assert_allclose(sess.run(K.bias_add(tf.constant(image), tf.constant(bias))),
                               image + bias)
    first = image.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(
        sess.run(K.bias_add(tf.constant(first), tf.constant(bias), "channels_first")),
        first + bias[:, None, None])
    with pytest.raises(ValueError, match="pool_mode"):
        K.pool2d(tf.constant(image), (2, 2), pool_mode="min")


def test_ctc_cost_and_decoding(sess):
    # Two labels over 3 steps, all classes equally likely: P("01") counts the alignments.
    probabilities = np.full((1, 3, 3), 1.0 / 3, np.float32)
    cost = sess.run(K.ctc_batch_cost(tf.constant([[0, 1]]), tf.constant(probabilities),
                                     tf.constant([[3]]), tf.constant([[2]])))
    # Alignments of "01" in 3 steps with blank b: 0b1, 001, 011, b01, 01b -> 5 paths.
    np.testing.assert_allclose(cost, [[-np.log(5 / 27.0)]], rtol=1e-4)
    peaked = np.array([[[0.8, 0.1, 0.1], [0.1, 0.1, 0.8], [0.1, 0.8, 0.1],
                        [0.1, 0.8, 0.1]]], np.float32)
    decoded, log_prob = K.ctc_decode(tf.constant(peaked), tf.constant([4]))
    dense, lp = sess.run([decoded[0], log_prob])
    assert dense.tolist() == [[0, 1]]
    np.testing.assert_allclose(lp, [[-np.log(0.8 ** 4)]], rtol=1e-4)


def test_state_and_random_helpers(sess):
    v = K.variable(np.array([1.0, 2.0]))
    sess.run(tf.global_variables_initializer())
    sess.run(K.update_add(v, [1.0, 1.0]))
    assert sess.run(v).tolist() == [2.0, 3.0]
    eye = K.eye(3)
    sess.run(eye.initializer)
    np.testing.assert_allclose(sess.run(eye), np.eye(3))
    draws = sess.run(K.random_binomial((1000,), p=0.25, seed=1))
    assert set(np.unique(draws)) <= {0.0, 1.0} and 0.18 < draws.mean() < 0.32
    assert sess.run(K.arange(2, 8, 3)).tolist() == [2, 5]
    assert sess.run(K.arange(-3)).tolist() == []
    np.testing.assert_allclose(sess.run(K.hard_sigmoid(tf.constant([-3.0, 0.0, 1.0]))),
                               [0.0, 0.5, 0.7], rtol=1e-6)
    np.testing.assert_allclose(sess.run(K.repeat(tf.constant([[1.0, 2.0]]), 2)),
                               [[[1.0, 2.0], [1.0, 2.0]]])
    assert K.is_keras_tensor(tf.keras.layers.Input((3,)))
    assert not K.is_keras_tensor(tf.constant(1.0))
    with pytest.raises(ValueError, match="symbolic tensor"):
        K.is_keras_tensor(np.zeros(2))


def test_learning_phase_scope_and_data_format():
    with tf.Graph().as_default():
        with K.learning_phase_scope(1):
            assert K.learning_phase() == 1
        assert not isinstance(K.learning_phase(), int)
        with pytest.raises(ValueError, match="0 or 1"):
            with K.learning_phase_scope(2):
                pass
    K.set_image_data_format("channels_first")
    try:
        assert K.image_data_format() == "channels_first"
    finally:
        K.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="Unknown data_format"):
        K.set_image_data_format("nhwc")
    assert K.backend() == "tensorflow"
