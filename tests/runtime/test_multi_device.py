"""Several local devices end to end: same values as one device, errors abort every partition."""

import json
import os
import threading
import time
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.runtime import placer

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
THREE = tf.ConfigProto(device_count={"CPU": 3})
ONE = tf.ConfigProto(device_count={"CPU": 1}, allow_soft_placement=True)


def test_list_devices_and_names():
    with tf.Graph().as_default(), tf.Session(config=THREE) as sess:
        devices = sess.list_devices()
    names = [d.name for d in devices]
    assert names == [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(3)]
    assert {d.device_type for d in devices} == {"CPU"}
    assert len({d.incarnation for d in devices}) == 3
    assert all(d.memory_limit_bytes > 0 for d in devices)


# -- differential: random graphs on 1 device and on 3 devices --------------------------------

_UNARY = ("square", "negative", "abs", "tanh")
_BINARY = ("add", "subtract", "multiply", "maximum")


@st.composite
def _programs(draw):
    steps = []
    for _ in range(draw(st.integers(2, 9))):
        kind = draw(st.sampled_from(("unary", "binary", "binary", "sum", "cond", "control")))
        steps.append((kind, draw(st.integers(0, 3)), draw(st.integers(0, 99)),
                      draw(st.integers(0, 99)), draw(st.integers(0, 2))))
    fetch_count = draw(st.integers(1, 3))
    return steps, fetch_count


def _build(program, with_devices):
    steps, fetch_count = program
    with tf.device("/cpu:0" if with_devices else None):
        x = tf.placeholder(tf.float64, [3], name="x")
        y = tf.placeholder(tf.float64, [3], name="y")
        p = tf.placeholder(tf.bool, [], name="p")
    values = [x, y, tf.constant([0.5, -1.0, 2.0], tf.float64)]
    for k, (kind, op, a, b, device) in enumerate(steps):
        left, right = values[a % len(values)], values[b % len(values)]
        with tf.device(f"/cpu:{device}" if with_devices else None):
            if kind == "unary":
                out = getattr(tf, _UNARY[op])(left)
            elif kind == "binary":
                out = getattr(tf, _BINARY[op])(left, right)
            elif kind == "sum":
                out = tf.reduce_sum(left) + right
            elif kind == "control":
                with tf.control_dependencies([tf.identity(right).op]):
                    out = tf.identity(left * 0.5, name=f"gated_{k}")
            else:
                other = (device + 1) % 3

                def true_fn(left=left, other=other):
                    with tf.device(f"/cpu:{other}" if with_devices else None):
                        return left * 2.0

                out = tf.cond(p, true_fn, lambda right=right: right - 1.0)
        values.append(out)
    return [x, y, p], values[-fetch_count:]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=_programs(), pred=st.booleans(), seed=st.integers(0, 2**16))
def test_random_graphs_give_identical_values_on_three_devices(program, pred, seed):
    rng = np.random.RandomState(seed)
    feed_values = [rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3), pred]
    results = []
    for with_devices, config in ((False, ONE), (True, THREE)):
        with tf.Graph().as_default():
            feeds, fetches = _build(program, with_devices)
            with tf.Session(config=config) as sess:
                results.append(sess.run(fetches, dict(zip(feeds, feed_values))))
    for single, multi in zip(*results):
        np.testing.assert_array_equal(single, multi)


# -- failures -----------------------------------------------------------------------------------

def _run_with_deadline(fn, seconds=20.0):
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - handed to the test
            box["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the step hung"
    return box, time.monotonic() - start


def test_error_in_one_partition_aborts_the_others():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, None, name="x")
        with tf.device("/cpu:1"):
            bad = tf.reshape(x, [5], name="bad_reshape")
        with tf.device("/cpu:0"):
            waiting = tf.add(bad, 1.0, name="waiting")
        with tf.device("/cpu:2"):
            downstream = tf.multiply(waiting, 2.0, name="downstream")
        with tf.Session(config=THREE) as sess:
            box, elapsed = _run_with_deadline(lambda: sess.run(downstream, {x: [1.0] * 4}))
            assert isinstance(box.get("error"), tf.errors.InvalidArgumentError)
            assert "bad_reshape" in str(box["error"])
            assert elapsed < 10.0
            value = sess.run(downstream, {x: [1.0] * 5})
            np.testing.assert_allclose(value, [4.0] * 5)


def test_concurrent_steps_share_nothing_across_steps():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float64, [4], name="x")
        with tf.device("/cpu:1"):
            y = tf.square(x)
        with tf.device("/cpu:2"):
            z = tf.reduce_sum(y) + x
        with tf.Session(config=THREE) as sess:
            errors = []

            def worker(k):
                try:
                    for step in range(15):
                        data = np.arange(4.0) + 10 * k + step
                        np.testing.assert_allclose(sess.run(z, {x: data}),
                                                   np.sum(data ** 2) + data)
                except BaseException as err:  # noqa: BLE001
                    errors.append(err)

            threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert not errors, errors[0]


def test_stateful_ops_keep_their_device_across_signatures():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3), name="v")
        with tf.device("/cpu:2"):
            read_far = tf.identity(v * 2.0)
        with tf.device("/cpu:1"):
            update = tf.assign_add(v, np.ones(3))
        with tf.Session(config=THREE) as sess:
            sess.run(v.initializer)
            memo = sess._backend._placement_memo
            first = memo[v.op.name]
            sess.run(update)
            np.testing.assert_allclose(sess.run(read_far), [4.0] * 3)
            assert memo[v.op.name] == first
            options = tf.RunOptions(output_partition_graphs=True)
            meta = tf.RunMetadata()
            sess.run(read_far, options=options, run_metadata=meta)
            devices = {n.device for g in meta.partition_graphs for n in g.node if n.name == "v"}
            assert devices == {first}


def test_simple_policy_is_selectable():
    with tf.Graph().as_default() as graph:
        a = tf.constant(np.ones((64, 64)))
        b = tf.matmul(a, a)
        c = tf.matmul(a, a)
        from tensorflux.runtime.direct_session import DirectSession

        backend = DirectSession(graph, THREE, placement_policy=placer.SIMPLE)
        plan = backend.get_plan((), (b.op.outputs[0], c), (), False)
        assert [p.device.name[-5:] for p in plan.partitions] == ["CPU:0"]
        values = backend.run_step(plan, [])
        np.testing.assert_allclose(values[0], values[1])
        backend.close()


# -- a GraphDef written by TensorFlow, spread over three devices -------------------------------

def _fixture():
    path = os.path.join(FIXTURES, "while_cond_graph.pb")
    with open(path, "rb") as handle:
        graph_def = tf.GraphDef.FromString(handle.read())
    with open(os.path.join(FIXTURES, "while_cond_graph.json")) as handle:
        return graph_def, json.load(handle)


def test_tensorflow_while_cond_graph_on_three_devices():
    graph_def, expected = _fixture()

    def spread(op):
        return f"/cpu:{zlib.crc32(op.name.encode()) % 3}"

    with tf.Graph().as_default():
        with tf.device(spread):
            x, n, y = tf.import_graph_def(graph_def, return_elements=["x:0", "n:0", "y:0"],
                                          name="")
        with tf.Session(config=THREE) as sess:
            options = tf.RunOptions(output_partition_graphs=True)
            meta = tf.RunMetadata()
            for count, want in sorted(expected["y_by_n"].items()):
                got = sess.run(y, {x: expected["feed_x"], n: int(count)}, options=options,
                               run_metadata=meta)
                np.testing.assert_allclose(got, want)
    assert len(meta.partition_graphs) == 3
    ops = [node.op for g in meta.partition_graphs for node in g.node]
    assert ops.count("_Send") == ops.count("_Recv") > 0


@pytest.mark.parametrize("cpus", [2, 3])
def test_model_parallel_matmul_chains(cpus):
    rng = np.random.RandomState(1)
    w1, w2 = rng.standard_normal((2, 32, 32)) / 6.0
    data = rng.standard_normal((8, 32))
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [8, 32])
        h = [x, x]
        for _ in range(3):
            with tf.device("/cpu:0"):
                h[0] = tf.tanh(tf.matmul(h[0], w1))
            with tf.device(f"/cpu:{cpus - 1}"):
                h[1] = tf.tanh(tf.matmul(h[1], w2))
        out = h[0] + h[1]
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": cpus})) as sess:
            got = sess.run(out, {x: data})
    a, b = data, data
    for _ in range(3):
        a, b = np.tanh(a @ w1), np.tanh(b @ w2)
    np.testing.assert_allclose(got, a + b, rtol=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(salt=st.integers(0, 10**6), count=st.sampled_from([0, 1, 4, 7]))
def test_any_placement_of_a_tensorflow_loop_gives_the_same_values(salt, count):
    graph_def, expected = _fixture()

    def scatter(op):
        return f"/cpu:{zlib.crc32(f'{salt}/{op.name}'.encode()) % 3}"

    with tf.Graph().as_default():
        with tf.device(scatter):
            x, n, y = tf.import_graph_def(graph_def, return_elements=["x:0", "n:0", "y:0"],
                                          name="")
        with tf.Session(config=THREE) as sess:
            box, _ = _run_with_deadline(
                lambda: sess.run(y, {x: expected["feed_x"], n: count}))
    assert "error" not in box, box.get("error")
    np.testing.assert_allclose(box["value"], expected["y_by_n"][str(count)])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(salt=st.integers(0, 10**6), count=st.integers(0, 4))
def test_any_placement_of_nested_loops_and_conds(salt, count):
    def scatter(op):
        return f"/cpu:{zlib.crc32(f'{salt}/{op.name}'.encode()) % 3}"

    with tf.Graph().as_default():
        with tf.device(scatter):
            n = tf.placeholder(tf.int32, [], name="n")

            def outer_body(i, total):
                def inner_body(j, acc):
                    step = tf.cond(tf.equal(j % 2, 0), lambda: tf.cast(i, tf.float32),
                                   lambda: tf.cast(j, tf.float32) * 0.5)
                    return j + 1, acc + step

                _, inner = tf.while_loop(lambda j, acc: j < i + 1, inner_body,
                                         [tf.constant(0), total])
                return i + 1, inner

            _, total = tf.while_loop(lambda i, t: i < n, outer_body,
                                     [tf.constant(0), tf.constant(0.0)])
        with tf.Session(config=THREE) as sess:
            box, _ = _run_with_deadline(lambda: sess.run(total, {n: count}))
    assert "error" not in box, box.get("error")
    expected = sum(float(i) if j % 2 == 0 else j * 0.5 for i in range(count)
                   for j in range(i + 1))
    assert box["value"] == pytest.approx(expected)
