"""SessionManager: the local init op runs on recovery even without a checkpoint, and a
ready_for_local_init_op needs a local_init_op (TF1 semantics)."""

import numpy as np
import pytest

import tensorflux as tf


def test_recover_without_checkpoint_still_runs_local_init():
    with tf.Graph().as_default():
        model = tf.Variable(5.0, name="model")
        local = tf.Variable(7.0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES],
                            name="local")
        manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                          local_init_op=local.initializer)
        sess, initialized = manager.recover_session("", saver=None, checkpoint_dir=None)
        assert initialized is False
        assert sess.run(tf.is_variable_initialized(local))
        assert not sess.run(tf.is_variable_initialized(model))
        assert sess.run(local) == np.float32(7.0)


def test_recover_from_a_checkpoint_reports_readiness(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver({"v": v})
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver.save(sess, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        v = tf.Variable([0.0, 0.0], name="v")
        manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
        sess, initialized = manager.recover_session("", saver=tf.train.Saver({"v": v}),
                                                    checkpoint_dir=str(tmp_path))
        assert initialized is True
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_ready_for_local_init_without_local_init_op_is_refused():
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(ValueError, match="must also pass a local_init_op"):
            tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())


def test_init_from_checkpoint_takes_pairs(tmp_path):
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=np.arange(4, dtype=np.float32))
        with tf.Session() as sess:
            sess.run(w.initializer)
            tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        a = tf.get_variable("a", [4])
        b = tf.get_variable("b", [4])
        tf.train.init_from_checkpoint(str(tmp_path), [("w", a), ("w", "b")])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(a), np.arange(4))
            np.testing.assert_array_equal(sess.run(b), np.arange(4))
