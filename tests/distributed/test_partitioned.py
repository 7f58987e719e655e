"""Partitioned variables: the partitioners' rules (checked against TensorFlow 1.x), shards made
by get_variable(partitioner=...), PartitionedVariable, and checkpoints that hold ONE logical
tensor restored into any partitioning or none."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.state.partitioned import PartitionedVariable, _PartitionInfo


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


# (partitioner, shape, dtype, partitions TensorFlow 1.x returns)
PARTITIONER_CASES = [
    (tf.fixed_size_partitioner(3), [10, 4], tf.float32, [3, 1]),
    (tf.fixed_size_partitioner(20), [10, 4], tf.float32, [10, 1]),
    (tf.fixed_size_partitioner(20), [1000, 100], tf.float32, [20, 1]),
    (tf.fixed_size_partitioner(3), [3], tf.string, [3]),
    (tf.fixed_size_partitioner(3, axis=1), [4, 7], tf.float32, [1, 3]),
    (tf.min_max_variable_partitioner(4, min_slice_size=64), [10, 4], tf.float32, [3, 1]),
    (tf.min_max_variable_partitioner(4, min_slice_size=64), [7, 3], tf.float64, [3, 1]),
    (tf.min_max_variable_partitioner(4, min_slice_size=64), [1000, 100], tf.float32, [4, 1]),
    (tf.min_max_variable_partitioner(4, min_slice_size=64), [3], tf.string, [1]),
    (tf.min_max_variable_partitioner(100), [1000, 100], tf.float32, [2, 1]),
    (tf.min_max_variable_partitioner(100), [5, 2000], tf.float32, [1, 1]),
    (tf.variable_axis_size_partitioner(100), [10, 4], tf.float32, [2, 1]),
    (tf.variable_axis_size_partitioner(100), [1000, 100], tf.float32, [1000, 1]),
    (tf.variable_axis_size_partitioner(100), [5, 2000], tf.float32, [5, 1]),
    (tf.variable_axis_size_partitioner(1000, max_shards=2), [1000, 100], tf.float32, [2, 1]),
    (tf.variable_axis_size_partitioner(1000, max_shards=2), [10, 4], tf.float32, [1, 1]),
]


@pytest.mark.parametrize("partitioner, shape, dtype, expected", PARTITIONER_CASES)
def test_partitioners_follow_tensorflow(partitioner, shape, dtype, expected):
    assert partitioner(shape=tf.TensorShape(shape), dtype=dtype) == expected


def test_partitioner_errors():
    with pytest.raises(ValueError, match="along axis 2 when shape is only"):
        tf.min_max_variable_partitioner(2, axis=2)(shape=tf.TensorShape([3, 4]),
                                                   dtype=tf.float32)
    with pytest.raises(ValueError, match="max_shard_bytes is 0"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        tf.variable_axis_size_partitioner(10, max_shards=0)
    with pytest.raises(ValueError, match="not fully defined"):
        tf.variable_axis_size_partitioner(10)(shape=tf.TensorShape([None, 4]),
                                              dtype=tf.float32)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 5), st.integers(1, 8), st.integers(0, 1))
def test_shard_geometry_tiles_the_full_shape(rows, cols, shards, axis):
    full = [rows, cols]
    with tf.Graph().as_default():
        v = tf.get_variable("v", full, partitioner=tf.fixed_size_partitioner(shards, axis))
    n = min(shards, full[axis])
    assert len(v._get_variable_list()) == n and v._get_partitions()[axis] == n
    assert v.get_shape().as_list() == full
    sizes = [p.get_shape().as_list()[axis] for p in v]
    base, extra = divmod(full[axis], n)
    assert sizes == [base + 1] * extra + [base] * (n - extra)
    offsets = [p._get_save_slice_info().var_offset[axis] for p in v]
    assert offsets == list(np.cumsum([0] + sizes[:-1]))
    for i, part in enumerate(v):
        info = part._get_save_slice_info()
        assert part.op.name == f"v/part_{i}" and info.full_name == "v"
        assert info.full_shape == full and info.var_shape == part.get_shape().as_list()


def test_get_variable_makes_named_shards(graph):
    with tf.variable_scope("scope"):
        v = tf.get_variable("v", [10, 3], partitioner=tf.fixed_size_partitioner(3))
    assert isinstance(v, PartitionedVariable)
    assert v.name == "scope/v" and v.dtype == tf.float32
    assert v.get_shape().as_list() == [10, 3] and v.shape.as_list() == [10, 3]
    assert [p.name for p in v] == ["scope/v/part_0:0", "scope/v/part_1:0", "scope/v/part_2:0"]
    assert [p._get_save_slice_info().spec for p in v] == \
        ["10 3 0,4:0,3", "10 3 4,3:0,3", "10 3 7,3:0,3"]
    assert len(v) == 3 and v._get_partitions() == [3, 1]
    assert [x.name for x in tf.global_variables()] == [p.name for p in v]
    assert [x.name for x in tf.trainable_variables()] == [p.name for p in v]
    tensor = tf.convert_to_tensor(v)
    assert tensor.name == "scope/v:0" and tensor.op.type == "Identity"
    assert tensor.shape.as_list() == [10, 3]
    with pytest.raises(TypeError, match="reference"):
        tf.convert_to_tensor(v, as_ref=True)
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)
    # A scalar ignores the partitioner; a single shard still makes a PartitionedVariable.
    with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
        assert isinstance(tf.get_variable("scalar", []), tf.Variable)
    one = tf.get_variable("one", [5, 2], partitioner=tf.fixed_size_partitioner(1))
    assert [p.name for p in one] == ["one/part_0:0"]
    assert tf.convert_to_tensor(one).name == "one:0"


def test_initial_values_and_assign(graph):
    full = np.arange(30, dtype=np.float32).reshape(10, 3)
    from_tensor = tf.get_variable("t", initializer=tf.constant(full),
                                  partitioner=tf.fixed_size_partitioner(3))
    from_value = tf.get_variable("n", [10, 3], initializer=full.astype(np.float64),
                                 partitioner=tf.fixed_size_partitioner(4))
    eye = tf.get_variable("eye", [6, 6], initializer=tf.initializers.identity(),
                          partitioner=tf.fixed_size_partitioner(3, axis=1))
    glorot = tf.get_variable("glorot", [1000, 10], partitioner=tf.fixed_size_partitioner(4))
    ints = tf.get_variable("ints", [5], dtype=tf.int32, initializer=tf.ones_initializer(),
                           partitioner=tf.fixed_size_partitioner(2))
    assigned = from_tensor.assign(full * 2)
    added = from_value.assign_add(np.ones((10, 3), np.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(from_tensor.as_tensor()), full)
        assert from_value.dtype == tf.float32
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(from_value)), full)
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(eye)), np.eye(6))
        values = sess.run(tf.convert_to_tensor(glorot))
        np.testing.assert_array_equal(sess.run(ints.as_tensor()), np.ones(5, np.int32))
        sess.run(assigned)
        np.testing.assert_array_equal(sess.run(from_tensor.as_tensor()), full * 2)
        sess.run(added)
        np.testing.assert_array_equal(sess.run(from_value.as_tensor()), full + 1)
    # Glorot draws with the fans of the FULL shape (partition_info), not of a shard.
    limit = np.sqrt(6.0 / (1000 + 10))
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.9 * limit


def test_reuse_rules_and_errors(graph):
    with tf.variable_scope("sc"):
        a = tf.get_variable("a", [6, 2], partitioner=tf.fixed_size_partitioner(2))
    with tf.variable_scope("sc", reuse=True):
        assert tf.get_variable("a") is a
        assert tf.get_variable("a", [6, 2], partitioner=tf.fixed_size_partitioner(2)) is a
        with pytest.raises(ValueError, match=r"specified partitions \[3, 1\] and found "
                                             r"partitions \[2, 1\]"):
            tf.get_variable("a", [6, 2], partitioner=tf.fixed_size_partitioner(3))
        with pytest.raises(ValueError, match="PartitionedVariable sc/missing does not exist"):
            tf.get_variable("missing", [4], partitioner=tf.fixed_size_partitioner(2))
    with tf.variable_scope("sc", reuse=tf.AUTO_REUSE):
        assert tf.get_variable("a", [6, 2], partitioner=tf.fixed_size_partitioner(2)) is a
    with pytest.raises(ValueError, match="No partitioner was provided, but a partitioned"):
        tf.get_variable("sc/a", [6, 2])
    with pytest.raises(ValueError, match="Partitioned variable with name sc/a already exists"):
        tf.get_variable("sc/a", [6, 2], partitioner=tf.fixed_size_partitioner(2))
    tf.get_variable("plain", [4])
    with pytest.raises(ValueError, match="unpartitioned version of the variable was found"):
        tf.get_variable("plain", [4], partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="Can only slice a variable along one dimension"):
        tf.get_variable("bad", [4, 4], partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("bad2", [None, 4], partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="does not match the Variable's rank"):
        tf.get_variable("bad3", [4, 4], partitioner=lambda shape, dtype: [2])
    with pytest.raises(ValueError, match="Partitioner must be callable"):
        tf.get_variable("bad4", [4], partitioner=3)


def test_partition_info():
    info = _PartitionInfo([10, 3], [4, 0])
    assert info.single_slice_dim([3, 3]) == 0 and info.single_offset([3, 3]) == 4
    whole = _PartitionInfo([10, 3], [0, 0])
    assert whole.single_slice_dim([10, 3]) is None and whole.single_offset([10, 3]) == 0
    with pytest.raises(ValueError, match="exceed"):
        info.single_slice_dim([7, 3])
    with pytest.raises(ValueError, match="not unique"):
        _PartitionInfo([10, 3], [0, 0]).single_slice_dim([3, 2])
    with pytest.raises(ValueError, match="Expected equal length"):
        _PartitionInfo([10, 3], [0])


def test_create_partitioned_variables(graph):
    shards = tf.create_partitioned_variables([5, 2], [2, 1], tf.constant_initializer(2.0))
    named = tf.create_partitioned_variables(
        [5, 2], [2, 1], np.arange(10.0, dtype=np.float32).reshape(5, 2), name="foo")
    assert [v.name for v in shards] == ["PartitionedVariable/part_0:0",
                                        "PartitionedVariable/part_1:0"]
    assert [v.name for v in named] == ["foo/part_0:0", "foo/part_1:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(np.concatenate(sess.run(named)),
                                      np.arange(10.0).reshape(5, 2))
        assert sess.run(shards)[0].tolist() == [[2.0, 2.0]] * 3
    with pytest.raises(ValueError, match="must have the length"):
        tf.create_partitioned_variables([5, 2], [2], tf.zeros_initializer())


# -- checkpoints -----------------------------------------------------------------------------

FULL = np.arange(30, dtype=np.float32).reshape(10, 3)


def _save_partitioned(path, shards, axis=0, sharded=False):
    with tf.Graph().as_default():
        tf.get_variable("emb", initializer=tf.constant(FULL),
                        partitioner=tf.fixed_size_partitioner(shards, axis))
        saver = tf.train.Saver(sharded=sharded)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, path)


@pytest.mark.parametrize("restore_shards", [3, 4, 1])
def test_saved_as_one_tensor_and_restored_into_partitions(tmp_path, restore_shards):
    path = _save_partitioned(str(tmp_path / "model"), 3)
    assert tf.train.list_variables(path) == [("emb", [10, 3])]
    np.testing.assert_array_equal(tf.train.NewCheckpointReader(path).get_tensor("emb"), FULL)
    with tf.Graph().as_default():
        v = tf.get_variable("emb", [10, 3],
                            partitioner=tf.fixed_size_partitioner(restore_shards))
        for var_list in (None, [v], {"emb": v}):
            saver = tf.train.Saver(var_list)
            with tf.Session() as sess:
                saver.restore(sess, path)
                np.testing.assert_array_equal(sess.run(v.as_tensor()), FULL)
                parts = sess.run(list(v))
        offsets = [p._get_save_slice_info().var_offset[0] for p in v]
        for offset, part in zip(offsets, parts):
            np.testing.assert_array_equal(part, FULL[offset:offset + len(part)])


def test_partitioned_restores_into_unpartitioned_and_back(tmp_path):
    path = _save_partitioned(str(tmp_path / "parts"), 3, axis=1)
    with tf.Graph().as_default():
        whole = tf.get_variable("emb", [10, 3])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(whole), FULL)
            sess.run(whole.assign(FULL * 3))
            path = saver.save(sess, str(tmp_path / "whole"))
    with tf.Graph().as_default():
        v = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(2))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(v.as_tensor()), FULL * 3)


def test_restore_shape_mismatch_names_the_variable(tmp_path):
    path = _save_partitioned(str(tmp_path / "model"), 2)
    with tf.Graph().as_default():
        tf.get_variable("emb", [12, 3], partitioner=tf.fixed_size_partitioner(2))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="emb"):
                saver.restore(sess, path)


def test_sharded_saver_with_shards_on_different_devices(tmp_path):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default():
        devices = iter(["/cpu:0", "/cpu:1", "/cpu:0", "/cpu:1"])
        with tf.device(lambda op: next(devices) if op.type == "VariableV2" else ""):
            v = tf.get_variable("emb", initializer=tf.constant(FULL),
                                partitioner=tf.fixed_size_partitioner(3))
            other = tf.get_variable("other", initializer=tf.constant([1.0, 2.0]))
        assert [p.device for p in v] == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:0"]
        saver = tf.train.Saver(sharded=True)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "sharded"))
            sess.run([p.initializer for p in v] + [tf.assign(other, [0.0, 0.0])])
            sess.run(v.assign(np.zeros_like(FULL)))
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(v.as_tensor()), FULL)
            np.testing.assert_array_equal(sess.run(other), [1.0, 2.0])
    assert tf.train.list_variables(path) == [("emb", [10, 3]), ("other", [2])]


def test_training_a_partitioned_dense_variable_matches_unpartitioned():
    rng = np.random.RandomState(1)
    x_data = rng.rand(8, 6).astype(np.float32)
    w0 = rng.rand(6, 2).astype(np.float32)

    def train(partitioner):
        with tf.Graph().as_default():
            w = tf.get_variable("w", initializer=tf.constant(w0), partitioner=partitioner)
            loss = tf.reduce_sum(tf.square(tf.matmul(x_data, tf.convert_to_tensor(w)) - 1.0))
            step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(5):
                    sess.run(step)
                return sess.run([loss, tf.convert_to_tensor(w)])

    loss_parts, w_parts = train(tf.fixed_size_partitioner(4))
    loss_whole, w_whole = train(None)
    np.testing.assert_allclose(w_parts, w_whole, rtol=1e-6)
    np.testing.assert_allclose(loss_parts, loss_whole, rtol=1e-6)


def test_meta_graph_keeps_slice_info(tmp_path):
    path = _save_partitioned(str(tmp_path / "model"), 3)
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path + ".meta")
        shards = tf.global_variables()
        assert [v._get_save_slice_info().spec for v in shards] == \
            ["10 3 0,4:0,3", "10 3 4,3:0,3", "10 3 7,3:0,3"]
        saver = tf.train.Saver()  # a new saver still sees one logical tensor
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(np.concatenate(sess.run(shards)), FULL)
            again = saver.save(sess, str(tmp_path / "again"), write_meta_graph=False)
    assert tf.train.list_variables(again) == [("emb", [10, 3])]
