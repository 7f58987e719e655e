"""SparseCross: tf.sparse.cross / cross_hashed against a Python reference of the definition."""

import itertools

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf
from tensorflux.lib.numerics.farmhash import fingerprint64, fingerprint_cat64

COVERED_OPS = {"SparseCross"}


def _sparse(indices, values, shape, dtype=object):
    return tf.SparseTensor(np.array(indices, np.int64).reshape(-1, 2),
                           np.array(values, dtype=dtype), shape)


def _rows(value, batch):
    out = [[] for _ in range(batch)]
    for (row, col), v in zip(value.indices.tolist(), value.values.tolist()):
        assert col == len(out[row])
        out[row].append(v)
    return out


A = ([[0, 0], [1, 0], [1, 1]], [b"a", b"b", b"c"], [2, 2])
B = ([[0, 0], [1, 0], [1, 2]], [b"d", b"e", b"f"], [2, 3])
D = [[b"f"], [b"g"]]
FEATURES = [[[b"a"], [b"d"], [b"f"]], [[b"b", b"c"], [b"e", b"f"], [b"g"]]]


def test_cross_strings_first_column_slowest_and_sparse_before_dense():
    for order in ([_sparse(*A), _sparse(*B), D], [D, _sparse(*A), _sparse(*B)]):
        value = run(tf.sparse.cross(order))
        want = [[b"_X_".join(p) for p in itertools.product(*row)] for row in FEATURES]
        assert _rows(value, 2) == want
        assert value.dense_shape.tolist() == [2, 4]


def test_cross_mixes_int64_and_strings():
    ints = _sparse([[0, 0], [1, 0]], [7, -3], [2, 1], np.int64)
    dense = tf.constant([[11, 12], [13, 14]], tf.int64)
    value = run(tf.sparse.cross([_sparse(*A), ints, dense]))
    assert _rows(value, 2) == [[b"a_X_7_X_11", b"a_X_7_X_12"],
                               [b"b_X_-3_X_13", b"b_X_-3_X_14", b"c_X_-3_X_13",
                                b"c_X_-3_X_14"]]


@pytest.mark.parametrize("num_buckets,hash_key", [(0, None), (1000, None), (0, 5)])
def test_cross_hashed_folds_fingerprints(num_buckets, hash_key):
    value = run(tf.sparse.cross_hashed([_sparse(*A), _sparse(*B), D], num_buckets=num_buckets,
                                       hash_key=hash_key))
    key = 0xDECAFCAFFE if hash_key is None else hash_key
    want = []
    for row in FEATURES:
        hashes = []
        for cross in itertools.product(*row):
            h = key
            for feature in cross:
                h = fingerprint_cat64(h, fingerprint64(feature))
            hashes.append(h % num_buckets if num_buckets else h % (2 ** 63 - 1))
        want.append(hashes)
    assert _rows(value, 2) == want
    # The known value TensorFlow gives the doc example's first cross (default key).
    if num_buckets == 0 and hash_key is None:
        assert want[0][0] == 5684865645872741371


def test_hashed_int64_features_are_used_as_is():
    ints = _sparse([[0, 0]], [-3], [1, 1], np.int64)
    value = run(tf.sparse.cross_hashed([ints, tf.constant([[b"x"]])], hash_key=1))
    h = fingerprint_cat64(fingerprint_cat64(1, (-3) & (2 ** 64 - 1)), fingerprint64(b"x"))
    assert value.values.tolist() == [h % (2 ** 63 - 1)]


def test_empty_rows_and_errors():
    empty = _sparse(np.zeros([0, 2]), [], [2, 1])
    value = run(tf.sparse.cross([empty, D]))
    assert value.indices.shape == (0, 2) and value.dense_shape.tolist() == [2, 0]
    with pytest.raises(TypeError):
        tf.sparse.cross([tf.constant([[1.0]])])
    with pytest.raises(TypeError):
        tf.sparse.cross(tf.constant([["a"]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch"):
        run(tf.sparse.cross([_sparse(*A), tf.constant([[b"x"]] * 3)]))
