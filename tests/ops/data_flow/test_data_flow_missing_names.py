"""TF1 names: the legacy Stack ops (registered by `import tensorflux`), QueueBase.from_list,
Graph.switch_to_thread_local."""

import subprocess
import sys
import threading

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.data_flow import stack as stack_ops

COVERED_OPS = {"Stack", "StackPush", "StackPop", "StackClose"}


def test_stack_ops_registered_by_import_alone():
    code = ("import tensorflux\nfrom tensorflux.framework.op_def import OP_DEFS\n"
            "names = ['Stack', 'StackPush', 'StackPop', 'StackClose', 'StackV2', 'StackPushV2',"
            " 'StackPopV2', 'StackCloseV2', 'MaxPoolV2', 'UniqueV2', 'UniqueWithCountsV2',"
            " 'ScatterNdNonAliasingAdd', 'Snapshot', 'RefIdentity', 'RefSelect',"
            " 'GuaranteeConst', 'StridedSliceAssign']\n"
            "print(sorted(n for n in names if n not in OP_DEFS))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_legacy_stack_is_lifo_and_closes():
    h = stack_ops.StackOp(elem_type=tf.float32, stack_name="s")
    assert h.dtype.is_ref_dtype and h.dtype.base_dtype == tf.string
    with tf.control_dependencies([stack_ops.StackPush(h, tf.constant([1.0, 2.0]))]):
        with tf.control_dependencies([stack_ops.StackPush(h, tf.constant([3.0, 4.0]))]):
            first = stack_ops.StackPop(h, elem_type=tf.float32)
    with tf.control_dependencies([first]):
        second = stack_ops.StackPop(h, elem_type=tf.float32)
    with tf.control_dependencies([second]):
        close = stack_ops.StackClose(h)
    a, b, _ = run([first, second, close])
    np.testing.assert_array_equal(a, [3.0, 4.0])
    np.testing.assert_array_equal(b, [1.0, 2.0])


def test_legacy_stack_pop_empty_is_invalid_argument():
    h = stack_ops.StackOp(elem_type=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
        run(stack_ops.StackPop(h, elem_type=tf.int32))


def test_queue_from_list_selects_by_index():
    q1 = tf.FIFOQueue(10, [tf.float32], shapes=[[2]])
    q2 = tf.FIFOQueue(10, [tf.float32], shapes=[[3]])
    index = tf.placeholder(tf.int32, [])
    q = tf.QueueBase.from_list(index, [q1, q2])
    assert q.dtypes == [tf.float32]
    assert q.shapes[0].as_list() == [None]
    with tf.Session() as sess:
        sess.run(q1.enqueue([[1.0, 2.0]]))
        sess.run(q2.enqueue([[3.0, 4.0, 5.0]]))
        np.testing.assert_array_equal(sess.run(q.dequeue(), {index: 1}), [3.0, 4.0, 5.0])
        assert sess.run(q.size(), {index: 0}) == 1
        assert sess.run(q1.size()) == 1 and sess.run(q2.size()) == 0


def test_queue_from_list_errors():
    q1 = tf.FIFOQueue(3, [tf.float32])
    with pytest.raises(TypeError, match="A list of queues expected"):
        tf.QueueBase.from_list(0, [])
    with pytest.raises(TypeError, match="A list of queues expected"):
        tf.QueueBase.from_list(0, (q1,))
    with pytest.raises(TypeError, match="dtypes"):
        tf.QueueBase.from_list(0, [q1, tf.FIFOQueue(3, [tf.int32])])
    with pytest.raises(TypeError, match="names"):
        tf.QueueBase.from_list(0, [tf.FIFOQueue(3, [tf.float32], names=["a"]),
                                   tf.FIFOQueue(3, [tf.float32], names=["b"])])


def test_switch_to_thread_local_isolates_control_dependencies():
    g = tf.get_default_graph()
    c = tf.constant(1.0)
    # Shared by default: another thread sees the caller's control dependencies.
    seen = {}
    with g.control_dependencies([c]):
        def shared_worker():
            with g.as_default():
                seen["shared"] = tf.constant(2.0).op.control_inputs

        t = threading.Thread(target=shared_worker)
        t.start()
        t.join()
    assert seen["shared"] == [c.op]
    g.switch_to_thread_local()
    g.switch_to_thread_local()  # idempotent
    with g.control_dependencies([c]):
        def local_worker():
            with g.as_default():
                seen["local"] = tf.constant(3.0).op.control_inputs
                with g.control_dependencies([c]):
                    seen["own"] = tf.constant(4.0).op.control_inputs

        t = threading.Thread(target=local_worker)
        t.start()
        t.join()
        seen["main"] = tf.constant(5.0).op.control_inputs
    assert seen["local"] == [] and seen["own"] == [c.op] and seen["main"] == [c.op]
    assert tf.constant(6.0).op.control_inputs == []


def test_switch_to_thread_local_queue_ops_from_threads():
    g = tf.get_default_graph()
    g.switch_to_thread_local()
    q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    ops = []

    def build(i):
        with g.as_default():
            ops.append(q.enqueue([i]))

    threads = [threading.Thread(target=build, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with tf.Session() as sess:
        sess.run(ops)
        assert sorted(sess.run(q.dequeue_many(4)).tolist()) == [0, 1, 2, 3]


def _queue_enqueue(value, many=False, static=False):
    q = tf.FIFOQueue(3, [tf.float32], shapes=[[2]])
    if static:
        return (q.enqueue_many([value]) if many else q.enqueue([value])), None
    p = tf.placeholder(tf.float32)
    return (q.enqueue_many([p]) if many else q.enqueue([p])), {p: value}


# Data-flow error table: builder -> (class, key words), as TF 1.15 reports them.
ERROR_TABLE = [
    ("enqueue static shape", lambda: _queue_enqueue([1.0, 2.0, 3.0], static=True), ValueError,
     r"incompatible with the queue's shape \(2,\)"),
    ("enqueue run-time shape", lambda: _queue_enqueue([1.0, 2.0, 3.0]),
     tf.errors.InvalidArgumentError,
     r"Shape mismatch in tuple component 0. Expected \[2\], got \[3\]"),
    ("enqueue_many run-time shape", lambda: _queue_enqueue([[1.0, 2.0, 3.0]], many=True),
     tf.errors.InvalidArgumentError,
     r"Shape mismatch in tuple component 0. Expected \[1,2\], got \[1,3\]"),
    ("stack pop empty",
     lambda: (stack_ops.StackPop(stack_ops.StackOp(elem_type=tf.int32), elem_type=tf.int32),
              None), tf.errors.InvalidArgumentError, "empty"),
]


@pytest.mark.parametrize("build,error,words", [r[1:] for r in ERROR_TABLE],
                         ids=[r[0] for r in ERROR_TABLE])
def test_data_flow_error_table(build, error, words):
    with pytest.raises(error, match=words):
        fetch, feed = build()
        run(fetch, feed)
