"""Sparse segment reductions (+ their grad ops) and tf.nn.embedding_lookup_sparse /
safe_embedding_lookup_sparse, against NumPy references and TF1 results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.sparse import segment as sso

COVERED_OPS = {"SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
               "SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
               "SparseSegmentSqrtNWithNumSegments", "SparseSegmentMeanGrad",
               "SparseSegmentSqrtNGrad"}

DATA = np.array([[1.0, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]], np.float32)


def _reference(kind, data, indices, ids, rows=None):
    rows = (ids[-1] + 1 if len(ids) else 0) if rows is None else rows
    out = np.zeros((rows,) + data.shape[1:], np.float64)
    counts = np.zeros(rows)
    for i, s in zip(indices, ids):
        out[s] += data[i]
        counts[s] += 1
    if kind == "mean":
        out /= np.maximum(counts, 1)[:, None]
    elif kind == "sqrtn":
        out /= np.sqrt(np.maximum(counts, 1))[:, None]
    return out


FNS = {"sum": tf.sparse_segment_sum, "mean": tf.sparse_segment_mean,
       "sqrtn": tf.sparse_segment_sqrt_n}


@pytest.mark.parametrize("kind", sorted(FNS))
def test_sparse_segment_values(kind):
    indices, ids = [0, 2, 1, 2], [0, 0, 2, 2]
    y = FNS[kind](DATA, indices, ids)
    assert y.shape.as_list() == [None, 4]
    value = run(y)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, _reference(kind, DATA, indices, ids), rtol=1e-6)
    y = FNS[kind](DATA, tf.constant(indices, tf.int64), ids, num_segments=4)
    assert y.shape.as_list() == [4, 4] and y.op.type.endswith("WithNumSegments")
    np.testing.assert_allclose(run(y), _reference(kind, DATA, indices, ids, 4), rtol=1e-6)


def test_sparse_segment_sum_int_and_docs_example():
    c = tf.constant([[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(run(tf.sparse_segment_sum(c, [0, 1], [0, 0])), [[0] * 4])
    np.testing.assert_array_equal(run(tf.sparse.segment_sum(c, [0, 2], [0, 1])),
                                  [[1, 2, 3, 4], [5, 6, 7, 8]])


def test_sparse_segment_errors():
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        run(tf.sparse_segment_sum(DATA, [0, 3], [0, 1]))
    with pytest.raises(errors.InvalidArgumentError, match="not increasing"):
        run(tf.sparse_segment_mean(DATA, [0, 1], [1, 0]))
    with pytest.raises(errors.InvalidArgumentError, match="num_segments"):
        run(tf.sparse_segment_sum(DATA, [0, 1], [0, 3], num_segments=2))
    with pytest.raises(errors.InvalidArgumentError, match="one size"):
        run(tf.sparse_segment_sum(DATA, [0, 1, 2], [0, 1]))
    with pytest.raises(TypeError):
        tf.sparse_segment_mean(np.ones([2, 2], np.int32), [0], [0])


def test_grad_ops():
    grad = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    indices, ids = [0, 2, 2], [0, 0, 1]
    mean = run(sso.SparseSegmentMeanGrad(grad, indices, ids, 3))
    np.testing.assert_allclose(mean, [[0.5, 1.0], [0.0, 0.0], [3.5, 5.0]])
    sqrtn = run(sso.SparseSegmentSqrtNGrad(grad, indices, ids, 3))
    r = 1 / np.sqrt(2)
    np.testing.assert_allclose(sqrtn, [[r, 2 * r], [0, 0], [r + 3, 2 * r + 4]], rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.sampled_from(sorted(FNS)))
def test_sparse_segment_random(seed, kind):
    rng = np.random.RandomState(seed)
    data = rng.randn(5, 2)
    n = rng.randint(0, 8)
    indices = rng.randint(0, 5, n)
    ids = np.sort(rng.randint(0, 4, n))
    with tf.Graph().as_default():
        value = run(FNS[kind](data, indices, ids))
    np.testing.assert_allclose(value, _reference(kind, data, indices, ids), atol=1e-12)


# -- embedding_lookup_sparse --------------------------------------------------------------------

PARAMS = np.arange(12, dtype=np.float32).reshape(6, 2)
ID_INDICES = [[0, 0], [0, 1], [2, 0], [2, 1]]


def _ids():
    return tf.SparseTensor(ID_INDICES, tf.constant([1, 3, 5, 1], tf.int64), [4, 2])


def _weights():
    return tf.SparseTensor(ID_INDICES, [1.0, 2.0, 0.5, -1.0], [4, 2])


# Results of TensorFlow 1.x for the inputs above.
UNWEIGHTED = {"sum": [[8, 10], [0, 0], [12, 14]], "mean": [[4, 5], [0, 0], [6, 7]],
              "sqrtn": [[5.656854, 7.071068], [0, 0], [8.485281, 9.899495]]}
WEIGHTED = {"sum": [[14, 17], [0, 0], [3, 2.5]],
            "mean": [[4.666667, 5.666667], [0, 0], [-6, -5]],
            "sqrtn": [[6.26099, 7.602631], [0, 0], [2.683281, 2.236068]]}
SAFE_WEIGHTED = {"sum": [[14, 17], [0, 0], [3, 2.5], [0, 0]],
                 "mean": [[4.666667, 5.666667], [0, 0], [10, 11], [0, 0]],
                 "sqrtn": [[6.26099, 7.602631], [0, 0], [10, 11], [0, 0]]}


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_lookup_sparse(combiner):
    plain = tf.nn.embedding_lookup_sparse(PARAMS, _ids(), None, combiner=combiner)
    weighted = tf.nn.embedding_lookup_sparse(PARAMS, _ids(), _weights(), combiner=combiner)
    values = run([plain, weighted])
    np.testing.assert_allclose(values[0], UNWEIGHTED[combiner], rtol=1e-5)
    np.testing.assert_allclose(values[1], WEIGHTED[combiner], rtol=1e-5)
    sharded = tf.nn.embedding_lookup_sparse([PARAMS[0::2], PARAMS[1::2]], _ids(), None,
                                            combiner=combiner)
    np.testing.assert_allclose(run(sharded), UNWEIGHTED[combiner], rtol=1e-5)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_safe_embedding_lookup_sparse(combiner):
    y = tf.nn.safe_embedding_lookup_sparse(PARAMS, _ids(), _weights(), combiner=combiner)
    assert y.shape.is_compatible_with([4, 2]) and y.shape.as_list()[1] == 2
    np.testing.assert_allclose(run(y), SAFE_WEIGHTED[combiner], rtol=1e-5)
    y = tf.nn.safe_embedding_lookup_sparse([PARAMS[:3], PARAMS[3:]], _ids(), combiner=combiner,
                                           default_id=0)
    expected = np.array(UNWEIGHTED[combiner] + [[0, 1]], np.float32)
    expected[1] = [0, 1]
    np.testing.assert_allclose(run(y), expected, rtol=1e-5)


def test_safe_embedding_lookup_higher_rank_and_invalid_ids():
    ids = tf.SparseTensor([[0, 0, 0], [0, 1, 1], [1, 1, 0]], tf.constant([1, -1, 4], tf.int64),
                          [2, 2, 2])
    y = tf.nn.safe_embedding_lookup_sparse(PARAMS, ids)
    assert y.shape.is_compatible_with([2, 2, 2]) and y.shape.as_list()[2] == 2
    np.testing.assert_allclose(run(y), [[[2, 3], [0, 0]], [[0, 0], [8, 9]]])


def test_embedding_lookup_sparse_errors():
    with pytest.raises(ValueError, match="combiner"):
        tf.nn.embedding_lookup_sparse(PARAMS, _ids(), None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids"):
        tf.nn.embedding_lookup_sparse(PARAMS, [1, 2], None)
    with pytest.raises(ValueError, match="embedding_weights"):
        tf.nn.safe_embedding_lookup_sparse(None, _ids())


def test_embedding_lookup_sparse_trains_a_variable():
    params = tf.Variable(PARAMS)
    loss = tf.reduce_sum(tf.nn.embedding_lookup_sparse(params, _ids(), _weights(),
                                                       combiner="sum"))
    step = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        after = sess.run(params)
    delta = np.zeros_like(PARAMS)  # id 1 has weights 1 and -1: its gradient cancels
    delta[3] = -2.0
    delta[5] = -0.5
    np.testing.assert_allclose(after, PARAMS + delta)


# -- gradients ----------------------------------------------------------------------------------

def _case(fn, num_segments=None):
    def build(tf):
        data = tf.placeholder(tf.float64, [4, 2])
        y = fn(data, [0, 3, 3, 1], [0, 0, 1, 3], num_segments=num_segments)
        return y, [data], [np.random.RandomState(4).randn(4, 2)]

    return build


GRADIENT_CASES = [
    ("SparseSegmentSum", _case(tf.sparse_segment_sum)),
    ("SparseSegmentMean", _case(tf.sparse_segment_mean)),
    ("SparseSegmentSqrtN", _case(tf.sparse_segment_sqrt_n)),
    ("SparseSegmentSumWithNumSegments", _case(tf.sparse_segment_sum, 5)),
    ("SparseSegmentMeanWithNumSegments", _case(tf.sparse_segment_mean, 5)),
    ("SparseSegmentSqrtNWithNumSegments", _case(tf.sparse_segment_sqrt_n, 5)),
]
