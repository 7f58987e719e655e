"""tf.contrib.checkpoint (TF 1.13-1.15 programs): manager, Checkpointable, inspection."""

import numpy as np
import pytest

import tensorflux as tf


class Net(tf.contrib.checkpoint.Checkpointable):
    def __init__(self):
        self.w = tf.Variable([1.0, 2.0], name="w")
        self.scratch = tf.contrib.checkpoint.NoDependency([tf.Variable(0.0, name="scratch")])


def test_contrib_manager_checkpointable_and_metadata(tmp_path):
    with tf.Graph().as_default():
        net = Net()
        ckpt = tf.train.Checkpoint(net=net)
        manager = tf.contrib.checkpoint.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
        objects = tf.contrib.checkpoint.list_objects(ckpt)
        assert objects[0] is ckpt and net in objects and net.w in objects
        assert not any(o is net.scratch[0] for o in objects)  # NoDependency: not tracked
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = manager.save(session=sess)
            named = tf.train.Saver().save(sess, str(tmp_path / "named"))
    keys = {k for k, _ in tf.train.list_variables(path)}
    assert "net/w/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert not any("scratch" in k for k in keys)
    meta = tf.contrib.checkpoint.object_metadata(path)
    assert isinstance(meta, tf.contrib.checkpoint.CheckpointableObjectGraph)
    assert [c.local_name for c in meta.nodes[0].children] == ["net", "save_counter"]
    with pytest.raises(ValueError, match="object-based"):
        tf.contrib.checkpoint.object_metadata(named)
    with tf.Graph().as_default():
        net = Net()
        status = tf.train.Checkpoint(net=net).restore(path)
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            np.testing.assert_array_equal(sess.run(net.w), [1.0, 2.0])
