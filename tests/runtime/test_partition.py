"""partition(): _Send/_Recv pairs, dedup, control edges, conds and loops across devices."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework.op_def import get_op_def
from tensorflux.runtime import partition as partition_mod
from tensorflux.runtime import placer, subgraph
from tensorflux.runtime.device import local_devices
from tensorflux.runtime.graph_ir import Node

DEVICES = local_devices(cpu_count=3)
BY_NAME = {d.name: d for d in DEVICES}


def _short(device: str) -> str:
    return device.rsplit("/", 1)[-1].replace("device:", "")


def _partition(fetches, feeds=(), config=None):
    graph = tf.get_default_graph()
    nodes, _, _ = subgraph.build_step_graph(graph, list(feeds), list(fetches), [])
    placer.place(nodes, DEVICES, policy=placer.SIMPLE)
    return partition_mod.partition(nodes, BY_NAME, config)


def _dump(groups) -> dict:
    """{CPU:i: sorted lines} with transfers shown by tensor name and peer device."""
    out = {}
    for device, nodes in groups.items():
        lines = []
        for node in nodes:
            ins = [src.name if idx == 0 else f"{src.name}:{idx}" for src, idx in node.inputs]
            ins += [f"^{src.name}" for src in node.control_inputs]
            text = f"{node.name} = {node.op}({', '.join(ins)})"
            if node.op == "_Send":
                text += f" [{node.attrs['tensor_name']} -> {_short(node.attrs['recv_device'])}]"
            if node.op == "_Recv":
                text += f" [{node.attrs['tensor_name']} <- {_short(node.attrs['send_device'])}]"
            lines.append(text)
        out[_short(device)] = sorted(lines)
    return out


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_one_transfer_per_tensor_and_destination(graph):
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, [2], name="a")
    with tf.device("/cpu:1"):
        b = tf.add(a, a, name="b")
        c = tf.multiply(a, b, name="c")
    with tf.device("/cpu:2"):
        d = tf.subtract(a, c, name="d")
    dump = _dump(_partition([d], [a]))
    assert dump["CPU:0"] == [
        "_arg_a_0_0 = _Arg()",
        "_arg_a_0_0/_send_1 = _Send(_arg_a_0_0) [edge_1__arg_a_0_0 -> CPU:1]",
        "_arg_a_0_0/_send_2 = _Send(_arg_a_0_0) [edge_2__arg_a_0_0 -> CPU:2]",
    ]
    assert dump["CPU:1"] == [
        "_arg_a_0_0/_recv_1 = _Recv() [edge_1__arg_a_0_0 <- CPU:0]",
        "b = AddV2(_arg_a_0_0/_recv_1, _arg_a_0_0/_recv_1)",
        "c = Mul(_arg_a_0_0/_recv_1, b)",
        "c/_send_3 = _Send(c) [edge_3_c -> CPU:2]",
    ]
    assert dump["CPU:2"] == [
        "_arg_a_0_0/_recv_2 = _Recv() [edge_2__arg_a_0_0 <- CPU:0]",
        "c/_recv_3 = _Recv() [edge_3_c <- CPU:1]",
        "d = Sub(_arg_a_0_0/_recv_2, c/_recv_3)",
    ]


def test_transfer_attrs_and_rendezvous_keys(graph):
    with tf.device("/cpu:0"):
        a = tf.constant([1, 2], name="a")
    with tf.device("/cpu:2"):
        b = tf.add(a, a, name="b")
        c = tf.multiply(a, a, name="c")
    groups = _partition([b, c])
    sends = [n for n in groups[DEVICES[0].name] if n.op == "_Send"]
    recvs = [n for n in groups[DEVICES[2].name] if n.op == "_Recv"]
    assert len(sends) == len(recvs) == 1
    send, recv = sends[0], recvs[0]
    for key in ("tensor_name", "send_device", "send_device_incarnation", "recv_device"):
        assert send.attrs[key] == recv.attrs[key]
    assert send.attrs["send_device_incarnation"] == DEVICES[0].incarnation
    assert send.attrs["recv_device"] == DEVICES[2].name and not send.attrs["client_terminal"]
    assert send.attrs["T"] == recv.attrs["tensor_type"] == tf.int32
    assert recv.output_dtypes == [tf.int32]


def test_control_edge_is_a_dummy_transfer(graph):
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
        first = tf.identity(a, name="first")
    with tf.device("/cpu:1"):
        with tf.control_dependencies([first]):
            second = tf.add(a, 1.0, name="second")
    dump = _dump(_partition([second]))
    assert "first/_control_1 = Const(^first)" in dump["CPU:0"]
    assert "first/_send_1 = _Send(first/_control_1) [edge_1_first -> CPU:1]" in dump["CPU:0"]
    assert "first/_recv_1 = _Recv() [edge_1_first <- CPU:0]" in dump["CPU:1"]
    assert any(line.startswith("second = AddV2(") and line.endswith("^first/_recv_1)")
               for line in dump["CPU:1"])


def test_partition_is_deterministic(graph):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:1"):
        y = tf.square(x) + x
    with tf.device("/cpu:2"):
        z = tf.reduce_sum(y * x)
    first = _dump(_partition([z, y], [x]))
    second = _dump(_partition([z, y], [x]))
    assert first == second
    assert list(first) == ["CPU:0", "CPU:1", "CPU:2"]


def test_single_device_nodes_are_untouched(graph):
    a = tf.constant(2.0)
    b = a * a
    groups = _partition([b])
    assert list(groups) == [DEVICES[0].name]
    assert sorted(n.op for n in groups[DEVICES[0].name]) == ["Const", "Mul"]


def test_unplaced_or_unknown_device_is_an_error():
    const = get_op_def("Const")
    node = Node("a", "Const", {"value": np.float32(1), "dtype": tf.float32}, [], [],
                output_dtypes=[tf.float32], op_def=const)
    with pytest.raises(tf.errors.InternalError, match="'a'"):
        partition_mod.partition([node], BY_NAME)
    node.assigned_device = "/job:nowhere/replica:0/task:0/device:CPU:0"
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a device of this session"):
        partition_mod.partition([node], BY_NAME)


def _run(fetches, feed_dict=None, cpus=3, config=None):
    config = config or tf.ConfigProto(device_count={"CPU": cpus})
    with tf.Session(config=config) as sess:
        options = tf.RunOptions(output_partition_graphs=True)
        meta = tf.RunMetadata()
        value = sess.run(fetches, feed_dict, options=options, run_metadata=meta)
    return value, meta


def test_cond_branches_on_other_devices(graph):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [2], name="x")
        p = tf.placeholder(tf.bool, [], name="p")

    def true_fn():
        with tf.device("/cpu:1"):
            return tf.square(x) + 1.0

    def false_fn():
        with tf.device("/cpu:2"):
            return x * -3.0

    y = tf.cond(p, true_fn, false_fn)
    data = np.array([1.5, -2.0], np.float32)
    for pred, expected in ((True, data ** 2 + 1.0), (False, data * -3.0)):
        value, meta = _run(y, {x: data, p: pred})
        np.testing.assert_allclose(value, expected)
    assert len(meta.partition_graphs) == 3


def _loop(n_value, body_device, cond_device="/cpu:0"):
    with tf.device(cond_device):
        n = tf.placeholder(tf.int32, [], name="n")
        x = tf.placeholder(tf.float32, [3], name="x")

    def cond(i, acc):
        return i < n

    def body(i, acc):
        with tf.device(body_device):
            acc = acc * 2.0 + x
        return i + 1, acc

    with tf.device(cond_device):
        result = tf.while_loop(cond, body, [tf.constant(0), tf.zeros([3])])
    return result, {n: n_value, x: np.array([1.0, -2.0, 0.5], np.float32)}


def _expected_loop(n):
    acc = np.zeros(3, np.float32)
    for _ in range(n):
        acc = acc * 2.0 + np.array([1.0, -2.0, 0.5], np.float32)
    return acc


@pytest.mark.parametrize("n", [0, 1, 5])
def test_loop_body_split_over_devices(graph, n):
    (count, acc), feeds = _loop(n, "/cpu:1")
    (got_count, got_acc), meta = _run([count, acc], feeds)
    assert got_count == n
    np.testing.assert_allclose(got_acc, _expected_loop(n))
    cpu1 = [g for g in meta.partition_graphs if any("CPU:1" in nd.device for nd in g.node)][0]
    control = sorted(node.op for node in cpu1.node if node.name.startswith("_cloop"))
    assert control == ["Enter", "Merge", "NextIteration", "Switch", "_Recv"]
    loop_cond_recvs = [node for node in cpu1.node if node.op == "_Recv"
                       and node.attr["tensor_name"].s.decode().endswith("_while/LoopCond")]
    assert len(loop_cond_recvs) == 1


def test_control_loop_dump_names_the_state_machine(graph):
    (count, acc), feeds = _loop(3, "/cpu:1")
    dump = _dump(_partition([count, acc], list(feeds)))
    cloop = [line for line in dump["CPU:1"] if line.startswith("_cloop")]
    assert len(cloop) == 5
    gate = [line for line in dump["CPU:0"] if line.startswith("_cloop")]
    assert len(gate) == 2 and " = Const(^Const)" in gate[0] and " = _Send(" in gate[1]
    enter = [line for line in cloop if " = Enter(" in line][0]
    assert "/Gate/_recv_" in enter
    merge = [line for line in cloop if " = Merge(" in line][0]
    assert "/Enter, " in merge and "/NextIteration)" in merge
    switch = [line for line in cloop if " = Switch(" in line][0]
    assert "LoopCond/_recv_" in switch
    recvs = [line for line in dump["CPU:1"] if "= _Recv(" in line and "^_cloop" in line]
    assert recvs, "receives inside the frame are driven by the control loop's Merge"


def test_nested_loops_across_devices(graph):
    with tf.device("/cpu:0"):
        n = tf.placeholder(tf.int32, [], name="n")

    def outer_body(i, total):
        def inner_body(j, acc):
            with tf.device("/cpu:1"):
                acc = acc + tf.cast(i * 10 + j, tf.float32)
            return j + 1, acc

        _, inner = tf.while_loop(lambda j, acc: j < i, inner_body, [tf.constant(0), total])
        return i + 1, inner

    _, total = tf.while_loop(lambda i, total: i < n, outer_body,
                             [tf.constant(0), tf.constant(0.0)])
    value, _ = _run(total, {n: 4}, cpus=2)
    expected = sum(i * 10 + j for i in range(4) for j in range(i))
    assert value == pytest.approx(expected)


def test_bfloat16_transfers(graph):
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [1000], name="x")
        k = tf.placeholder(tf.int32, [1000], name="k")
    with tf.device("/cpu:1"):
        y = tf.identity(x * 1.0, name="y_far")
        j = k + 1
    data = np.random.RandomState(0).standard_normal(1000).astype(np.float32)
    ints = np.arange(1000, dtype=np.int32) * 977
    exact, meta = _run([y, j], {x: data, k: ints}, cpus=2)
    np.testing.assert_array_equal(exact[0], data)
    assert not any(n.op == "_PackBFloat16" for g in meta.partition_graphs for n in g.node)
    config = tf.ConfigProto(device_count={"CPU": 2}, graph_options=tf.GraphOptions(
        enable_bfloat16_sendrecv=True))
    lossy, meta = _run([y, j], {x: data, k: ints}, config=config)
    ops = [n.op for g in meta.partition_graphs for n in g.node]
    assert ops.count("_PackBFloat16") == 1 and ops.count("_UnpackBFloat16") == 1
    np.testing.assert_array_equal(lossy[1], ints + 1)  # int32 edges are exact
    relative = np.abs(lossy[0] - data) / np.abs(data)
    assert relative.max() < 2.0 ** -7
    assert 2.0 ** -11 < relative.mean() < 2.0 ** -8
    assert np.all(np.abs(lossy[0]) <= np.abs(data))  # truncation rounds toward zero


def test_bfloat16_pack_keeps_specials():
    from tensorflux.ops.internal.transfer import _pack_kernel, _unpack_kernel

    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 3.0e38, 1e-40], np.float32)
    nan_payload = np.array([0x7F800001], np.uint32).view(np.float32)
    back = _unpack_kernel(_pack_kernel(np.concatenate([values, nan_payload])))
    assert back.dtype == np.float32
    assert np.isnan(back[0]) and np.isnan(back[-1])
    np.testing.assert_array_equal(back[1:6], values[1:6])
    assert back[6] == pytest.approx(3.0e38, rel=2.0 ** -7)


def test_cross_device_loop_without_loop_cond_is_an_error():
    f32 = tf.float32

    def make(name, op, attrs, inputs, device, outputs):
        node = Node(name, op, attrs, inputs, [], output_dtypes=outputs,
                    input_dtypes=[s.output_dtypes[i] for s, i in inputs], op_def=get_op_def(op))
        node.assigned_device = DEVICES[device].name
        return node

    const = make("c", "Const", {"value": np.float32(1), "dtype": f32}, [], 0, [f32])
    enter = make("enter", "Enter", {"T": f32, "frame_name": "f", "is_constant": False,
                                    "parallel_iterations": 1}, [(const, 0)], 0, [f32])
    mid = make("mid", "Identity", {"T": f32}, [(enter, 0)], 0, [f32])
    far = make("far", "Identity", {"T": f32}, [(mid, 0)], 1, [f32])
    with pytest.raises(tf.errors.InvalidArgumentError, match="pivot predicate.*'f'"):
        partition_mod.partition([const, enter, mid, far], BY_NAME)


def test_topological_order_and_frames(graph):
    (count, acc), feeds = _loop(2, "/cpu:0")
    nodes, _, _ = subgraph.build_step_graph(graph, list(feeds), [count, acc], [])
    order = partition_mod.topological_order(list(reversed(nodes)))
    position = {id(n): i for i, n in enumerate(order)}
    for node in order:
        for src, _ in node.inputs:
            if src.op != "NextIteration":
                assert position[id(src)] < position[id(node)]
    frames = partition_mod.FrameInfo(nodes)
    by_name = {n.name: n for n in nodes}
    loop_cond = [n for n in nodes if n.op == "LoopCond"][0]
    frame = frames.frame(loop_cond)
    assert frame and frames.parent[frame] == ""
    assert frames.loop_cond[frame] is loop_cond
    exits = [n for n in nodes if n.op == "Exit"]
    assert all(frames.frame(e) == frame and frames.output_frame(e) == "" for e in exits)
    assert frames.frame(by_name[count.op.name]) == frame


@pytest.mark.parametrize("pred", [True, False])
def test_loop_inside_a_branch_spans_devices(graph, pred):
    with tf.device("/cpu:0"):
        p = tf.placeholder(tf.bool, [], name="p")
        x = tf.placeholder(tf.float32, [2], name="x")

    def looping():
        def body(i, acc):
            with tf.device("/cpu:1"):
                acc = acc + x
            return i + 1, acc

        return tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), x])[1]

    y = tf.cond(p, looping, lambda: x * 10.0)
    data = np.array([1.0, 2.0], np.float32)
    value, _ = _run(y, {p: pred, x: data}, cpus=2)
    np.testing.assert_allclose(value, data * 4.0 if pred else data * 10.0)
