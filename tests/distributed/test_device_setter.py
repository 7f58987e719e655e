"""tf.train.replica_device_setter: round robin and greedy ps placement, merging with explicit
devices (expected devices checked against TensorFlow 1.x), and partitioned shards spread over
the ps tasks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_round_robin_over_three_ps_tasks(graph):
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        variables = [tf.Variable(float(i), name=f"v{i}") for i in range(7)]
        total = tf.add_n(variables)
        x = tf.placeholder(tf.float32, [None])
    assert [v.device for v in variables] == [f"/job:ps/task:{i % 3}" for i in range(7)]
    for v in variables:
        assert v.initializer.device == v.device and v.value().device == v.device
    assert total.device == "/job:worker" and x.device == "/job:worker"
    # A non-callable initial value is computed on the worker, as in TF.
    assert variables[0].initial_value.device == "/job:worker"


def test_explicit_devices_merge_as_in_tensorflow(graph):
    # Expected devices are what TensorFlow 1.x gives for the same program.
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        a, b, c, d = (tf.Variable(1.0, name=n) for n in "abcd")
        x = a + b
        with tf.device("/job:worker/task:1"):
            e = tf.Variable(1.0, name="e")  # pinned to another job: no ps task consumed
            y = x * 2
        with tf.device("/task:2"):
            f = tf.Variable(1.0, name="f")
        with tf.device("/cpu:0"):
            g = tf.Variable(1.0, name="g")
        h = tf.Variable(1.0, name="h")
    with tf.device("/job:worker/task:1"):
        with tf.device(tf.train.replica_device_setter(
                ps_tasks=2, worker_device="/job:worker/task:0/cpu:0")):
            i = tf.Variable(1.0, name="i")
            z = tf.constant(1.0)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)):
        with tf.device("/job:foo/task:1"):
            j = tf.Variable(1.0, name="j")
            zz = tf.constant(2.0)
        k = tf.Variable(1.0, name="k")
    expected = {
        a: "/job:ps/task:0", b: "/job:ps/task:1", c: "/job:ps/task:2", d: "/job:ps/task:0",
        e: "/job:worker/task:1", f: "/job:ps/task:2", g: "/job:ps/task:2/device:CPU:0",
        h: "/job:ps/task:0", i: "/job:ps/task:0", j: "/job:foo/task:1", k: "/job:ps/task:0"}
    assert {v.op.name: v.device for v in expected} == \
        {v.op.name: dev for v, dev in expected.items()}
    assert [v.initial_value.device for v in (e, f, g, i, j)] == [
        "/job:worker/task:1", "/job:worker/task:2", "/job:worker/device:CPU:0",
        "/job:worker/task:0/device:CPU:0", "/job:foo/task:1"]
    assert x.device == "/job:worker" and y.device == "/job:worker/task:1"
    assert z.device == "/job:worker/task:0/device:CPU:0" and zz.device == "/job:foo/task:1"


def test_greedy_load_balancing_by_byte_size(graph):
    sizes = [1000, 10, 20, 500, 30, 600, 5]
    strategy = tf.train.GreedyLoadBalancingStrategy(3, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
        variables = [tf.Variable(tf.zeros([n]), name=f"v{i}") for i, n in enumerate(sizes)]
        scalar = tf.Variable(tf.zeros([], tf.float64), name="scalar")
    loads = np.zeros(3)
    expected = []
    for n in sizes + [2]:  # the float64 scalar weighs like 2 float32s
        task = int(np.argmin(loads))
        expected.append(f"/job:ps/task:{task}")
        loads[task] += 4 * n
    assert [v.device for v in variables + [scalar]] == expected
    assert expected[:4] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2",
                            "/job:ps/task:1"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=1, max_size=12), st.integers(1, 4))
def test_greedy_strategy_matches_argmin_reference(sizes, num_tasks):
    with tf.Graph().as_default():
        strategy = tf.train.GreedyLoadBalancingStrategy(num_tasks, tf.train.byte_size_load_fn)
        with tf.device(tf.train.replica_device_setter(ps_tasks=num_tasks,
                                                      ps_strategy=strategy)):
            devices = [tf.Variable(tf.zeros([n, 2]), name="v").device for n in sizes]
    loads = [0] * num_tasks
    for n, device in zip(sizes, devices):
        task = loads.index(min(loads))
        assert device == f"/job:ps/task:{task}"
        loads[task] += n * 2 * 4


def test_byte_size_load_fn(graph):
    v = tf.Variable(tf.zeros([3, 5], tf.float64))
    assert tf.train.byte_size_load_fn(v.op) == 3 * 5 * 8
    assert tf.train.byte_size_load_fn(tf.constant(np.zeros(7, np.int16)).op) == 14
    split = tf.split(tf.zeros([4]), 2)
    with pytest.raises(ValueError, match="single output"):
        tf.train.byte_size_load_fn(split[0].op)
    with pytest.raises(ValueError, match="not fully defined"):
        tf.train.byte_size_load_fn(tf.placeholder(tf.float32, [None]).op)


def test_cluster_argument_and_no_ps(graph):
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:1"], "worker": ["c:1"]})
    setter = tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")
    with tf.device(setter):
        devices = [tf.Variable(1.0).device for _ in range(3)]
        y = tf.constant(1.0)
    assert devices == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert y.device == "/job:worker/task:0"
    assert tf.train.replica_device_setter(cluster={"worker": ["c:1"]}) is None
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    with tf.device("/job:w"):
        with tf.device(tf.train.replica_device_setter(ps_tasks=0)):  # None clears devices
            assert tf.Variable(1.0).device == ""
    with pytest.raises(TypeError, match="ps_strategy"):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_custom_ps_ops_and_devices(graph):
    setter = tf.train.replica_device_setter(
        ps_tasks=2, ps_device="/job:params/cpu:0", worker_device="/job:trainer/task:3",
        ps_ops=["Placeholder"])
    with tf.device(setter):
        p0 = tf.placeholder(tf.float32)
        p1 = tf.placeholder(tf.float32)
        v = tf.Variable(1.0)
    assert p0.device == "/job:params/task:0/device:CPU:0"
    assert p1.device == "/job:params/task:1/device:CPU:0"
    assert v.device == "/job:trainer/task:3"


def test_partitioned_shards_and_slots_spread_over_ps(graph):
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(3))
        bias = tf.get_variable("bias", [2])
        ids = tf.constant([1, 2, 3])
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids)) + tf.reduce_sum(bias)
        optimizer = tf.train.AdagradOptimizer(0.1)
        train = optimizer.minimize(loss)
    assert [p.device for p in emb] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert bias.device == "/job:ps/task:1"
    for var in list(emb) + [bias]:
        assert optimizer.get_slot(var, "accumulator").device == var.device
    assert train.device == "/job:worker"
