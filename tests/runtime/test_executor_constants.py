"""The general executor's folded Consts and inline asynchronous completions.

Consts leave the per-step schedule (their values are bound at plan time); a Const inside a cond
branch or loop body is delivered when its pivot finishes, dead when the pivot is dead. An
asynchronous kernel whose value is ready completes without an inbox round trip.
"""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import dtypes, errors
from tensorflux.ops.data_flow.queues import FIFOQueue
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.plan import Plan
from tensorflux.runtime.step import DEAD
from tensorflux.runtime.step_core import StepCore

F32 = dtypes.float32


class _Device:
    device_type = "CPU"
    name = "/job:localhost/replica:0/task:0/device:CPU:0"
    resource_mgr = None
    incarnation = 1


def _const(name, value, control=()):
    value = np.asarray(value, np.float32)
    return Node(name, "Const", {"dtype": F32, "value": value}, [], list(control),
                output_dtypes=[F32])


def _branch_plan():
    """x, p -> Switch -> pivot Identity (true side) -c-> Const k -> AddV2(k, x_true)."""
    x = Node("x", "_Arg", {"T": F32, "index": 0}, [], [], output_dtypes=[F32])
    p = Node("p", "_Arg", {"T": dtypes.bool_, "index": 1}, [], [], output_dtypes=[dtypes.bool_])
    switch = Node("switch", "Switch", {"T": F32}, [(x, 0), (p, 0)], [], output_dtypes=[F32] * 2)
    pivot = Node("pivot", "Identity", {"T": F32}, [(switch, 1)], [], output_dtypes=[F32])
    k = _const("k", 3.0, control=[pivot])
    top = _const("top", 10.0)
    add = Node("add", "AddV2", {"T": F32}, [(k, 0), (pivot, 0)], [], output_dtypes=[F32])
    mul = Node("mul", "Mul", {"T": F32}, [(top, 0), (x, 0)], [], output_dtypes=[F32])
    return Plan([x, p, switch, pivot, k, top, add, mul], _Device(), [(add, 0), (mul, 0)])


def _find(ready, name):
    return next(entry for entry in ready if entry[0].node.name == name)


def test_consts_leave_the_schedule_and_feed_their_consumers():
    plan = _branch_plan()
    folded = sorted(item.node.name for item in plan.items if item.folded)
    assert folded == ["k", "top"]
    core = StepCore(plan)
    ready = core.start()
    assert sorted(item.node.name for item, _, _ in ready) == ["p", "x"]
    mul = core.node_finished(*_find(ready, "x"), (2.0,))
    # `top` is already in Mul's slot: x's value alone makes it ready.
    assert [e[0].node.name for e in mul] == ["mul"]
    assert core.inputs(*mul[0])[0] == np.float32(10.0)
    switch = core.node_finished(*_find(ready, "p"), (True,))
    pivot = core.node_finished(*switch[0], (DEAD, 2.0))
    add = core.node_finished(*_find(pivot, "pivot"), (2.0,))
    assert [e[0].node.name for e in add] == ["add"]
    assert core.inputs(*add[0]) == [np.float32(3.0), 2.0] and not core.has_dead_input(*add[0])


def test_a_const_behind_a_dead_pivot_is_dead():
    core = StepCore(_branch_plan())
    ready = core.start()
    core.node_finished(*_find(ready, "x"), (2.0,))
    switch = core.node_finished(*_find(ready, "p"), (False,))
    pivot = core.node_finished(*switch[0], (2.0, DEAD))
    assert core.has_dead_input(*_find(pivot, "pivot"))
    add = core.node_finished(*_find(pivot, "pivot"), (DEAD,), is_dead=True)
    # Both of Add's inputs are dead: the folded Const's and the pivot's.
    assert core.inputs(*add[0]) == [DEAD, DEAD]
    assert core.frames == {} and core.root.iterations[0].dead[add[0][0].local] == 2


def test_fetched_consts_and_consts_feeding_a_merge_keep_their_nodes():
    x = Node("x", "_Arg", {"T": F32, "index": 0}, [], [], output_dtypes=[F32])
    k = _const("k", 1.0)
    merge = Node("merge", "Merge", {"T": F32, "N": 2}, [(k, 0), (x, 0)], [],
                 output_dtypes=[F32, dtypes.int32])
    fetched = _const("fetched", 2.0)
    plan = Plan([x, k, merge, fetched], _Device(), [(merge, 0), (fetched, 0)])
    assert not any(item.folded for item in plan.items)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_branch_consts_run_only_in_the_taken_branch(pred):
    with tf.Graph().as_default():
        v = tf.Variable(5.0)
        p = tf.placeholder(tf.bool, [])
        out = tf.cond(p, lambda: v.assign_add(1.5), lambda: v.assign_sub(0.25))
        scaled = tf.cond(p, lambda: out * 2.0, lambda: out - 100.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            got = [sess.run(scaled, {p: pred}) for _ in range(3)]
            final = sess.run(v)
    step = 1.5 if pred else -0.25
    values = [5.0 + step * (i + 1) for i in range(3)]
    want = [2.0 * x if pred else x - 100.0 for x in values]
    np.testing.assert_allclose(got, want, rtol=0)
    assert final == np.float32(values[-1])


def test_loop_body_consts_and_a_fetched_const():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        c = tf.constant([1.0, 2.0])

        def body(i, acc):
            inner = tf.cond(tf.equal(i % 2, 0), lambda: acc + tf.constant([10.0, 20.0]),
                            lambda: acc * tf.constant(0.5))
            return i + 3, inner

        i, acc = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0), c])
        with tf.Session() as sess:
            for limit in (0, 1, 7):
                got_i, got_acc, got_c = sess.run([i, acc, c], {n: limit})
                want_i, want = 0, np.array([1.0, 2.0], np.float32)
                while want_i < limit:
                    want = want + [10.0, 20.0] if want_i % 2 == 0 else want * 0.5
                    want_i += 3
                assert got_i == want_i
                np.testing.assert_array_equal(got_acc, want)
                np.testing.assert_array_equal(got_c, [1.0, 2.0])


def test_ready_async_kernels_complete_inline_with_values_and_errors():
    with tf.Graph().as_default():
        q = FIFOQueue(10, tf.float32, shapes=[[]])
        x = tf.placeholder(tf.float32, [])
        p = tf.placeholder(tf.bool, [])
        enq = q.enqueue(tf.cond(p, lambda: x + 1.0, lambda: x - 1.0))
        with tf.control_dependencies([enq]):
            deq = q.dequeue() * 2.0
        close = q.close()
        with tf.Session() as sess:
            assert sess.run(deq, {x: 1.0, p: True}) == 4.0
            assert sess.run(deq, {x: 1.0, p: False}) == 0.0
            sess.run(close)
            with pytest.raises(errors.CancelledError, match="closed"):
                sess.run(enq, {x: 1.0, p: True})
            with pytest.raises(errors.OutOfRangeError):
                sess.run(q.dequeue())


def test_traced_steps_still_list_folded_consts():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.constant(4.0, name="top_const")
        out = tf.cond(p, lambda: x * tf.constant(3.0, name="branch_const"), lambda: x)
        with tf.Session() as sess:
            meta = tf.RunMetadata()
            opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            assert sess.run(out, {p: True}, options=opts, run_metadata=meta) == 12.0
            names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
            assert "top_const" in names and any("branch_const" in n for n in names)
            meta = tf.RunMetadata()
            assert sess.run(out, {p: False}, options=opts, run_metadata=meta) == 4.0
            names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
            assert not any("branch_const" in n for n in names)  # its branch was not taken


def test_async_kernels_completing_later_from_another_thread():
    import threading

    with tf.Graph().as_default():
        q = FIFOQueue(10, tf.float32, shapes=[[]])
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [])
        # The Dequeue waits for the other thread; the Enqueue into `out` completes inline.
        got = tf.cond(p, lambda: q.dequeue() + 1.0, lambda: tf.constant(-1.0))
        out = FIFOQueue(10, tf.float32, shapes=[[]])
        enq_out = out.enqueue(got)
        enq_in = q.enqueue(x)
        with tf.Session() as sess:
            feeder = threading.Timer(0.05, lambda: sess.run(enq_in, {x: 41.0}))
            feeder.start()
            sess.run(enq_out, {p: True})
            feeder.join()
            sess.run(enq_out, {p: False})
            assert sess.run(out.dequeue_many(2)).tolist() == [42.0, -1.0]
