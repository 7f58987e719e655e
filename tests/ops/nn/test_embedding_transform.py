"""_embedding_lookup_and_transform (a transform applied to each shard's rows) and the
dtype handling / v2 signature of safe_embedding_lookup_sparse, against NumPy references."""

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.ops.nn.embedding import safe_embedding_lookup_sparse_v2
from tensorflux.ops.nn.functions import _embedding_lookup_and_transform


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


TABLE = np.arange(24, dtype=np.float64).reshape(8, 3) / 7.0


def _shards(count, strategy):
    if strategy == "mod":
        return [TABLE[i::count] for i in range(count)]
    sizes = [len(TABLE) // count + (1 if i < len(TABLE) % count else 0) for i in range(count)]
    return np.split(TABLE, np.cumsum(sizes)[:-1])


@pytest.mark.parametrize("ids_shape", [(), (4,), (2, 3)])
@pytest.mark.parametrize("count,strategy", [(1, "mod"), (3, "mod"), (3, "div")])
def test_transform_sees_rows_and_result_has_ids_shape(ids_shape, count, strategy):
    rng = np.random.RandomState(4)
    ids = rng.randint(0, len(TABLE), size=ids_shape)
    got = _embedding_lookup_and_transform(
        _shards(count, strategy), ids, partition_strategy=strategy,
        transform_fn=lambda rows: tf.reduce_sum(rows * rows, axis=1))
    ref = np.sum(TABLE[ids] ** 2, axis=-1)
    assert got.shape.as_list() == list(ids_shape)
    np.testing.assert_allclose(_run(got), ref, rtol=1e-12)


def test_transform_after_max_norm():
    ids = np.array([[1, 6], [7, 7]])
    got = _embedding_lookup_and_transform(_shards(2, "mod"), ids, max_norm=0.5,
                                          transform_fn=lambda rows: rows * 2.0)
    rows = TABLE[ids]
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    ref = 2.0 * rows * np.minimum(1.0, 0.5 / norms)
    np.testing.assert_allclose(_run(got), ref, rtol=1e-12)


def _ids_and_weights():
    indices = [[0, 0], [0, 1], [2, 0]]
    ids = tf.SparseTensor(indices, tf.constant([1, 5, 2], tf.int64), [3, 2])
    weights = tf.SparseTensor(indices, tf.constant([2.0, 1.0, 4.0], tf.float32), [3, 2])
    return ids, weights


def test_safe_lookup_v2_matches_weighted_mean_and_default_rows():
    table = TABLE.astype(np.float32)
    ids, weights = _ids_and_weights()
    got = _run(safe_embedding_lookup_sparse_v2([table[:4], table[4:]], ids, weights,
                                               default_id=0))
    np.testing.assert_allclose(got[0], (2 * table[1] + table[5]) / 3, rtol=1e-6)
    np.testing.assert_allclose(got[1], table[0], rtol=1e-6)   # empty row -> default_id
    np.testing.assert_allclose(got[2], table[2], rtol=1e-6)


def test_safe_lookup_weights_dtype_decides_shard_dtype():
    ids, weights = _ids_and_weights()
    doubles = [tf.constant(TABLE[:4]), tf.constant(TABLE[4:])]
    with pytest.raises(ValueError):
        tf.nn.safe_embedding_lookup_sparse(doubles, ids, weights)
    # NumPy shards are converted to the weights' dtype.
    got = tf.nn.safe_embedding_lookup_sparse([TABLE[:4], TABLE[4:]], ids, weights)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(_run(got)[2], TABLE[2], rtol=1e-6)
