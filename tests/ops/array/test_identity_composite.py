"""tf.identity of a SparseTensor or IndexedSlices gives the same kind of value, each component
through its own Identity op (TF 1.15 composite-tensor identity)."""

import numpy as np

import tensorflux as tf


def test_identity_of_sparse_tensor():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 3], [2, 1]], [1.5, -2.0], [3, 4])
        out = tf.identity(sp, name="copy")
        assert isinstance(out, tf.SparseTensor)
        assert {out.indices.op.type, out.values.op.type, out.dense_shape.op.type} == {"Identity"}
        assert out.values.op.name.startswith("copy")
        with tf.Session() as sess:
            got = sess.run(out)
    np.testing.assert_array_equal(got.indices, [[0, 3], [2, 1]])
    np.testing.assert_allclose(got.values, [1.5, -2.0])
    np.testing.assert_array_equal(got.dense_shape, [3, 4])


def test_identity_of_indexed_slices():
    with tf.Graph().as_default():
        rows = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([4, 0]),
                                tf.constant([5, 2]))
        out = tf.identity(rows)
        no_shape = tf.identity(tf.IndexedSlices(tf.constant([1.0]), tf.constant([0])))
        assert isinstance(out, tf.IndexedSlices) and no_shape.dense_shape is None
        with tf.Session() as sess:
            values, indices, shape = sess.run([out.values, out.indices, out.dense_shape])
    np.testing.assert_allclose(values, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(indices, [4, 0])
    np.testing.assert_array_equal(shape, [5, 2])
