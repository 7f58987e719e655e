"""SparseCross (tf.sparse.cross / cross_hashed): values TensorFlow 2.21 gives for these inputs."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.sparse.cross import sparse_cross, sparse_cross_hashed

COVERED_OPS = {"SparseCross"}


def _inputs():
    a = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], tf.constant([b"u", b"v", b"w", b"x"]),
                        [2, 2])
    b = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 2, 3], tf.int64), [2, 2])
    c = tf.constant([[b"p"], [b"q"]])
    return a, b, c


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_cross_strings_and_hashes_match_tensorflow():
    with tf.Graph().as_default():
        a, b, c = _inputs()
        got = _run([sparse_cross([a, b]), sparse_cross_hashed([a, b], 50),
                    sparse_cross([a, b, c]), sparse_cross_hashed([a, b, c], 50, hash_key=7)])
    strings, hashed, strings3, hashed3 = got
    assert strings.values.tolist() == [b"u_X_1", b"u_X_2", b"v_X_1", b"v_X_2", b"w_X_3",
                                       b"x_X_3"]
    np.testing.assert_array_equal(strings.indices, [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0],
                                                    [1, 1]])
    np.testing.assert_array_equal(strings.dense_shape, [2, 4])
    assert hashed.values.tolist() == [36, 26, 35, 41, 28, 10]
    assert strings3.values.tolist()[-1] == b"x_X_3_X_q"
    assert hashed3.values.tolist() == [43, 8, 44, 23, 36, 39]


def test_cross_empty_rows_int32_and_unbounded_buckets():
    with tf.Graph().as_default():
        a = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([b"x", b"yy", b"z"]), [3, 2])
        b = tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]],
                            tf.constant([3, -7, 12, 5], tf.int32), [3, 2])
        dense = tf.constant([[1], [2], [3]], tf.int64)
        got, unbounded = _run([sparse_cross_hashed([a, b], 1000),
                               sparse_cross_hashed([a, dense])])
    assert got.values.tolist() == [960, 767, 474, 680]  # row 2 has no `a` value: no cross
    np.testing.assert_array_equal(got.dense_shape, [3, 2])
    assert unbounded.values.tolist() == [4007690892585939727, 4122644144232860671,
                                         4320422161534707636]


def test_cross_errors():
    with tf.Graph().as_default():
        a, b, _ = _inputs()
        with pytest.raises(TypeError, match="list"):
            sparse_cross(a)
        with pytest.raises(TypeError, match="float32"):
            sparse_cross([a, tf.constant([[1.0], [2.0]])])
        short = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="batch size"):
            _run(sparse_cross([a, short]))
