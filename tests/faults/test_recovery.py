"""A parameter server killed and restarted: MonitoredTrainingSession (TF1's recoverable session)
recreates the chief's session, restores the last checkpoint, and training goes on from its
global step, without the program seeing an error."""

import os

import numpy as np
import pytest
from fault_helpers import TaskProcess, make_cluster

import tensorflux as tf


def _last_checkpoint_step(directory) -> int:
    path = tf.train.latest_checkpoint(directory)
    return int(path.rpartition("-")[2])


def test_a_restarted_ps_is_restored_from_the_last_checkpoint(tmp_path):
    spec = make_cluster(ps=1, workers=1)
    ps = TaskProcess(spec, "ps", 0)
    worker = tf.train.Server(spec, "worker", 0)
    try:
        ps.wait_ready()
        with tf.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(cluster=spec)):
                step = tf.train.get_or_create_global_step()
                weight = tf.get_variable("weight", [], initializer=tf.zeros_initializer())
                train = tf.group(tf.assign_add(weight, 1.0), tf.assign_add(step, 1))
            with tf.train.MonitoredTrainingSession(
                    master=worker.target, is_chief=True, checkpoint_dir=str(tmp_path),
                    save_checkpoint_steps=5, save_checkpoint_secs=None,
                    save_summaries_steps=None, save_summaries_secs=None,
                    log_step_count_steps=None) as sess:
                for _ in range(12):
                    sess.run(train)
                saved = _last_checkpoint_step(str(tmp_path))
                assert 5 <= saved <= 12, saved
                ps.kill()  # SIGKILL: the PS's variables are gone
                ps = TaskProcess(spec, "ps", 0)  # the same address, a new incarnation
                value, resumed = sess.run([weight, step])  # recovered inside this call
                assert not sess.should_stop()
                assert resumed == saved and value == float(saved), (resumed, value, saved)
                for _ in range(3):
                    sess.run(train)
                assert sess.run(step) == saved + 3
        assert os.path.exists(os.path.join(str(tmp_path), "checkpoint"))
        np.testing.assert_equal(_last_checkpoint_step(str(tmp_path)) >= saved, True)
    finally:
        worker.stop()
        ps.kill()


def test_a_plain_session_hears_of_a_restart_between_two_steps_once():
    spec = make_cluster(ps=1, workers=1)
    ps = TaskProcess(spec, "ps", 0)
    worker = tf.train.Server(spec, "worker", 0)
    try:
        ps.wait_ready()
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(5.0, name="ps_variable")
            with tf.Session(worker.target) as sess:
                sess.run(v.initializer)
                assert sess.run(v + 1.0) == 6.0
                ps.kill()
                ps = TaskProcess(spec, "ps", 0)
                ps.wait_ready()  # back before any step noticed it was gone
                with pytest.raises(tf.errors.AbortedError) as info:
                    sess.run(v * 2.0)  # not run on the fresh (uninitialized) state silently
                assert "Task /job:ps/replica:0/task:0 restarted" in str(info.value)
                with pytest.raises(tf.errors.FailedPreconditionError, match="ps_variable"):
                    sess.run(v * 2.0)  # told once; then the new state is used
                sess.run(v.initializer)
                assert sess.run(v * 2.0) == 10.0
    finally:
        worker.stop()
        ps.kill()
