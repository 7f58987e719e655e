"""get_variable corner cases: ON_READ variables that are explicitly trainable, the message
for initializers that need a shape, and _PartitionInfo's argument checks and slice geometry."""

import pytest

import tensorflux as tf
from tensorflux.ops.state import partitioned
from tensorflux.ops.state import variable_scope as vs


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_on_read_defaults_to_non_trainable_but_an_explicit_true_is_kept(graph):
    on_read = tf.VariableSynchronization.ON_READ
    quiet = tf.get_variable("quiet", [2], synchronization=on_read)
    loud = tf.get_variable("loud", [2], synchronization=on_read, trainable=True)
    plain = tf.get_variable("plain", [2])
    assert [v.name for v in tf.trainable_variables()] == ["loud:0", "plain:0"]
    assert quiet in tf.global_variables() and plain in tf.global_variables()
    with vs.variable_scope("scoped") as scope:
        tf.get_variable("w", [], synchronization=on_read, trainable=True)
        tf.get_variable("x", [], synchronization=tf.VariableSynchronization.ON_WRITE)
    assert [v.name for v in scope.trainable_variables()] == ["scoped/w:0", "scoped/x:0"]
    assert loud.trainable


def test_initializer_needing_arguments_without_a_shape_is_rejected(graph):
    with pytest.raises(ValueError, match="The initializer passed is not valid") as info:
        tf.get_variable("needs_shape", initializer=lambda shape: tf.zeros(shape))
    assert "must be fully defined" in str(info.value)
    made = tf.get_variable("takes_default", initializer=lambda scale=2.0: [scale, scale])
    with tf.Session() as sess:
        sess.run(made.initializer)
        assert sess.run(made).tolist() == [2.0, 2.0]


def test_partition_info_checks_its_arguments():
    for full, offset in ((None, [0, 1]), ([0, 1], None), ("ab", [0, 1]), ([2, 3], "ab")):
        with pytest.raises(TypeError, match="must be a sequence"):
            partitioned._PartitionInfo(full_shape=full, var_offset=offset)
    with pytest.raises(ValueError, match="equal length"):
        partitioned._PartitionInfo(full_shape=[4, 2], var_offset=[0])
    with pytest.raises(ValueError, match="offset"):
        partitioned._PartitionInfo(full_shape=[2, 2], var_offset=[0, 2])


def test_partition_info_slice_geometry():
    info = partitioned._PartitionInfo(full_shape=(10, 4), var_offset=(6, 0))
    assert info.single_slice_dim([4, 4]) == 0 and info.single_offset([4, 4]) == 6
    with pytest.raises(TypeError, match="sequence"):
        info.single_slice_dim(None)
    with pytest.raises(ValueError, match="exceed"):
        info.single_slice_dim([5, 4])
    with pytest.raises(ValueError, match="not unique"):
        info.single_slice_dim([2, 3])
    whole = partitioned._PartitionInfo(full_shape=[10, 4], var_offset=[0, 0])
    assert whole.single_slice_dim([10, 4]) is None and whole.single_offset([10, 4]) == 0
    assert whole.single_slice_dim([10, 1]) == 1
