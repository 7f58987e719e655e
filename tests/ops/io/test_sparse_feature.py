"""tf.SparseFeature in parse_example / parse_single_example: index and value features merged
into one SparseTensor of the configured size (values as TF 2.21 gives them)."""

import numpy as np
import pytest

import tensorflux as tf


def _example(ix, jx, values):
    feature = {"ix": tf.train.Feature(int64_list=tf.train.Int64List(value=ix)),
               "jx": tf.train.Feature(int64_list=tf.train.Int64List(value=jx)),
               "val": tf.train.Feature(float_list=tf.train.FloatList(value=values))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_batch_of_two_dimensional_sparse_features():
    records = [_example([3, 1], [0, 2], [0.5, 0.25]), _example([4], [1], [7.0])]
    with tf.Graph().as_default(), tf.Session() as sess:
        parsed = tf.parse_example(records, {
            "sp": tf.SparseFeature(["ix", "jx"], "val", tf.float32, [5, 3])})
        got = sess.run(parsed)
    assert sorted(got) == ["sp"]  # the raw keys are not asked for: not returned
    assert got["sp"].indices.tolist() == [[0, 1, 2], [0, 3, 0], [1, 4, 1]]
    np.testing.assert_allclose(got["sp"].values, [0.25, 0.5, 7.0])
    assert got["sp"].dense_shape.tolist() == [2, 5, 3]


def test_single_example_keeps_requested_raw_keys():
    with tf.Graph().as_default(), tf.Session() as sess:
        parsed = tf.parse_single_example(_example([3, 1], [0, 2], [0.5, 0.25]), {
            "sp": tf.io.SparseFeature("ix", "val", tf.float32, 5, already_sorted=False),
            "ix": tf.VarLenFeature(tf.int64)})
        got = sess.run(parsed)
    assert sorted(got) == ["ix", "sp"]
    assert got["sp"].indices.tolist() == [[1], [3]]
    assert got["sp"].dense_shape.tolist() == [5]
    assert got["ix"].values.tolist() == [3, 1]


def test_conflicting_configurations_are_named():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Conflicting type.*ix"):
            tf.parse_example(["x"], {"sp": tf.SparseFeature("ix", "val", tf.float32, 5),
                                     "ix": tf.VarLenFeature(tf.float32)})
        with pytest.raises(ValueError, match="index key"):
            tf.parse_example(["x"], {"sp": tf.SparseFeature(["ix", "jx"], "val", tf.float32,
                                                            5)})
