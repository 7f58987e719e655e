"""ParseExampleV2 (the op TF >= 1.15 graphs hold for tf.io.parse_example): a graph holding it
imports and runs, on a vector or a scalar of serialized Examples; ragged keys are refused."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.io.parsing import ParseExampleV2

COVERED_OPS = {"ParseExampleV2"}


def _example(x, tags):
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
        "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=tags)),
    })).SerializeToString()


def _graph_def(scalar, ragged=()):
    with tf.Graph().as_default() as g:
        serialized = tf.placeholder(tf.string, [] if scalar else [None], name="serialized")
        ParseExampleV2(serialized, tf.constant([], tf.string),
                       tf.constant(["tags"]), tf.constant(["x"]),
                       tf.constant(list(ragged), tf.string),
                       [tf.constant([-1.0, -1.0])],
                       num_sparse=1, sparse_types=[tf.int64], Tdense=[tf.float32],
                       dense_shapes=[[2]], ragged_value_types=[], ragged_split_types=[],
                       name="parse")
    return g.as_graph_def()


def test_imported_graph_parses_a_batch():
    with tf.Graph().as_default() as g:
        tf.import_graph_def(_graph_def(scalar=False), name="")
        records = [_example([1.5, 2.0], [7]),
                   tf.train.Example().SerializeToString(),  # x takes its default
                   _example([0.25, -4.0], [3, 9, 11])]
        with tf.Session(graph=g) as sess:
            idx, vals, shape, dense = sess.run(
                ["parse:0", "parse:1", "parse:2", "parse:3"], {"serialized:0": records})
    np.testing.assert_array_equal(idx, [[0, 0], [2, 0], [2, 1], [2, 2]])
    np.testing.assert_array_equal(vals, [7, 3, 9, 11])
    np.testing.assert_array_equal(shape, [3, 3])
    np.testing.assert_array_equal(dense, np.array([[1.5, 2.0], [-1.0, -1.0], [0.25, -4.0]],
                                                  np.float32))


def test_scalar_input_has_no_batch_dimension():
    with tf.Graph().as_default() as g:
        tf.import_graph_def(_graph_def(scalar=True), name="")
        out = [g.get_tensor_by_name(f"parse:{i}") for i in range(4)]
        assert out[3].shape.as_list() == [2]
        with tf.Session(graph=g) as sess:
            idx, vals, shape, dense = sess.run(out, {"serialized:0": _example([3.0, 4.0],
                                                                              [5, 6])})
    np.testing.assert_array_equal(idx, [[0], [1]])
    np.testing.assert_array_equal(vals, [5, 6])
    np.testing.assert_array_equal(shape, [2])
    np.testing.assert_array_equal(dense, [3.0, 4.0])


def test_ragged_keys_are_refused_at_run_time():
    with tf.Graph().as_default() as g:
        tf.import_graph_def(_graph_def(scalar=False, ragged=["r"]), name="")
        with tf.Session(graph=g) as sess, pytest.raises(errors.UnimplementedError,
                                                        match="ragged"):
            sess.run("parse:3", {"serialized:0": [_example([1.0, 2.0], [1])]})


def test_missing_required_feature_is_invalid_argument():
    with tf.Graph().as_default() as g:
        serialized = tf.placeholder(tf.string, [None])
        out = ParseExampleV2(serialized, tf.constant([], tf.string), tf.constant([], tf.string),
                             tf.constant(["x"]), tf.constant([], tf.string),
                             [tf.constant([], tf.float32)], num_sparse=0, sparse_types=[],
                             Tdense=[tf.float32], dense_shapes=[[2]], ragged_value_types=[],
                             ragged_split_types=[])
        with tf.Session(graph=g) as sess, pytest.raises(errors.InvalidArgumentError):
            sess.run(out, {serialized: [tf.train.Example().SerializeToString()]})
