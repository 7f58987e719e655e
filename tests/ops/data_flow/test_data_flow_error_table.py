"""data_flow error table: TF's error class, the phase it is raised in (graph construction or
run time) and the facts its message carries, for queues, TensorArrays and dynamic
partition/stitch (recorded from TensorFlow in graph mode, TensorArrayV3 as in TF 1.x).

Each row: (id, builder -> (fetches, feed), phase "build" | "run", error class, regex). A run
row's fetches may be a list of steps run one after the other (close, then dequeue, ...)."""

import numpy as np
import pytest
from op_helpers import check_error_row, graph, run  # noqa: F401

import tensorflux as tf

BAD = tf.errors.InvalidArgumentError


def _fed(fn, value, dtype=tf.int32):
    p = tf.placeholder(dtype)
    return fn(p), {p: value}


def _steps(*ops):
    return list(ops), None


def _const(fn):
    return lambda: (fn(), None)


def _fifo(*args, **kwargs):
    return tf.FIFOQueue(*args, **kwargs)


def _closed_then(q, make_op, enqueued=()):
    ops = [q.enqueue([v]) for v in enqueued]
    return _steps(*ops, q.close(), make_op(q))


def _ta(size=2, **kwargs):
    return tf.TensorArray(tf.float32, size=size, **kwargs)


def _stack_fed():
    p = tf.placeholder(tf.float32)
    return _ta().write(0, [1.0, 2.0]).write(1, p).stack(), {p: [1.0, 2.0, 3.0]}


ERROR_TABLE = [
    ("enqueue wrong shape", _const(lambda: _fifo(5, tf.float32, shapes=[[2]]).enqueue(
        [[1.0, 2.0, 3.0]])), "build", ValueError, r"\(3,\).*\(2,\)"),
    ("enqueue wrong shape fed",
     lambda: _fed(lambda p: _fifo(5, tf.float32, shapes=[[2]]).enqueue([p]), [1.0, 2.0, 3.0],
                  tf.float32),
     "run", BAD, r"Shape mismatch in tuple component 0. Expected \[2\], got \[3\]"),
    ("enqueue wrong dtype", _const(lambda: _fifo(5, tf.float32).enqueue([tf.constant(1)])),
     "build", ValueError, "component 0.*float32.*int32"),
    ("enqueue too few components",
     _const(lambda: _fifo(5, [tf.float32, tf.int32]).enqueue([1.0])),
     "run", BAD, "Signature mismatch.*2 components, got 1"),
    ("enqueue_many wrong element shape",
     _const(lambda: _fifo(5, tf.float32, shapes=[[2]]).enqueue_many([[[1.0, 2.0, 3.0]]])),
     "build", ValueError, r"\(3,\).*\(2,\)"),
    ("enqueue_many scalar", _const(lambda: _fifo(5, tf.float32).enqueue_many([1.0])),
     "build", ValueError, r"Shape \(\) must have rank at least 1"),
    ("enqueue_many batch sizes differ",
     _const(lambda: _fifo(5, [tf.float32, tf.float32]).enqueue_many([[1.0, 2.0], [1.0]])),
     "build", ValueError, "1 elements.*2"),
    ("dequeue_many closed with too few",
     lambda: _closed_then(_fifo(5, tf.float32, shapes=[[]]), lambda q: q.dequeue_many(2),
                          [1.0]),
     "run", tf.errors.OutOfRangeError,
     r"is closed and has insufficient elements \(requested 2, current size 1\)"),
    ("dequeue closed and empty", lambda: _closed_then(_fifo(5, tf.float32), lambda q: q.dequeue()),
     "run", tf.errors.OutOfRangeError, r"requested 1, current size 0"),
    ("dequeue_many above capacity closed",
     lambda: _closed_then(_fifo(2, tf.float32, shapes=[[]]), lambda q: q.dequeue_many(3)),
     "run", tf.errors.OutOfRangeError, r"requested 3, current size 0"),
    ("enqueue on closed queue",
     lambda: _closed_then(_fifo(5, tf.float32), lambda q: q.enqueue([1.0])),
     "run", tf.errors.CancelledError, "FIFOQueue '.*' is closed."),
    ("dequeue_many without shapes", _const(lambda: _fifo(5, tf.float32).dequeue_many(2)),
     "run", BAD, "DequeueMany and DequeueUpTo require the components to have specified shapes"),
    ("dequeue_many negative", _const(lambda: _fifo(5, tf.float32, shapes=[[]]).dequeue_many(-1)),
     "build", ValueError, "Input 'n' must be >= 0, but is -1"),
    ("dequeue_up_to negative",
     _const(lambda: _fifo(5, tf.float32, shapes=[[]]).dequeue_up_to(-1)),
     "run", BAD, "DequeueUpToOp requested -1 < 0 elements"),
    ("queue shapes length", lambda: _fifo(5, [tf.float32, tf.int32], shapes=[[]]),
     "build", ValueError, "same length as dtypes"),
    ("queue names length", lambda: _fifo(5, [tf.float32], names=["a", "b"]),
     "build", ValueError, "names must have the same length"),
    ("random shuffle min_after_dequeue >= capacity",
     _const(lambda: tf.RandomShuffleQueue(2, 5, tf.float32).size()),
     "run", BAD, "min_after_dequeue 5 must be < capacity 2"),
    ("priority queue float priority",
     _const(lambda: tf.PriorityQueue(5, [tf.float32], shapes=[[]]).enqueue((1.0, 1.0))),
     "build", TypeError, "int64.*1.0"),
    ("enqueue dict without names", _const(lambda: _fifo(5, tf.float32).enqueue({"a": 1.0})),
     "build", ValueError, "must have names to enqueue a dictionary"),
    ("TensorArray read past size", _const(lambda: _ta().write(0, 1.0).write(1, 2.0).read(3)),
     "run", BAD, "Tried to read from index 3 but array .*size is: 2"),
    ("TensorArray read negative", _const(lambda: _ta().write(0, 1.0).read(-1)),
     "run", BAD, "index -1"),
    ("TensorArray write twice", _const(lambda: _ta().write(0, 1.0).write(0, 2.0).read(0)),
     "run", BAD, "Could not write to TensorArray index 0 because it has already been written"),
    ("TensorArray write past size", _const(lambda: _ta().write(5, 1.0).read(0)),
     "run", BAD, "Tried to write to index 5 but array is not resizeable and size is: 2"),
    ("TensorArray write wrong dtype", _const(lambda: _ta().write(0, tf.constant(1)).read(0)),
     "run", BAD, "dtype is int32 but the TensorArray dtype is float32"),
    ("TensorArray stack of different sizes",
     _const(lambda: _ta().write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0]).stack()),
     "build", ValueError, r"Inconsistent shapes: saw \(3,\) but expected \(2,\)"),
    ("TensorArray stack of different sizes fed", _stack_fed,
     "run", BAD, r"index 1 because the value shape is \[3\] .*element shape: \(2,\)"),
    ("TensorArray unstack more than size",
     _const(lambda: _ta().unstack([1.0, 2.0, 3.0]).read(0)), "run", BAD, "index 2.*size is: 2"),
    ("TensorArray split lengths", _const(lambda: _ta().split([1.0, 2.0, 3.0], [1, 1]).read(0)),
     "run", BAD, "sum of lengths is 2 and value's shape is.*3"),
    ("TensorArray element_shape mismatch",
     _const(lambda: _ta(element_shape=[2]).write(0, [1.0, 2.0, 3.0])),
     "build", ValueError, r"Inconsistent shapes: saw \(3,\) but expected \(2,\)"),
    ("TensorArray stack unwritten, unknown shape", _const(lambda: _ta().stack()),
     "run", BAD, "Could not read from TensorArray index 0.*element shape is not fully defined"),
    ("dynamic_partition out of range",
     _const(lambda: tuple(tf.dynamic_partition([1.0, 2.0, 3.0], tf.constant([0, 2, 1]), 2))),
     "run", BAD, r"partitions\[1\] = 2 is not in \[0, 2\)"),
    ("dynamic_partition negative fed",
     lambda: _fed(lambda p: tuple(tf.dynamic_partition([1.0, 2.0, 3.0], p, 2)), [0, -1, 1]),
     "run", BAD, r"partitions\[1\] = -1 is not in \[0, 2\)"),
    ("dynamic_partition shape mismatch",
     _const(lambda: tf.dynamic_partition([1.0, 2.0, 3.0], tf.constant([0, 1]), 2)),
     "build", ValueError, r"DynamicPartition.*\(2,\).*\(3,\)"),
    ("dynamic_partition shape mismatch fed",
     lambda: _fed(lambda p: tuple(tf.dynamic_partition([1.0, 2.0, 3.0], p, 2)), [0, 1]),
     "run", BAD, r"data.shape must start with partitions.shape, got data.shape = \[3\], "
                 r"partitions.shape = \[2\]"),
    ("dynamic_stitch index/data shapes",
     _const(lambda: tf.dynamic_stitch([tf.constant([0, 1]), tf.constant([2])],
                                      [tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])])),
     "build", ValueError, r"DynamicStitch.*\(2,\).*\(1,\)"),
    ("dynamic_stitch index/data shapes fed",
     lambda: _fed(lambda p: tf.dynamic_stitch([p, tf.constant([2])],
                                              [tf.constant([1.0, 2.0]), tf.constant([3.0])]),
                  [0, 1, 3]),
     "run", BAD, r"data\[0\].shape = \[2\] does not start with indices\[0\].shape = \[3\]"),
    ("dynamic_stitch trailing shapes",
     _const(lambda: tf.dynamic_stitch([tf.constant([0]), tf.constant([1])],
                                      [tf.constant([[1.0, 2.0]]), tf.constant([[3.0]])])),
     "build", ValueError, r"DynamicStitch.*\(2,\).*\(1,\)"),
    ("dynamic_stitch list lengths",
     _const(lambda: tf.dynamic_stitch([tf.constant([0])], [tf.constant([1.0]),
                                                           tf.constant([3.0])])),
     "build", ValueError, "length 2 must match length 1"),
    ("dynamic_stitch negative index",
     lambda: _fed(lambda p: tf.dynamic_stitch([p], [tf.constant([1.0, 2.0])]), [0, -1]),
     "run", BAD, "-1"),
]


@pytest.mark.parametrize("build,phase,error,words", [r[1:] for r in ERROR_TABLE],
                         ids=[r[0] for r in ERROR_TABLE])
def test_data_flow_error_table(build, phase, error, words):
    check_error_row(build, phase, error, words, run_fetch=_run_steps)


def _run_steps(fetch, feed):
    """Runs the set-up steps of a list fetch, then its last step (the one that fails)."""
    steps = fetch if isinstance(fetch, list) else [fetch]
    with tf.Session() as sess:
        for step in steps[:-1]:
            sess.run(step)
        sess.run(steps[-1], feed)


def test_valid_queue_and_tensor_array_values():
    q = _fifo(5, tf.float32, shapes=[[]])
    ta = _ta(element_shape=[]).write(0, tf.constant(3.0)).write(1, 4.0)
    shuffle = tf.RandomShuffleQueue(4, 1, tf.int32, shapes=[[]], seed=1)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1.0, 2.0, 3.0]]))
        sess.run(q.close())
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(5)), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(sess.run(ta.stack()), [3.0, 4.0])
        sess.run(shuffle.enqueue_many([[5, 6]]))
        assert sess.run(shuffle.dequeue()) in (5, 6)
