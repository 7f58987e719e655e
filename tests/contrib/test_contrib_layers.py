"""tf.contrib.layers: outputs vs NumPy with the created variables, names, collections."""

import numpy as np
import pytest

import tensorflux as tf

layers = tf.contrib.layers
RNG = np.random.RandomState(3)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _names(collection):
    return [v.op.name for v in tf.get_collection(collection)]


def _conv_same_ref(x, w, stride=1):
    """NumPy NHWC conv with SAME padding."""
    n, h, wd, _ = x.shape
    kh, kw, _, out = w.shape
    oh, ow = -(-h // stride), -(-wd // stride)
    ph = max((oh - 1) * stride + kh - h, 0)
    pw = max((ow - 1) * stride + kw - wd, 0)
    xp = np.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)])
    y = np.zeros((n, oh, ow, out))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            y[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return y


def test_fully_connected_values_names_and_collections():
    x = tf.placeholder(tf.float32, [None, 4])
    y = layers.fully_connected(x, 3, outputs_collections="outs")
    xv = RNG.randn(5, 4).astype(np.float32)
    w, b = tf.trainable_variables()
    assert [w.op.name, b.op.name] == ["fully_connected/weights", "fully_connected/biases"]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == ["fully_connected/weights",
                                                    "fully_connected/biases"]
    out, wv, bv = _run([y, w, b], {x: xv})
    np.testing.assert_allclose(out, np.maximum(xv @ wv + bv, 0), rtol=1e-5, atol=1e-6)
    from tensorflux.contrib.layers import utils
    ends = utils.convert_collection_to_dict("outs")
    assert list(ends) == ["fully_connected"] and ends["fully_connected"] is y


def test_fully_connected_rank3_and_linear_and_scope_reuse():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    y = layers.fully_connected(x, 2, activation_fn=None, scope="fc")
    y2 = layers.fully_connected(x, 2, activation_fn=None, scope="fc", reuse=True)
    assert len(tf.global_variables()) == 2
    assert y.get_shape().as_list() == [2, 3, 2]
    xv = RNG.randn(2, 3, 4).astype(np.float32)
    out, out2, w, b = _run([y, y2] + tf.global_variables(), {x: xv})
    np.testing.assert_allclose(out, xv @ w + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, out2)
    with pytest.raises(ValueError, match="num_outputs"):
        layers.fully_connected(x, 2.0)


def test_conv2d_same_stride_and_variable_shapes():
    x = tf.placeholder(tf.float32, [2, 5, 5, 3])
    y = layers.conv2d(x, 4, [3, 3], stride=2)
    w, b = tf.global_variables()
    assert (w.op.name, b.op.name) == ("Conv/weights", "Conv/biases")
    assert w.get_shape().as_list() == [3, 3, 3, 4]
    xv = RNG.randn(2, 5, 5, 3).astype(np.float32)
    out, wv, bv = _run([y, w, b], {x: xv})
    np.testing.assert_allclose(out, np.maximum(_conv_same_ref(xv, wv, 2) + bv, 0), rtol=1e-4,
                               atol=1e-5)
    assert layers.convolution2d is layers.conv2d
    with pytest.raises(ValueError, match="rank 4"):
        layers.conv2d(tf.placeholder(tf.float32, [2, 3]), 4, 3)


def test_conv2d_transpose_output_shapes_and_values():
    x = tf.placeholder(tf.float32, [1, 3, 3, 2])
    same = layers.conv2d_transpose(x, 4, 3, stride=2, activation_fn=None)
    valid = layers.conv2d_transpose(x, 4, 3, stride=2, padding="VALID", activation_fn=None)
    assert same.get_shape().as_list() == [1, 6, 6, 4]
    assert valid.get_shape().as_list() == [1, 7, 7, 4]
    w = [v for v in tf.global_variables() if v.op.name == "Conv2d_transpose_1/weights"][0]
    assert w.get_shape().as_list() == [3, 3, 4, 2]
    xv = RNG.randn(1, 3, 3, 2).astype(np.float32)
    out, wv = _run([valid, w], {x: xv})
    ref = np.zeros((1, 7, 7, 4))
    for i in range(3):
        for j in range(3):
            ref[0, 2 * i:2 * i + 3, 2 * j:2 * j + 3, :] += np.einsum("c,hwoc->hwo", xv[0, i, j],
                                                                      wv)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


def test_separable_conv2d_variables_and_values():
    x = tf.placeholder(tf.float32, [1, 4, 4, 2])
    y = layers.separable_conv2d(x, 3, [1, 1], depth_multiplier=2, activation_fn=None)
    names = [v.op.name for v in tf.global_variables()]
    assert names == ["SeparableConv2d/depthwise_weights", "SeparableConv2d/pointwise_weights",
                     "SeparableConv2d/biases"]
    dw, pw, b = tf.global_variables()
    xv = RNG.randn(1, 4, 4, 2).astype(np.float32)
    out, dwv, pwv, bv = _run([y, dw, pw, b], {x: xv})
    depth = (xv[..., :, None] * dwv[0, 0]).reshape(1, 4, 4, 4)
    np.testing.assert_allclose(out, depth @ pwv[0, 0] + bv, rtol=1e-4, atol=1e-5)


def test_pools_flatten_one_hot_dropout_softmax_unit_norm():
    xv = RNG.randn(2, 4, 4, 3).astype(np.float32)
    x = tf.constant(xv)
    mp = layers.max_pool2d(x, [2, 2])
    ap = layers.avg_pool2d(x, 2, stride=2)
    flat = layers.flatten(mp)
    assert mp.op.name.startswith("MaxPool2D/") and flat.get_shape().as_list() == [2, 12]
    hot = layers.one_hot_encoding(tf.constant([0, 2]), 3)
    drop_eval = layers.dropout(x, keep_prob=0.5, is_training=False)
    drop_train = layers.dropout(x, keep_prob=0.5)
    sm = layers.softmax(tf.constant(xv[0]))
    un = layers.unit_norm(x, 3)
    mpv, apv, fv, hv, dev, dtv, smv, unv = _run([mp, ap, flat, hot, drop_eval, drop_train,
                                                 sm, un])
    blocks = xv.reshape(2, 2, 2, 2, 2, 3)
    np.testing.assert_allclose(mpv, blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(apv, blocks.mean(axis=(2, 4)), rtol=1e-5)
    np.testing.assert_allclose(fv, mpv.reshape(2, 12))
    np.testing.assert_array_equal(hv, [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(dev, xv)
    kept = dtv != 0
    np.testing.assert_allclose(dtv[kept], 2 * xv[kept], rtol=1e-6)
    e = np.exp(xv[0] - xv[0].max(-1, keepdims=True))
    np.testing.assert_allclose(smv, e / e.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(unv, xv / np.sqrt(1e-7 + (xv ** 2).sum(3, keepdims=True)),
                               rtol=1e-5)


def test_repeat_and_stack_scopes():
    x = tf.placeholder(tf.float32, [1, 4, 4, 1])
    layers.repeat(x, 2, layers.conv2d, 2, [3, 3], scope="conv1")
    layers.stack(tf.placeholder(tf.float32, [1, 3]), layers.fully_connected, [4, (5,)],
                 scope="fc")
    names = [v.op.name for v in tf.global_variables()]
    assert names == ["conv1/conv1_1/weights", "conv1/conv1_1/biases", "conv1/conv1_2/weights",
                     "conv1/conv1_2/biases", "fc/fc_1/weights", "fc/fc_1/biases",
                     "fc/fc_2/weights", "fc/fc_2/biases"]
    with pytest.raises(ValueError, match="stack_args"):
        layers.stack(x, layers.conv2d, 3)


def _bn_graph(fused, updates_collections=tf.GraphKeys.UPDATE_OPS, is_training=True):
    x = tf.placeholder(tf.float32, [4, 2, 2, 3])
    y = layers.batch_norm(x, decay=0.9, scale=True, fused=fused, is_training=is_training,
                          updates_collections=updates_collections)
    return x, y


@pytest.mark.parametrize("fused", [True, False])
def test_batch_norm_training_values_variables_and_updates(fused):
    x, y = _bn_graph(fused)
    names = [v.op.name for v in tf.global_variables()]
    assert names == ["BatchNorm/beta", "BatchNorm/gamma", "BatchNorm/moving_mean",
                     "BatchNorm/moving_variance"]
    assert [v.op.name for v in tf.trainable_variables()] == ["BatchNorm/beta",
                                                             "BatchNorm/gamma"]
    assert _names(tf.GraphKeys.MODEL_VARIABLES) == names
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    xv = RNG.randn(4, 2, 2, 3).astype(np.float32) * 2 + 1
    mean, var = xv.mean(axis=(0, 1, 2)), xv.var(axis=(0, 1, 2))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, _ = sess.run([y, updates], {x: xv})
        mm, mv = sess.run(tf.global_variables()[2:])
    np.testing.assert_allclose(out, (xv - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mm, 0.1 * mean, rtol=1e-5, atol=1e-6)
    n = xv.size / 3
    batch_var = var * n / (n - 1) if fused else var
    np.testing.assert_allclose(mv, 0.9 + 0.1 * batch_var, rtol=1e-5)


def test_batch_norm_in_place_updates_and_inference():
    x, y = _bn_graph(False, updates_collections=None)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    xv = RNG.randn(4, 2, 2, 3).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(y, {x: xv})
        mm = sess.run(tf.global_variables()[2])
    np.testing.assert_allclose(mm, 0.1 * xv.mean(axis=(0, 1, 2)), rtol=1e-5, atol=1e-6)
    x2 = tf.placeholder(tf.float32, [4, 3])
    y2 = layers.batch_norm(x2, is_training=False, scope="inf")
    xv2 = RNG.randn(4, 3).astype(np.float32)
    out = _run(y2, {x2: xv2})
    np.testing.assert_allclose(out, xv2 / np.sqrt(1 + 1e-3), rtol=1e-5)


def test_batch_norm_as_normalizer_inside_arg_scope():
    x = tf.placeholder(tf.float32, [3, 4])
    with layers.arg_scope([layers.fully_connected], normalizer_fn=layers.batch_norm,
                          normalizer_params={"is_training": True}):
        layers.fully_connected(x, 2, scope="fc")
    names = [v.op.name for v in tf.global_variables()]
    assert names == ["fc/weights", "fc/BatchNorm/beta", "fc/BatchNorm/moving_mean",
                     "fc/BatchNorm/moving_variance"]


def test_layer_norm_values():
    x = tf.placeholder(tf.float32, [3, 2, 4])
    y = layers.layer_norm(x)
    beta, gamma = tf.global_variables()
    assert (beta.op.name, gamma.op.name) == ("LayerNorm/beta", "LayerNorm/gamma")
    assert beta.get_shape().as_list() == [4]
    xv = RNG.randn(3, 2, 4).astype(np.float32)
    out = _run(y, {x: xv})
    m = xv.mean(axis=(1, 2), keepdims=True)
    v = xv.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(out, (xv - m) / np.sqrt(v + 1e-12), rtol=1e-4, atol=1e-5)


def test_embed_sequence_and_bias_add():
    ids = tf.constant([[0, 2], [1, 1]])
    emb = layers.embed_sequence(ids, vocab_size=3, embed_dim=2)
    biased = layers.bias_add(tf.ones([2, 3]), activation_fn=tf.nn.relu)
    table = tf.global_variables()[0]
    assert table.op.name == "EmbedSequence/embeddings"
    assert tf.global_variables()[1].op.name == "BiasAdd/biases"
    ev, tv, bv = _run([emb, table, biased])
    np.testing.assert_allclose(ev, tv[[[0, 2], [1, 1]]])
    np.testing.assert_allclose(bv, np.ones((2, 3)))
    with pytest.raises(ValueError, match="vocab size"):
        layers.embed_sequence(ids)


def test_initializers_statistics():
    w = tf.get_variable("w", [400, 600], initializer=layers.xavier_initializer())
    g = tf.get_variable("g", [400, 600],
                        initializer=layers.xavier_initializer(uniform=False, seed=1))
    h = tf.get_variable("h", [3, 3, 50, 64],
                        initializer=layers.variance_scaling_initializer(seed=2))
    wv, gv, hv = _run([w, g, h])
    limit = np.sqrt(6.0 / 1000)
    assert np.abs(wv).max() <= limit and np.abs(wv).max() > 0.95 * limit
    stddev = np.sqrt(1.3 / 500)
    assert np.abs(gv).max() <= 2 * stddev + 1e-6
    # a normal truncated at 2 sigma has std 0.88 sigma
    np.testing.assert_allclose(gv.std(), 0.8796 * stddev, rtol=0.03)
    np.testing.assert_allclose(hv.std(), 0.8796 * np.sqrt(1.3 * 2.0 / 450), rtol=0.05)
    with pytest.raises(TypeError, match="Unknown mode"):
        layers.variance_scaling_initializer(mode="FAN_SUM")
    with pytest.raises(TypeError, match="non-floating"):
        layers.xavier_initializer(dtype=tf.int32)


def test_regularizers_values_and_errors():
    wv = np.array([[1.0, -2.0], [3.0, -4.0]], np.float32)
    w = tf.constant(wv)
    l1 = layers.l1_regularizer(0.5)(w)
    l2 = layers.l2_regularizer(0.1)(w)
    l12 = layers.l1_l2_regularizer(0.5, 0.1)(w)
    total = layers.apply_regularization(layers.l2_regularizer(1.0), [w, w])
    assert layers.l2_regularizer(0.0)(w) is None
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [total]
    l1v, l2v, l12v, tv = _run([l1, l2, l12, total])
    np.testing.assert_allclose(l1v, 0.5 * 10)
    np.testing.assert_allclose(l2v, 0.1 * 30 / 2, rtol=1e-6)
    np.testing.assert_allclose(l12v, 5 + 1.5, rtol=1e-6)
    np.testing.assert_allclose(tv, 30.0)
    with pytest.raises(ValueError, match="integer"):
        layers.l1_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        layers.l2_regularizer(-0.1)
    with pytest.raises(ValueError, match="No weights"):
        layers.apply_regularization(layers.l2_regularizer(1.0))


def test_weights_regularizer_adds_losses_of_created_weights():
    x = tf.placeholder(tf.float32, [None, 3])
    layers.fully_connected(x, 2, weights_regularizer=layers.l2_regularizer(0.5))
    losses = tf.losses.get_regularization_losses()
    assert len(losses) == 1
    lv, wv = _run([losses[0], tf.global_variables()[0]])
    np.testing.assert_allclose(lv, 0.5 * (wv ** 2).sum() / 2, rtol=1e-5)


def test_trainable_false_and_variables_collections_dict():
    x = tf.placeholder(tf.float32, [None, 3])
    layers.fully_connected(x, 2, trainable=False,
                           variables_collections={"weights": ["W"], "biases": ["B"]})
    layers.conv2d(tf.placeholder(tf.float32, [1, 3, 3, 1]), 2, 1, variables_collections=["all"])
    assert tf.trainable_variables() == tf.global_variables()[2:]
    assert _names("W") == ["fully_connected/weights"]
    assert _names("B") == ["fully_connected/biases"]
    assert _names("all") == ["Conv/weights", "Conv/biases"]


def test_summaries_of_activations_and_collections():
    pre = tf.constant([[-1.0, 2.0, 7.0, -3.0]])
    act = tf.nn.relu6(pre, name="act")
    tf.add_to_collection(tf.GraphKeys.ACTIVATIONS, act)
    layers.summarize_activations()
    scalar = layers.summarize_tensor(tf.constant(3.0, name="s"))
    tags = {}
    with tf.Session() as sess:
        for op in tf.get_collection(tf.GraphKeys.SUMMARIES):
            summary = tf.Summary.FromString(sess.run(op))
            for value in summary.value:
                tags[value.tag] = value
    assert tags["act/zeros"].simple_value == 0.5
    assert tags["act/sixes"].simple_value == 0.25
    assert tags["act/activation"].histo.num == 4
    # The tag is the op name, uniquified against the tensor's own op (as in TF1).
    assert tags["s_1"].simple_value == 3.0
    assert scalar in tf.get_collection(tf.GraphKeys.SUMMARIES)
    assert len(layers.summarize_collection(tf.GraphKeys.ACTIVATIONS, name_filter="nothing")) == 0
