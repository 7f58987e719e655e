"""Fault probes, round four (sessions): a cond predicate fed a non-scalar at run time is TF's
InvalidArgumentError naming the Switch (before: Python's 'truth value of an array' text)."""

import pytest

import tensorflux as tf


def test_a_vector_fed_as_cond_predicate_names_the_switch_and_the_shape():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool)
        result = tf.cond(pred, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(result, {pred: [True, False]})
            message = str(info.value)
            assert "The second input must be a scalar, but it has shape [2]" in message
            assert "cond/Switch (Switch)" in message and "truth value" not in message
            assert sess.run(result, {pred: False}) == 2.0  # the session goes on
