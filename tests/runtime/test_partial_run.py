"""Session.partial_run_setup / partial_run: a step in pieces, each op run once."""

import numpy as np
import pytest

import tensorflux as tf


def test_pieces_feed_and_fetch_in_turn():
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.placeholder(tf.float32, [])
        b = tf.placeholder(tf.float32, [])
        c = tf.placeholder(tf.float32, [])
        total = a + b
        scaled = total * c
        handle = sess.partial_run_setup([total, scaled], [a, b, c])
        assert sess.partial_run(handle, total, {a: 1.0, b: 2.0}) == 3.0
        assert sess.partial_run(handle, scaled, {c: 4.0}) == 12.0


def test_each_op_runs_once_across_pieces():
    with tf.Graph().as_default(), tf.Session() as sess:
        draw = tf.random_uniform([3])
        first, second = draw + 0.0, draw * 1.0
        counter = tf.Variable(0.0)
        bump = tf.assign_add(counter, 1.0)
        tens = bump * 10.0
        sess.run(tf.global_variables_initializer())
        handle = sess.partial_run_setup([first, second, bump, tens])
        np.testing.assert_array_equal(sess.partial_run(handle, first),
                                      sess.partial_run(handle, second))
        assert sess.partial_run(handle, bump) == 1.0
        assert sess.partial_run(handle, tens) == 10.0
        assert sess.run(counter) == 1.0
        # A list of fetches in one piece, and the structure kept.
        handle = sess.partial_run_setup([first, tens])
        got = sess.partial_run(handle, {"x": first, "y": [tens]})
        assert got["x"].shape == (3,) and got["y"] == [20.0]


def test_undeclared_repeated_and_unknown_are_refused():
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.placeholder(tf.float32, [])
        b = tf.placeholder(tf.float32, [])
        out = a * 2.0
        other = b * 3.0
        handle = sess.partial_run_setup([out], [a])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not specified in partial_run"):
            sess.partial_run(handle, other)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not specified in partial_run"):
            sess.partial_run(handle, out, {b: 1.0})
        assert sess.partial_run(handle, out, {a: 2.0}) == 4.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="already been fetched"):
            sess.partial_run(handle, out)
        with pytest.raises(tf.errors.InvalidArgumentError, match="already been fed"):
            sess.partial_run(handle, [], {a: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="unknown"):
            sess.partial_run("nope", out)
        handle = sess.partial_run_setup([out], [a])
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            sess.partial_run(handle, out)


def test_a_control_only_dependency_on_an_earlier_piece_is_refused():
    with tf.Graph().as_default(), tf.Session() as sess:
        counter = tf.Variable(0.0)
        bump = tf.assign_add(counter, 1.0).op
        with tf.control_dependencies([bump]):
            after = tf.constant(5.0) + 1.0
        sess.run(tf.global_variables_initializer())
        handle = sess.partial_run_setup([bump, after])
        sess.partial_run(handle, bump)
        with pytest.raises(tf.errors.UnimplementedError, match="control edge"):
            sess.partial_run(handle, after)
        assert sess.run(counter) == 1.0
