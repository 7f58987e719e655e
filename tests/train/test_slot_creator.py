"""tf.train slot_creator (the TF-private module custom TF1 optimizers import): slot names,
placement outside control dependencies, dtypes, values, resource-ness and shape checks."""

import numpy as np
import pytest
from tensorflux.python.training import slot_creator

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_slot_from_variable_copies_the_initial_value():
    w = tf.Variable([[0.5, -2.0], [3.0, 7.25]], name="weights")
    slot = slot_creator.create_slot(w, w.initialized_value() * 3.0, name="triple")
    assert slot.op.name == "weights/triple"
    assert slot not in tf.trainable_variables()
    assert slot.get_shape().as_list() == [2, 2]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(slot), [[1.5, -6.0], [9.0, 21.75]])


def test_zeros_slot_outside_control_dependencies_with_dtype():
    t = tf.constant(np.ones([3], np.float32), name="act")
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        slot = slot_creator.create_zeros_slot(t, name="acc", dtype=tf.float64)
    assert slot.op.name == "act/acc"
    assert slot.dtype.base_dtype == tf.float64
    assert slot.initializer.control_inputs == []
    with tf.Session() as sess:
        sess.run(slot.initializer)
        np.testing.assert_array_equal(sess.run(slot), np.zeros(3))


def test_zeros_slot_of_dynamic_shape_and_resource_primary():
    v = tf.Variable(tf.placeholder_with_default(np.arange(4.0, dtype=np.float32), [None]),
                    validate_shape=False, name="dyn")
    slot = slot_creator.create_zeros_slot(v, name="m")
    r = tf.Variable([1.0, 2.0], use_resource=True, name="res")
    r_slot = slot_creator.create_zeros_slot(r, name="m")
    assert getattr(r_slot, "_is_resource_variable", False)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(slot), np.zeros(4))
        np.testing.assert_array_equal(sess.run(r_slot), [0.0, 0.0])


def test_slot_with_initializer_and_shape_check():
    v = tf.Variable([1.0, 2.0, 3.0], name="bias")
    slot = slot_creator.create_slot_with_initializer(
        v, tf.constant_initializer(0.25), [3], tf.float32, "fill")
    assert slot.op.name == "bias/fill"
    with tf.Session() as sess:
        sess.run(slot.initializer)
        np.testing.assert_allclose(sess.run(slot), [0.25] * 3)
    with pytest.raises(ValueError, match="fully defined shape for slot 'fill2' of bias"):
        slot_creator.create_slot_with_initializer(v, tf.zeros_initializer(), [None],
                                                  tf.float32, "fill2")
