"""The placer: constraints, colocation, soft placement, errors, greedy vs simple policy."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.runtime import placer, subgraph
from tensorflux.runtime.cost_model import CostModel, CostParams
from tensorflux.runtime.device import Device, local_devices

DEVICES = local_devices(cpu_count=3)


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1].replace("device:", "")


def _place(fetches, feeds=(), policy=placer.SIMPLE, soft=False, memo=None, devices=DEVICES,
           default=None, targets=()):
    nodes, _, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                            list(fetches), list(targets))
    placement = placer.place(nodes, devices, soft, policy=policy, memo=memo,
                             default_device=default)
    return {name: _short(device) for name, device in placement.items()}


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_explicit_and_partial_constraints(graph):
    with tf.device("/cpu:2"):
        a = tf.constant(1.0, name="a")
    with tf.device("/job:localhost/task:0"):
        b = tf.add(a, 1.0, name="b")
    with tf.device("/device:CPU:1"):
        c = tf.multiply(b, 2.0, name="c")
    placement = _place([c])
    assert placement["a"] == "CPU:2" and placement["c"] == "CPU:1"
    assert placement["b"] == "CPU:0"  # partial spec: first matching device (simple policy)


def test_unconstrained_nodes_follow_inputs_and_sources_follow_consumers(graph):
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.square(x, name="y")
    k = tf.constant(3.0, name="k")
    with tf.device("/cpu:2"):
        z = tf.multiply(y, k, name="z")
    placement = _place([z], [x])
    assert placement["y"] == "CPU:1"
    assert placement["k"] == "CPU:2"  # a constant goes where it is consumed
    assert placement["_arg_x_0_0"] == "CPU:1"


def test_missing_device_error_names_op_request_and_devices(graph):
    with tf.device("/cpu:7"):
        bad = tf.constant(1.0, name="bad_const")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        _place([bad])
    text = str(info.value)
    assert "bad_const" in text and "/device:CPU:7" in text
    assert all(d.name in text for d in DEVICES)
    assert "allow_soft_placement" in text


def test_soft_placement_relaxes_to_an_existing_device(graph):
    with tf.device("/cpu:7"):
        bad = tf.constant(1.0, name="bad_const")
    assert _place([bad], soft=True)["bad_const"] == "CPU:0"
    with tf.device("/job:localhost/replica:0/task:0/device:GPU:0"):
        gpu = tf.constant(1.0, name="gpu_const")
    assert _place([gpu], soft=True)["gpu_const"] == "CPU:0"


def test_soft_placement_in_a_session(graph):
    with tf.device("/gpu:0"):
        value = tf.constant(2.0) * 3.0
    config = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        assert sess.run(value) == 6.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="GPU:0"):
            sess.run(value)


def test_colocate_with_shares_the_device(graph):
    with tf.device("/cpu:2"):
        anchor = tf.constant(1.0, name="anchor")
    with tf.colocate_with(anchor):
        friend = tf.constant(5.0, name="friend")
    other = tf.add(friend, 1.0, name="other")
    placement = _place([other, anchor])
    assert placement["friend"] == "CPU:2"
    assert friend.op.colocation_groups() == [b"loc:@anchor"]


def test_conflicting_colocation_is_an_error_unless_soft(graph):
    with tf.device("/cpu:1"):
        anchor = tf.constant(1.0, name="anchor")
    with tf.colocate_with(anchor):
        with tf.device("/cpu:2"):
            friend = tf.identity(anchor, name="friend")
    friend.op._set_device("/cpu:2")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot colocate nodes"):
        _place([friend])
    placement = _place([friend], soft=True)
    assert placement["friend"] == placement["anchor"] == "CPU:1"


def test_reference_consumers_are_colocated_with_their_variable(graph):
    v = tf.Variable(np.zeros(2), name="v")
    with tf.device("/cpu:2"):
        update = tf.assign_add(v, np.ones(2), name="update")
    placement = _place([], targets=[update.op])
    assert placement["v"] == placement["update"] == "CPU:2"
    # The whole graph decides: the initializer step also puts v on CPU:2.
    init = _place([], targets=[v.initializer])
    assert init["v"] == "CPU:2"


def test_a_reference_readers_conflicting_request_is_ignored(graph):
    """As TF: a node reading a variable's reference goes where the variable is, even when it
    asks for another device (replica_device_setter puts IsVariableInitialized on a worker
    while the variable lives on a ps)."""
    with tf.device("/cpu:1"):
        v = tf.Variable(np.zeros(2), name="v")
    with tf.device("/cpu:2"):
        ready = tf.is_variable_initialized(v, name="ready")
    placement = _place([ready])
    assert placement["v"] == placement["ready"] == "CPU:1"


def test_malformed_device_in_a_graph_def_is_an_error(graph):
    a = tf.constant(1.0, name="a")
    a.op._device = "/bogus:thing:1"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Malformed device.*'a'"):
        _place([a])


def test_log_device_placement(graph, capsys):
    with tf.device("/cpu:1"):
        c = tf.constant(1.0, name="logged")
    config = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(c)
    err = capsys.readouterr().err
    assert "logged: (Const): /job:localhost/replica:0/task:0/device:CPU:1" in err


def _two_chains(size=256, depth=3):
    rng = np.random.RandomState(0)
    x = tf.constant(rng.standard_normal((size, size)), name="x")
    y = tf.constant(rng.standard_normal((size, size)), name="y")
    a, b = x, y
    for k in range(depth):
        a = tf.matmul(a, x, name=f"a{k}")
        b = tf.matmul(b, y, name=f"b{k}")
    return a, b


def test_greedy_spreads_independent_heavy_chains(graph):
    a, b = _two_chains()
    placement = _place([a, b], policy=placer.GreedyPolicy())
    chain_a = {placement[f"a{k}"] for k in range(3)}
    chain_b = {placement[f"b{k}"] for k in range(3)}
    assert len(chain_a) == 1 and len(chain_b) == 1, "each chain stays on one device"
    assert chain_a != chain_b, "the two chains overlap on two devices"
    assert placement["x"] == placement["a0"] and placement["y"] == placement["b0"]
    again = _place([a, b], policy=placer.GreedyPolicy())
    assert again == placement, "deterministic"
    simple = _place([a, b], policy=placer.SIMPLE)
    assert set(simple.values()) == {"CPU:0"}


def test_greedy_keeps_cheap_work_together(graph):
    x = tf.constant(np.ones(4), name="x")
    y = x + 1.0
    z = tf.square(y) * 2.0
    placement = _place([z], policy=placer.GreedyPolicy())
    assert set(placement.values()) == {"CPU:0"}


def test_greedy_keeps_cheap_independent_work_on_one_device(graph):
    outs = [tf.tanh(tf.constant(np.ones(4) * k), name=f"t{k}") for k in range(4)]
    total = tf.add_n(outs, name="total")
    placement = _place([total], policy=placer.GreedyPolicy())
    assert set(placement.values()) == {"CPU:0"}


def test_measured_costs_change_greedy_decisions(graph):
    outs = [tf.tanh(tf.constant(np.ones(4) * k), name=f"t{k}") for k in range(2)]
    total = tf.add(outs[0], outs[1], name="total")
    policy = placer.GreedyPolicy()
    assert set(_place([total], policy=policy).values()) == {"CPU:0"}
    from tensorflux.protos import step_stats_pb2

    stats = step_stats_pb2.StepStats()
    for k in range(2):
        stats.dev_stats.add(device="d").node_stats.add(node_name=f"t{k}",
                                                         op_end_rel_micros=5000)
    policy.cost_model.record(stats)
    placement = _place([total], policy=policy)
    assert placement["t0"] != placement["t1"]


def test_greedy_stays_in_the_default_task(graph):
    devices = local_devices("worker", 0, 2) + local_devices("ps", 0, 2)
    a, b = _two_chains(size=128)
    default = devices[0]
    placement = placer.place(
        subgraph.build_step_graph(graph, [], [a, b], [])[0], devices,
        policy=placer.GreedyPolicy(), default_device=default)
    assert all("/job:worker/" in device for device in placement.values())


def test_greedy_keeps_loop_bodies_with_their_inputs(graph):
    x = tf.constant(np.ones((64, 64)), name="x")
    big = tf.matmul(x, x, name="busy")  # keeps CPU:0 busy
    out = tf.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, tf.matmul(m, x)),
                        [tf.constant(0), x])
    placement = _place([big, out[1]], policy=placer.GreedyPolicy())
    loop_nodes = {device for name, device in placement.items() if name.startswith("while/")}
    assert len(loop_nodes) == 1


def test_memo_pins_stateful_nodes(graph):
    v = tf.Variable(np.zeros((8, 8)), name="v")
    memo = {}
    _place([], targets=[v.initializer], policy=placer.GreedyPolicy(), memo=memo)
    first = memo["v"]
    with tf.device("/cpu:2"):
        reader = tf.matmul(v, v, name="reader")
    placement = _place([reader], policy=placer.GreedyPolicy(), memo=memo)
    assert placement["v"] == _short(first) and placement["reader"] == "CPU:2"


def test_cost_model_estimates_and_measurements(graph):
    a = tf.placeholder(tf.float32, [100, 50])
    b = tf.constant(np.ones((50, 20), np.float32))
    product = tf.matmul(a, b, name="product")
    total = tf.add(product, 1.0, name="total")
    nodes, _, _ = subgraph.build_step_graph(graph, [a], [total], [])
    by_name = {n.name: n for n in nodes}
    params = CostParams(op_overhead_us=1.0, flops_per_us=1000.0, bytes_per_us=1000.0,
                        transfer_latency_us=10.0, transfer_bytes_per_us=100.0)
    model = CostModel(params)
    assert model.estimate_micros(by_name["product"]) == pytest.approx(
        1.0 + 2 * 100 * 20 * 50 / 1000.0)
    moved = (100 * 20 + 1 + 100 * 20) * 4
    assert model.estimate_micros(by_name["total"]) == pytest.approx(1.0 + moved / 1000.0)
    assert model.transfer_micros(by_name["product"], 0) == pytest.approx(10.0 + 8000 / 100.0)
    assert model.output_bytes(by_name["product"], 0) == 100 * 20 * 4
    from tensorflux.protos import step_stats_pb2

    stats = step_stats_pb2.StepStats()
    node = stats.dev_stats.add(device="d").node_stats.add(node_name="product")
    node.op_end_rel_micros = 77
    model.record(stats)
    assert model.compute_micros(by_name["product"]) == 77.0
    assert model.measured() == {"product": 77.0}


def test_devices_other_than_cpu_name_their_kernels(graph):
    devices = [Device("/job:localhost/replica:0/task:0/device:CPU:0"),
               Device("/job:localhost/replica:0/task:0/device:CPU:1")]
    with tf.device("/cpu:1"):
        c = tf.constant(1.0, name="c")
    assert _place([c], devices=devices)["c"] == "CPU:1"
