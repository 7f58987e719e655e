"""Variables: VariableDef round trips, assignment to slices (StridedSliceAssign),
validate_shape=False."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf

COVERED_OPS = {"StridedSliceAssign"}


def test_to_proto_from_proto_round_trip():
    with tf.name_scope("outer"):
        v = tf.Variable([1.0, 2.0], name="v", trainable=False)
    proto = v.to_proto()
    assert proto.variable_name == "outer/v:0"
    assert proto.snapshot_name == "outer/v/read:0"
    assert proto.initializer_name == "outer/v/Assign"
    assert not proto.trainable
    scoped = v.to_proto(export_scope="outer")
    assert scoped.variable_name == "v:0"
    assert v.to_proto(export_scope="elsewhere") is None
    w = tf.Variable.from_proto(proto)
    assert w.name == "outer/v:0" and w.initializer is v.initializer
    again = tf.Variable.from_proto(scoped, import_scope="outer")
    assert again.name == "outer/v:0"
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(again.value()), [1.0, 2.0])


@pytest.mark.parametrize("spec,value", [
    ((slice(1, 3),), [[9.0, 8.0, 7.0], [6.0, 5.0, 4.0]]),
    ((0,), [1.5, 2.5, 3.5]),
    ((slice(None), 2), [0.0, -1.0, -2.0, -3.0]),
    ((slice(None, None, 2), slice(1, None)), [[4.0, 4.0], [5.0, 5.0]]),
    ((Ellipsis, 0), [7.0, 7.0, 7.0, 7.0]),
])
def test_sliced_assign_matches_numpy(spec, value):
    init = np.arange(12.0).reshape(4, 3)
    v = tf.Variable(init)
    update = v[spec].assign(value)
    want = init.copy()
    want[spec] = value
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(update), want)
        np.testing.assert_array_equal(sess.run(v), want)
    assert update.op.type == "StridedSliceAssign"


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 5), st.integers(0, 6), st.integers(1, 3), st.integers(0, 99))
def test_sliced_assign_hypothesis(start, stop, step, seed):
    init = np.random.RandomState(seed).randn(6)
    want = init.copy()
    target = want[start:stop:step]
    value = np.arange(target.size, dtype=np.float64)
    want[start:stop:step] = value
    with tf.Graph().as_default():
        v = tf.Variable(init)
        update = v[start:stop:step].assign(value)
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(update), want)


def test_sliced_assign_shape_mismatch_is_invalid_argument():
    v = tf.Variable(np.zeros([4]))
    p = tf.placeholder(tf.float64)
    update = v[1:3].assign(p)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not match r-value"):
            sess.run(update, {p: np.zeros([3])})


def test_sliced_assign_uninitialized_is_failed_precondition():
    v = tf.Variable(np.zeros([4]), name="never_init")
    update = v[0:1].assign([1.0])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="never_init"):
            sess.run(update)


def test_variable_slice_reads_like_a_tensor():
    v = tf.Variable(np.arange(6.0))
    s = v[2:4] * 2
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(s), [4.0, 6.0])


def test_validate_shape_false_allows_reshaping_assign():
    w = tf.Variable(tf.zeros([2]), validate_shape=False)
    assert w.shape.ndims is None
    grow = tf.assign(w, tf.ones([5]), validate_shape=False)
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(grow), np.ones(5))
        np.testing.assert_array_equal(sess.run(w), np.ones(5))
