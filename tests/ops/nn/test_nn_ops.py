"""tf.nn activations, softmax, losses with logits, BiasAdd, L2Loss, InTopK, TopK and the
composite nn functions, against NumPy references and values recorded from TensorFlow."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.nn import activations as activation_ops
from tensorflux.ops.nn import core as nn_ops

COVERED_OPS = {
    "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Softplus", "Softsign", "ReluGrad",
    "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad", "SoftplusGrad", "SoftsignGrad",
    "Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits", "BiasAdd", "BiasAddGrad", "L2Loss", "InTopK",
    "InTopKV2", "TopKV2",
}

RNG = np.random.default_rng(7)
SCALE, ALPHA = 1.0507009873554805, 1.6732632423543772


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- activations ----------------------------------------------------------------------------

ACTIVATIONS = [
    ("Relu", tf.nn.relu, lambda x: np.maximum(x, 0)),
    ("Relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("Elu", tf.nn.elu, lambda x: np.where(x < 0, np.expm1(x), x)),
    ("Selu", tf.nn.selu, lambda x: SCALE * np.where(x < 0, ALPHA * np.expm1(x), x)),
    ("LeakyRelu", lambda x: tf.nn.leaky_relu(x, alpha=0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    ("Softplus", tf.nn.softplus, lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)),
    ("Softsign", tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
]


@pytest.mark.parametrize("op_type,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values(op_type, fn, ref, dtype):
    x = np.array([[-80.0, -7.0, -1.5, -0.25], [0.3, 2.0, 6.5, 90.0]], dtype)
    y = fn(tf.constant(x))
    assert y.op.type == op_type
    assert y.shape.as_list() == [2, 4]
    value = run(y)
    assert value.dtype == dtype
    np.testing.assert_allclose(value, ref(x.astype(np.float64)), rtol=1e-6, atol=1e-30)


def test_relu_integer_and_activation_type_errors():
    value = run(tf.nn.relu6(tf.constant([-3, 4, 9], tf.int32)))
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value, [0, 4, 6])
    with pytest.raises(TypeError, match="parameter 'features' has DataType int32"):
        tf.nn.elu(tf.constant([1, 2], tf.int32))


GRAD_OPS = [
    ("ReluGrad", {}, lambda g, f: g * (f > 0)),
    ("Relu6Grad", {}, lambda g, f: g * ((f > 0) & (f < 6))),
    ("EluGrad", {}, lambda g, y: np.where(y < 0, g * (y + 1), g)),
    ("SeluGrad", {}, lambda g, y: np.where(y < 0, g * (y + SCALE * ALPHA), g * SCALE)),
    ("LeakyReluGrad", {"alpha": 0.3}, lambda g, f: np.where(f > 0, g, 0.3 * g)),
    ("SoftplusGrad", {}, lambda g, f: g * np_sigmoid(f)),
    ("SoftsignGrad", {}, lambda g, f: g / (1 + np.abs(f)) ** 2),
]


@pytest.mark.parametrize("op_type,attrs,ref", GRAD_OPS, ids=[a[0] for a in GRAD_OPS])
def test_activation_grad_ops(op_type, attrs, ref):
    g = RNG.standard_normal((3, 4))
    f = np.array([[-2.0, -0.5, 0.5, 7.0]] * 3) + RNG.uniform(-0.1, 0.1, (3, 4))
    y = getattr(activation_ops, op_type)(tf.constant(g), f, **attrs)
    assert y.shape.as_list() == [3, 4]
    np.testing.assert_allclose(run(y), ref(g, f), rtol=1e-12)
    with pytest.raises(ValueError):
        getattr(activation_ops, op_type)(np.ones((2, 3)), np.ones((3, 2)), **attrs)


# -- softmax --------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_softmax_and_log_softmax_any_axis(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = RNG.standard_normal(shape) * 5
    with tf.Graph().as_default():
        s = tf.nn.softmax(x, axis=axis)
        ls = tf.nn.log_softmax(x, dim=axis)
        sv, lsv = run([s, ls])
    assert s.shape.as_list() == shape and ls.shape.as_list() == shape
    np.testing.assert_allclose(sv, np_softmax(x, axis), rtol=1e-12)
    np.testing.assert_allclose(lsv, np.log(np_softmax(x, axis)), rtol=1e-10, atol=1e-12)


def test_softmax_is_stable_and_checks_rank_and_axis():
    x = np.array([[1000.0, 1000.0, -1000.0]], np.float32)
    np.testing.assert_allclose(run(tf.nn.softmax(x)), [[0.5, 0.5, 0.0]])
    log2 = np.log(2)
    np.testing.assert_allclose(run(tf.nn.log_softmax(x)), [[-log2, -log2, -2000 - log2]],
                               rtol=1e-6)
    assert tf.nn.softmax(x).op.type == "Softmax"
    with pytest.raises(ValueError, match="Softmax"):
        tf.nn.softmax(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="dim"):
        tf.nn.softmax(x, axis=2)
    with pytest.raises(ValueError, match="both"):
        tf.nn.softmax(x, axis=1, dim=1)


# -- cross entropies ------------------------------------------------------------------------


def test_softmax_cross_entropy_op_and_broadcast_labels():
    logits = RNG.standard_normal((3, 4))
    labels = np_softmax(RNG.standard_normal((1, 4)))
    loss, backprop = nn_ops.SoftmaxCrossEntropyWithLogits(logits, labels)
    assert loss.shape.as_list() == [3] and backprop.shape.as_list() == [3, 4]
    lv, bv = run([loss, backprop])
    np.testing.assert_allclose(lv, -(labels * np.log(np_softmax(logits))).sum(-1), rtol=1e-12)
    np.testing.assert_allclose(bv, np_softmax(logits) - labels, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="rank 2"):
        nn_ops.SoftmaxCrossEntropyWithLogits(np.ones(3), np.ones(3))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_cross_entropy_wrappers(axis):
    logits = RNG.standard_normal((2, 3, 4))
    labels = np_softmax(RNG.standard_normal((2, 3, 4)), axis)
    expect = -(labels * np.log(np_softmax(logits, axis))).sum(axis)
    logits_t = tf.constant(logits)
    labels_t = tf.constant(labels)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels_t, logits=logits_t,
                                                     axis=axis)
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels_t, logits=logits_t, dim=axis)
    assert v2.shape.as_list() == list(expect.shape)
    np.testing.assert_allclose(run(v2), expect, rtol=1e-12)
    np.testing.assert_allclose(run(v1), expect, rtol=1e-12)
    assert tf.gradients(v1, labels_t)[0] is None
    g_labels = run(tf.gradients(v2, labels_t)[0])
    np.testing.assert_allclose(g_labels, -np.log(np_softmax(logits, axis)), rtol=1e-10)
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits(labels_t, logits_t)


def test_sparse_softmax_cross_entropy():
    logits = RNG.standard_normal((2, 3, 5))
    labels = np.array([[0, 4, 2], [1, 1, 3]], np.int64)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    log_p = np.log(np_softmax(logits))
    expect = -np.take_along_axis(log_p, labels[..., None], -1)[..., 0]
    assert loss.shape.as_list() == [2, 3]
    np.testing.assert_allclose(run(loss), expect, rtol=1e-12)
    loss32, backprop = nn_ops.SparseSoftmaxCrossEntropyWithLogits(
        logits[0], tf.constant([0, 4, 2], tf.int32))
    bv = run(backprop)
    np.testing.assert_allclose(bv, np_softmax(logits[0]) - np.eye(5)[[0, 4, 2]], atol=1e-15)
    with pytest.raises(ValueError, match="rank"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits[0])
    bad = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1, 5]),
                                                         logits=np.zeros((2, 3)))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"label value of 5 which is outside the valid range of \[0, 3\)"):
        run(bad)


def test_sigmoid_and_weighted_cross_entropy():
    x = np.array([-100.0, -3.0, -0.2, 0.0, 0.7, 40.0, 100.0], np.float32)
    z = np.array([0.0, 1.0, 0.3, 1.0, 0.0, 0.5, 1.0], np.float32)
    y = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    expect = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x.astype(np.float64))))
    value = run(y)
    assert value.dtype == np.float32 and np.all(np.isfinite(value))
    np.testing.assert_allclose(value, expect, rtol=1e-6, atol=1e-30)
    w = tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=2.5)
    xd, zd = x.astype(np.float64), z.astype(np.float64)
    expect_w = (1 - zd) * xd + (1 + 1.5 * zd) * (np.log1p(np.exp(-np.abs(xd)))
                                                  + np.maximum(-xd, 0))
    np.testing.assert_allclose(run(w), expect_w, rtol=1e-6, atol=1e-30)
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=np.ones(3), logits=np.ones((3, 1)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0) in the masked Stirling term
def test_log_poisson_loss():
    c = np.array([-1.0, 0.5, 2.0, 0.1])
    z = np.array([0.0, 0.5, 3.0, 7.0])
    value = run(tf.nn.log_poisson_loss(z, c))
    np.testing.assert_allclose(value, np.exp(c) - c * z)
    full = run(tf.nn.log_poisson_loss(z, c, compute_full_loss=True))
    stirling = np.where((z >= 0) & (z <= 1), 0,
                        z * np.log(np.maximum(z, 1e-300)) - z + 0.5 * np.log(2 * np.pi * z))
    np.testing.assert_allclose(full, np.exp(c) - c * z + stirling)


# -- BiasAdd, L2Loss ------------------------------------------------------------------------


@pytest.mark.parametrize("shape,fmt,axis", [((3, 4), "NHWC", 1), ((2, 3, 4), "NHWC", 2),
                                            ((2, 3, 4), "NCHW", 1), ((2, 3, 2, 2), "NCHW", 1),
                                            ((2, 2, 2, 3), None, 3)])
def test_bias_add_and_grad(shape, fmt, axis):
    x = RNG.standard_normal(shape)
    b = RNG.standard_normal(shape[axis])
    y = tf.nn.bias_add(x, b, data_format=fmt)
    g = nn_ops.BiasAddGrad(x, data_format=fmt or "NHWC")
    bshape = [1] * len(shape)
    bshape[axis] = shape[axis]
    assert y.shape.as_list() == list(shape) and g.shape.as_list() == [shape[axis]]
    yv, gv = run([y, g])
    np.testing.assert_allclose(yv, x + b.reshape(bshape))
    np.testing.assert_allclose(gv, x.sum(axis=tuple(i for i in range(len(shape)) if i != axis)))


def test_bias_add_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.nn.bias_add(np.zeros((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="rank"):
        tf.nn.bias_add(np.zeros((2, 3)), np.ones(3), data_format="NCHW")
    x = tf.placeholder(tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="biases"):
        run(tf.nn.bias_add(x, np.ones(2)), {x: np.zeros((2, 3))})


def test_l2_loss():
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    y = tf.nn.l2_loss(x)
    assert y.shape.as_list() == []
    value = run(y)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, (x.astype(np.float64) ** 2).sum() / 2, rtol=1e-6)


# -- InTopK, TopK ---------------------------------------------------------------------------


def test_in_top_k_ties_and_invalid_rows_match_tensorflow():
    p = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2, 2, 2, 2, 2], [0, 1, 2, 3, 4]], np.float32)
    y = tf.nn.in_top_k(p, [2, 4, 1], 2)
    assert y.op.type == "InTopKV2" and y.shape.as_list() == [3]
    # Recorded with TensorFlow 2.21.
    np.testing.assert_array_equal(run(y), [True, True, False])
    p2 = np.array([[1.0, 2.0, 2.0, 0.0], [1.0, np.nan, 0.0, 0.0], [1, 2, 0, 0]], np.float32)
    v1 = nn_ops.InTopK(p2, tf.constant([1, 0, 7], tf.int64), k=1)
    np.testing.assert_array_equal(run(v1), [True, False, False])


def test_top_k_ties_and_errors():
    x = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2, 2, 2, 2, 2]], np.float32)
    values, indices = tf.nn.top_k(x, 3)
    assert values.shape.as_list() == [2, 3] and indices.dtype == tf.int32
    vv, iv = run([values, indices])
    # Recorded with TensorFlow 2.21: ties keep the lower index first.
    np.testing.assert_array_equal(vv, [[3, 3, 3], [2, 2, 2]])
    np.testing.assert_array_equal(iv, [[1, 2, 4], [0, 1, 2]])
    with pytest.raises(ValueError, match="k = 6"):
        tf.nn.top_k(x, 6)
    with pytest.raises(ValueError, match="k >= 0"):
        tf.nn.top_k(x, -1)
    k = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="k = 9"):
        run(tf.nn.top_k(x, k), {k: 9})


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data())
def test_top_k_matches_stable_sort(shape, data):
    k = data.draw(st.integers(0, shape[-1]))
    x = RNG.integers(-3, 3, shape).astype(np.int32)  # many ties
    with tf.Graph().as_default():
        out = nn_ops.TopKV2(x, k, index_type=tf.int64)
        vv, iv = run(list(out))
    order = np.argsort(-x.astype(np.int64), axis=-1, kind="stable")[..., :k]
    assert iv.dtype == np.int64 and vv.dtype == np.int32
    np.testing.assert_array_equal(iv, order)
    np.testing.assert_array_equal(vv, np.take_along_axis(x, order, -1))


# -- composites -----------------------------------------------------------------------------


def test_l2_normalize():
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(run(tf.nn.l2_normalize(x, axis=1)),
                               x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_allclose(run(tf.nn.l2_normalize(x, dim=0)),
                               x / np.linalg.norm(x, axis=0, keepdims=True))
    np.testing.assert_allclose(run(tf.nn.l2_normalize(np.zeros(3), 0)), np.zeros(3))


def test_moments_and_batch_normalization():
    x = RNG.standard_normal((4, 3, 2))
    mean, var = tf.nn.moments(x, axes=[0, 1])
    assert mean.shape.as_list() == [2] and var.shape.as_list() == [2]
    mv, vv = run([mean, var])
    np.testing.assert_allclose(mv, x.mean((0, 1)))
    np.testing.assert_allclose(vv, x.var((0, 1)))
    mean_k, _ = tf.nn.moments(x, [1], keep_dims=True)
    assert mean_k.shape.as_list() == [4, 1, 2]
    half_mean, half_var = tf.nn.moments(x.astype(np.float16), [0])
    assert half_mean.dtype == tf.float16 and half_var.dtype == tf.float16
    offset, scale = RNG.standard_normal(2), RNG.standard_normal(2)
    y = tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    expect = (x - x.mean((0, 1))) / np.sqrt(x.var((0, 1)) + 1e-3) * scale + offset
    np.testing.assert_allclose(run(y), expect, rtol=1e-10)
    bare = tf.nn.batch_normalization(x, mean, var, None, None, 1e-3)
    np.testing.assert_allclose(run(bare), (x - x.mean((0, 1))) / np.sqrt(x.var((0, 1)) + 1e-3))


def test_dropout():
    x = np.ones((200, 50), np.float32)
    y = tf.nn.dropout(x, rate=0.25, seed=3)
    a, b = run([y, y])
    kept = a != 0
    assert a.dtype == np.float32
    np.testing.assert_allclose(a[kept], 1 / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.02
    z = tf.nn.dropout(x, keep_prob=0.5, noise_shape=[200, 1], seed=1)
    zv = run(z)
    assert np.all((zv == 0).all(axis=1) | (zv == 2).all(axis=1))
    x_t = tf.constant(x)
    assert tf.nn.dropout(x_t, rate=0.0) is x_t
    assert tf.nn.dropout(x_t, keep_prob=1.0) is x_t
    rate = tf.placeholder(tf.float32, [])
    np.testing.assert_allclose(run(tf.nn.dropout(x[:2], rate=rate), {rate: 0.0}), x[:2])
    with pytest.raises(ValueError, match="both"):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match=r"range \[0, 1\)"):
        tf.nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError, match="must be provided"):
        tf.nn.dropout(x)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.constant([1, 2]), rate=0.5)


def test_dense_helpers():
    x, w, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    y = tf.nn.xw_plus_b(x, w, b)
    r = tf.nn.relu_layer(x, w, b)
    assert y.op.name == "xw_plus_b" and r.op.name == "relu_layer"
    yv, rv = run([y, r])
    np.testing.assert_allclose(yv, x @ w + b)
    np.testing.assert_allclose(rv, np.maximum(x @ w + b, 0))


def test_embedding_lookup_single_and_sharded():
    table = np.arange(14, dtype=np.float32).reshape(7, 2)
    ids = np.array([[0, 6], [3, 3]], np.int32)
    single = tf.nn.embedding_lookup(tf.constant(table), ids)
    np.testing.assert_array_equal(run(single), table[ids])
    mod_shards = [table[i::3] for i in range(3)]
    mod = tf.nn.embedding_lookup([tf.constant(s) for s in mod_shards], ids)
    assert mod.shape.as_list() == [2, 2, 2]
    np.testing.assert_array_equal(run(mod), table[ids])
    div_shards = [table[0:3], table[3:5], table[5:7]]  # 7 ids over 3 shards: 3, 2, 2
    div = tf.nn.embedding_lookup([tf.constant(s) for s in div_shards], ids,
                                 partition_strategy="div")
    np.testing.assert_array_equal(run(div), table[ids])
    clipped = tf.nn.embedding_lookup(tf.constant(table), [6], max_norm=5.0)
    row = table[6]
    np.testing.assert_allclose(run(clipped)[0], row * 5.0 / np.linalg.norm(row), rtol=1e-6)
    with pytest.raises(ValueError, match="partition strategy"):
        tf.nn.embedding_lookup([table, table], ids, partition_strategy="hash")


def test_embedding_lookup_gradient_is_sparse_on_the_table():
    table = tf.constant(np.arange(8, dtype=np.float64).reshape(4, 2))
    out = tf.nn.embedding_lookup(table, [1, 1, 3])
    (grad,) = tf.gradients(tf.reduce_sum(out), [table])
    value = run(tf.convert_to_tensor(grad))
    np.testing.assert_array_equal(value, [[0, 0], [2, 2], [0, 0], [1, 1]])


# -- gradient cases -------------------------------------------------------------------------


def _away_from_kinks(shape, kinks=(0.0,), lo=-3.0, hi=3.0):
    x = RNG.uniform(lo, hi, shape)
    for k in kinks:
        x = np.where(np.abs(x - k) < 0.1, x + 0.3, x)
    return x


def _unary_case(fn, kinks=(0.0,), lo=-3.0, hi=8.0):
    def build(tf):
        x = tf.placeholder(tf.float64, (2, 3))
        values = _away_from_kinks((2, 3), kinks, lo, hi)
        return fn(tf, x), [x], [values]

    return build


def _grad_op_case(op_type, attrs=None, kinks=(0.0,)):
    def build(tf):
        g = tf.placeholder(tf.float64, (2, 3))
        f = tf.placeholder(tf.float64, (2, 3))
        y = getattr(activation_ops, op_type)(g, f, **(attrs or {}))
        return y, [g, f], [RNG.standard_normal((2, 3)), _away_from_kinks((2, 3), kinks)]

    return build


def _weighted(tf, y, shape):
    return y * tf.constant(RNG.uniform(0.5, 1.5, shape))


def _softmax_case(tf):
    x = tf.placeholder(tf.float64, (2, 3, 4))
    return _weighted(tf, tf.nn.softmax(x, axis=1), (2, 3, 4)), [x], [RNG.standard_normal((2, 3,
                                                                                          4))]


def _log_softmax_case(tf):
    x = tf.placeholder(tf.float64, (3, 4))
    return _weighted(tf, tf.nn.log_softmax(x), (3, 4)), [x], [RNG.standard_normal((3, 4))]


def _softmax_xent_case(tf):
    x = tf.placeholder(tf.float64, (3, 4))
    z = tf.placeholder(tf.float64, (1, 4))
    loss, backprop = nn_ops.SoftmaxCrossEntropyWithLogits(x, z)
    y = _weighted(tf, loss, (3,)) + tf.reduce_sum(_weighted(tf, backprop, (3, 4)))
    return y, [x, z], [RNG.standard_normal((3, 4)), np_softmax(RNG.standard_normal((1, 4)))]


def _sparse_xent_case(tf):
    x = tf.placeholder(tf.float64, (3, 4))
    loss, backprop = nn_ops.SparseSoftmaxCrossEntropyWithLogits(x, [0, 3, 1])
    y = _weighted(tf, loss, (3,)) + tf.reduce_sum(_weighted(tf, backprop, (3, 4)))
    return y, [x], [RNG.standard_normal((3, 4))]


def _bias_add_case(fmt):
    def build(tf):
        x = tf.placeholder(tf.float64, (2, 3, 2))
        b = tf.placeholder(tf.float64, (3 if fmt == "NCHW" else 2,))
        y = _weighted(tf, tf.nn.bias_add(x, b, data_format=fmt), (2, 3, 2))
        return y, [x, b], [RNG.standard_normal((2, 3, 2)), RNG.standard_normal(b.shape)]

    return build


def _bias_add_grad_case(tf):
    g = tf.placeholder(tf.float64, (2, 3, 2))
    y = _weighted(tf, nn_ops.BiasAddGrad(g, data_format="NCHW"), (3,))
    return y, [g], [RNG.standard_normal((2, 3, 2))]


def _l2_loss_case(tf):
    x = tf.placeholder(tf.float64, (2, 3))
    return tf.nn.l2_loss(x), [x], [RNG.standard_normal((2, 3))]


def _top_k_case(tf):
    x = tf.placeholder(tf.float64, (2, 2, 5))
    values, _ = tf.nn.top_k(x, 3)
    values_in = RNG.permutation(20).reshape(2, 2, 5) * 0.5
    return _weighted(tf, values, (2, 2, 3)), [x], [values_in]


def _composite_case(fn, shape=(2, 3)):
    def build(tf):
        x = tf.placeholder(tf.float64, shape)
        return fn(tf, x), [x], [RNG.standard_normal(shape)]

    return build


GRADIENT_CASES = [
    ("Relu", _unary_case(lambda tf, x: tf.nn.relu(x))),
    ("Relu6", _unary_case(lambda tf, x: tf.nn.relu6(x), kinks=(0.0, 6.0))),
    ("Elu", _unary_case(lambda tf, x: tf.nn.elu(x))),
    ("Selu", _unary_case(lambda tf, x: tf.nn.selu(x))),
    ("LeakyRelu", _unary_case(lambda tf, x: tf.nn.leaky_relu(x, 0.3))),
    ("Softplus", _unary_case(lambda tf, x: tf.nn.softplus(x))),
    ("Softsign", _unary_case(lambda tf, x: tf.nn.softsign(x))),
    ("ReluGrad", _grad_op_case("ReluGrad")),
    ("Relu6Grad", _grad_op_case("Relu6Grad", kinks=(0.0, 6.0))),
    ("EluGrad", _grad_op_case("EluGrad")),
    ("SeluGrad", _grad_op_case("SeluGrad")),
    ("LeakyReluGrad", _grad_op_case("LeakyReluGrad", {"alpha": 0.3})),
    ("SoftplusGrad", _grad_op_case("SoftplusGrad")),
    ("SoftsignGrad", _grad_op_case("SoftsignGrad")),
    ("Softmax", _softmax_case),
    ("LogSoftmax", _log_softmax_case),
    ("SoftmaxCrossEntropyWithLogits", _softmax_xent_case),
    ("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_case),
    ("BiasAdd", _bias_add_case("NHWC")),
    ("BiasAdd", _bias_add_case("NCHW")),
    ("BiasAddGrad", _bias_add_grad_case),
    ("L2Loss", _l2_loss_case),
    ("TopKV2", _top_k_case),
    ("sigmoid_cross_entropy_with_logits", _composite_case(
        lambda tf, x: tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.constant([[0.0, 1.0, 0.3]] * 2, tf.float64), logits=x * 4))),
    ("l2_normalize", _composite_case(lambda tf, x: _weighted(tf, tf.nn.l2_normalize(x, 1),
                                                             (2, 3)))),
    ("moments", _composite_case(lambda tf, x: tf.add_n(
        [_weighted(tf, m, (3,)) for m in tf.nn.moments(x, [0])]), shape=(4, 3))),
]


def test_swish_crelu_and_moment_helpers():
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(run(tf.nn.swish(x)), x * np_sigmoid(x), rtol=1e-12)
    np.testing.assert_allclose(run(tf.nn.silu(x, beta=2.0)), x * np_sigmoid(2 * x), rtol=1e-12)
    c = tf.nn.crelu(x)
    assert c.shape.as_list() == [3, 8]
    np.testing.assert_allclose(run(c), np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)],
                                                      -1))
    counts, m_ss, v_ss, shift = tf.nn.sufficient_statistics(x, [0], shift=0.5)
    mean, var = tf.nn.normalize_moments(counts, m_ss, v_ss, shift)
    mv, vv = run([mean, var])
    np.testing.assert_allclose(mv, x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(vv, x.var(0), rtol=1e-10)
    weights = np.array([[1.0], [0.0], [3.0]])
    wm, wv = tf.nn.weighted_moments(x, [0], weights)
    expect_m = (x * weights).sum(0) / 4
    np.testing.assert_allclose(run(wm), expect_m, rtol=1e-12)
    np.testing.assert_allclose(run(wv), (weights * (x - expect_m) ** 2).sum(0) / 4,
                               rtol=1e-12)


def test_embedding_lookup_on_a_variable_gives_sparse_gradient():
    table = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
    out = tf.nn.embedding_lookup(table, [1, 3, 1], max_norm=100.0)
    (grad,) = tf.gradients(tf.reduce_sum(out), [table])
    assert isinstance(grad, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(out), [[2, 3], [6, 7], [2, 3]])
