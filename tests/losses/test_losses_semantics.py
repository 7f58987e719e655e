"""tf.losses against TF 1.15's semantics: `<scope>/value` names, [N, 1] sparse labels,
mean_pairwise_squared_error (sum over the batch, float32 casts), weights=None; the softmax
cross entropy dtype and shape rules."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


LOGITS = np.random.RandomState(0).randn(3, 4).astype(np.float32)
IDS = np.array([1, 2, 0])


@pytest.mark.parametrize("labels", [IDS, IDS.reshape(3, 1)])
@pytest.mark.parametrize("weights", [1.0, [1.0, 2.0, 3.0], [[1.0], [2.0], [3.0]]])
def test_sparse_softmax_cross_entropy_squeezes_labels(labels, weights):
    loss = tf.losses.sparse_softmax_cross_entropy(tf.constant(labels), LOGITS, weights=weights)
    per = -_log_softmax(LOGITS.astype(np.float64))[np.arange(3), IDS]
    w = np.broadcast_to(np.reshape(weights, [-1]), [3])
    np.testing.assert_allclose(run(loss), np.sum(per * w) / np.count_nonzero(w), rtol=1e-5)
    assert loss.name == "sparse_softmax_cross_entropy_loss/value:0"


def test_sparse_labels_of_unknown_rank_are_squeezed_at_run_time():
    labels = tf.placeholder(tf.int64)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, LOGITS)
    per = -_log_softmax(LOGITS.astype(np.float64))[np.arange(3), IDS]
    np.testing.assert_allclose(run(loss, {labels: IDS.reshape(3, 1)}), per.mean(), rtol=1e-5)


def _pairwise_ref(labels, predictions, weights):
    diffs = (np.asarray(predictions, np.float64) - labels).reshape(len(labels), -1)
    w = np.broadcast_to(np.asarray(weights, np.float64).reshape(-1, 1)
                        if np.ndim(weights) else weights, (len(labels), 1)).reshape(-1)
    total = 0.0
    for row, weight in zip(diffs, w):
        n = row.size
        pairs = [(row[i] - row[j]) ** 2 for i in range(n) for j in range(i + 1, n)]
        total += weight * (np.mean(pairs) if pairs else 0.0)
    return total


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32, np.float64])
def test_mean_pairwise_squared_error_matches_pairs(dtype):
    predictions = np.array([[4, 8, 12], [8, 1, 3]], dtype)
    labels = np.array([[1, 9, 2], [-5, -5, 7]], dtype)
    loss = tf.losses.mean_pairwise_squared_error(tf.constant(labels), tf.constant(predictions))
    assert loss.dtype == tf.float32
    assert loss.name.startswith("mean_pairwise_squared_error/value")
    np.testing.assert_allclose(run(loss), _pairwise_ref(labels, predictions, 1.0), rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(2, 5), st.lists(st.sampled_from([0.0, 0.5, 2.0]),
                                                      min_size=4, max_size=4),
       st.integers(0, 99))
def test_mean_pairwise_squared_error_weighted(batch, dims, weights, seed):
    rng = np.random.RandomState(seed)
    labels, predictions = rng.randn(batch, dims), rng.randn(batch, dims)
    w = np.array(weights[:batch]).reshape(batch, 1)
    with tf.Graph().as_default():
        loss = tf.losses.mean_pairwise_squared_error(labels, predictions, weights=w)
        got = run(loss)
    np.testing.assert_allclose(got, _pairwise_ref(labels, predictions, w[:, 0]),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fn,args", [
    (tf.losses.mean_squared_error, ([1.0], [2.0])),
    (tf.losses.absolute_difference, ([1.0], [2.0])),
    (tf.losses.log_loss, ([1.0], [0.7])),
    (tf.losses.mean_pairwise_squared_error, ([[1.0, 2.0]], [[2.0, 2.0]])),
    (tf.losses.sparse_softmax_cross_entropy, ([1], [[0.1, 0.2]])),
])
def test_weights_none_is_value_error(fn, args):
    with pytest.raises(ValueError, match="None values not supported"):
        fn(*args, weights=None)


@pytest.mark.parametrize("fn,args,scope", [
    (tf.losses.softmax_cross_entropy, (np.eye(4)[:3], LOGITS), "softmax_cross_entropy_loss"),
    (tf.losses.mean_squared_error, ([1.0], [2.0]), "mean_squared_error"),
    (tf.losses.absolute_difference, ([1.0], [2.0]), "absolute_difference"),
    (tf.losses.log_loss, ([1.0], [0.7]), "log_loss"),
    (tf.losses.hinge_loss, ([1.0], [0.7]), "hinge_loss"),
    (tf.losses.sigmoid_cross_entropy, ([[1.0]], [[0.7]]), "sigmoid_cross_entropy_loss"),
    (tf.losses.huber_loss, ([1.0], [0.7]), "huber_loss"),
])
def test_losses_are_named_value_and_fetchable(fn, args, scope):
    loss = fn(*args)
    assert loss.name == f"{scope}/value:0"
    assert run(f"{scope}/value:0") == run(loss)
    assert loss in tf.losses.get_losses()


def test_mean_reduction_and_zero_weights():
    loss = tf.losses.mean_squared_error([1.0, 2.0], [3.0, 2.0], weights=[0.0, 0.0])
    assert run(loss) == 0.0
    loss = tf.losses.mean_squared_error([1.0, 2.0], [3.0, 2.0], weights=[2.0, 1.0],
                                        reduction=tf.losses.Reduction.MEAN)
    np.testing.assert_allclose(run(loss), 8.0 / 3.0)


@pytest.mark.parametrize("v2", [False, True])
def test_softmax_cross_entropy_casts_labels(v2):
    fn = tf.nn.softmax_cross_entropy_with_logits_v2 if v2 else \
        tf.nn.softmax_cross_entropy_with_logits
    labels = np.eye(4)[[1, 2, 0]]
    loss = fn(labels=tf.constant(labels), logits=tf.constant(LOGITS))
    assert loss.dtype == tf.float32
    np.testing.assert_allclose(run(loss), -(_log_softmax(LOGITS) * labels).sum(-1), rtol=1e-5)


def test_softmax_cross_entropy_flattens_labels_to_logits_shape():
    labels = np.random.RandomState(1).dirichlet(np.ones(4), size=3).astype(np.float32)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.constant(labels[None]),
                                                      logits=tf.constant(LOGITS))
    assert loss.shape.as_list() == [3]
    np.testing.assert_allclose(run(loss), -(_log_softmax(LOGITS) * labels).sum(-1), rtol=1e-5)


RAW = np.arange(24, dtype=np.float64).reshape(3, 2, 4)


@pytest.mark.parametrize("shape", [(3,), (3, 2), (2, 2, 2, 2), (1, 2)])
def test_compute_weighted_loss_rejects_weights_that_do_not_broadcast(shape):
    weights = np.ones(shape)
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.losses.compute_weighted_loss(RAW, weights=weights)
    fed = tf.placeholder(tf.float64)
    loss = tf.losses.compute_weighted_loss(RAW, weights=fed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="can not be broadcast"):
        run(loss, {fed: weights})


def test_compute_weighted_loss_with_fed_broadcastable_weights():
    weights = np.array([[[2.0]], [[0.0]], [[1.0]]])
    fed = tf.placeholder(tf.float64)
    loss = tf.losses.compute_weighted_loss(RAW, weights=fed)
    expected = (RAW * weights).sum() / np.count_nonzero(weights * np.ones_like(RAW))
    np.testing.assert_allclose(run(loss, {fed: weights}), expected)


def test_softmax_cross_entropy_rejects_per_class_weights():
    labels = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.losses.softmax_cross_entropy(labels, LOGITS[:, :3], weights=np.ones([3, 3]))


@pytest.mark.parametrize("loss_fn", [tf.losses.hinge_loss, tf.losses.mean_squared_error,
                                     tf.losses.absolute_difference, tf.losses.log_loss,
                                     tf.losses.sigmoid_cross_entropy, tf.losses.huber_loss])
def test_losses_reject_labels_of_another_shape(loss_fn):
    with pytest.raises(ValueError, match="incompatible"):
        loss_fn(tf.constant([0.0, 1.0]), tf.constant([[0.3], [0.6]]))


def test_sparse_softmax_weights_of_unknown_rank_lose_their_column():
    fed_weights = tf.placeholder(tf.float32)
    loss = tf.losses.sparse_softmax_cross_entropy(IDS.reshape(3, 1), LOGITS, fed_weights)
    weights = np.array([[1.5], [0.0], [2.0]], np.float32)
    per_row = -_log_softmax(LOGITS)[np.arange(3), IDS]
    expected = (per_row * weights[:, 0]).sum() / 2.0
    np.testing.assert_allclose(run(loss, {fed_weights: weights}), expected, rtol=1e-6)


def test_mean_pairwise_squared_error_weights_must_broadcast_to_labels():
    labels = np.zeros([2, 3, 3], np.float32)
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.losses.mean_pairwise_squared_error(labels, labels + 1, weights=np.ones(2))
    fed = tf.placeholder(tf.float32)
    loss = tf.losses.mean_pairwise_squared_error(labels, labels + 1, weights=fed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="can not be broadcast"):
        run(loss, {fed: np.ones(2)})
