"""The step timeline: Chrome trace events per device, transfer arrows, memory counters."""

import json

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.client import timeline
from tensorflux.protos import step_stats_pb2


def _traced_run():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [16, 16], name="x")
            a = tf.matmul(x, x, name="left")
        with tf.device("/cpu:1"):
            b = tf.matmul(a, x, name="right")
            total = tf.reduce_sum(b, name="total")
        config = tf.ConfigProto(device_count={"CPU": 2})
        with tf.Session(config=config) as sess:
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                    output_partition_graphs=True)
            meta = tf.RunMetadata()
            data = np.ones((16, 16), np.float32)
            assert sess.run(total, {x: data}, options=options, run_metadata=meta) == 16 ** 4
    return meta


@pytest.fixture(scope="module")
def meta():
    return _traced_run()


def _events(trace):
    return json.loads(trace)["traceEvents"]


def test_one_process_row_per_device_and_an_event_per_node(meta):
    events = _events(timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    rows = {e["pid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(rows.values()) == [f"/job:localhost/replica:0/task:0/device:CPU:{i} Compute"
                                     for i in range(2)]
    ops = [e for e in events if e["ph"] == "X"]
    by_name = {e["args"]["name"]: e for e in ops}
    assert by_name["left"]["name"] == "MatMul" and by_name["right"]["name"] == "MatMul"
    assert rows[by_name["left"]["pid"]].endswith("CPU:0 Compute")
    assert rows[by_name["right"]["pid"]].endswith("CPU:1 Compute")
    assert by_name["right"]["args"]["input1"].startswith("_arg_x")
    assert all(e["dur"] > 0 and e["ts"] > 0 for e in ops)


def test_transfers_are_arrows_from_send_to_recv(meta):
    events = _events(timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    ops = [e for e in events if e["ph"] == "X"]
    sends = {e["args"]["tensor_name"]: e for e in ops if e["name"] == "_Send"}
    recvs = {e["args"]["tensor_name"]: e for e in ops if e["name"] == "_Recv"}
    assert sends and set(sends) == set(recvs)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "t"}
    assert set(starts) == set(ends)
    arrows = {starts[k]["name"]: (starts[k], ends[k]) for k in starts}
    for name, send in sends.items():
        start, end = arrows[name]
        recv = recvs[name]
        assert (start["pid"], start["tid"]) == (send["pid"], send["tid"])
        assert (end["pid"], end["tid"]) == (recv["pid"], recv["tid"])
        assert recv["ts"] <= end["ts"] <= recv["ts"] + recv["dur"]
    none = _events(timeline.Timeline(meta.step_stats).generate_chrome_trace_format(
        show_dataflow=False))
    assert not [e for e in none if e["ph"] in "st"]


def test_lanes_never_overlap(meta):
    events = _events(timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    lanes = {}
    for e in events:
        if e["ph"] == "X":
            lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in lanes.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert end <= start + 1e-6


def test_memory_counters_and_maximums(meta):
    view = timeline.Timeline(meta.step_stats)
    events = _events(view.generate_chrome_trace_format(show_memory=True))
    counters = [e for e in events if e["ph"] == "C" and e["name"] == "Memory"]
    assert counters and all(e["args"]["bytes"] >= 0 for e in counters)
    by_pid = {}
    for e in counters:
        by_pid.setdefault(e["pid"], []).append(e["args"]["bytes"])
    assert all(values[-1] == 0 for values in by_pid.values())
    analysis = view.analyze_step_stats(show_memory=True)
    maximums = analysis.allocator_maximums
    assert set(maximums) == {d.device for d in meta.step_stats.dev_stats}
    assert all(m.num_bytes >= 16 * 16 * 4 for m in maximums.values())
    assert "traceEvents" in analysis.chrome_trace


def test_graph_supplies_what_the_labels_lack(meta):
    stats = step_stats_pb2.StepStats()
    stats.CopyFrom(meta.step_stats)
    for dev in stats.dev_stats:
        for node in dev.node_stats:
            node.timeline_label = ""
    bare = _events(timeline.Timeline(stats).generate_chrome_trace_format())
    assert not [e for e in bare if e["ph"] == "s"]
    full = _events(timeline.Timeline(stats, graph=meta.partition_graphs)
                   .generate_chrome_trace_format())
    assert [e for e in full if e["ph"] == "s"]
    names = {e["args"]["name"]: e["name"] for e in full if e["ph"] == "X"}
    assert names["left"] == "MatMul"


def test_module_paths():
    import tensorflux.client.timeline as client_timeline
    from tensorflux.runtime import timeline as runtime_timeline

    assert client_timeline.Timeline is runtime_timeline.Timeline is tf.client.timeline.Timeline
