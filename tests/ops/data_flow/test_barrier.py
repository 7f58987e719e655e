"""Barrier: keyed elements completed component by component, taken oldest first."""

import threading
import time

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401

import tensorflux as tf
from tensorflux.ops.data_flow.barrier import Barrier

FIRST = -(2 ** 63)
COVERED_OPS = {"Barrier", "BarrierClose", "BarrierIncompleteSize", "BarrierInsertMany",
               "BarrierReadySize", "BarrierTakeMany"}


def test_elements_become_ready_when_complete_and_leave_by_insertion_index():
    b = Barrier((tf.int64, tf.float64), shapes=((), (2,)))
    inserts = [b.insert_many(0, [b"x%d" % i], [i * 7]) for i in range(3)]
    complete = b.insert_many(1, [b"x2", b"x0", b"x1"],
                             np.array([[2.0, -2.0], [0.5, 0.25], [1.0, 3.0]]))
    idx, keys, (ints, pairs) = b.take_many(3)
    assert idx.shape.as_list() == [3] and pairs.shape.as_list() == [3, 2]
    with tf.Session() as sess:
        for op in inserts:
            sess.run(op)
        assert sess.run([b.ready_size(), b.incomplete_size()]) == [0, 3]
        sess.run(complete)
        assert sess.run([b.ready_size(), b.incomplete_size()]) == [3, 0]
        got_idx, got_keys, got_ints, got_pairs = sess.run([idx, keys, ints, pairs])
    np.testing.assert_array_equal(got_idx, FIRST + np.arange(3))
    assert list(got_keys) == [b"x0", b"x1", b"x2"]
    np.testing.assert_array_equal(got_ints, [0, 7, 14])
    np.testing.assert_array_equal(got_pairs, [[0.5, 0.25], [1.0, 3.0], [2.0, -2.0]])


def test_close_refuses_new_keys_but_completes_pending_ones():
    b = Barrier((tf.float32, tf.float32), shapes=((), ()))
    first = b.insert_many(0, [b"k1", b"k2"], [1.0, 2.0])
    second = b.insert_many(1, [b"k1", b"k2"], [3.0, 4.0])
    new_key = b.insert_many(0, [b"k3"], [5.0])
    take_three = b.take_many(3)
    take_two = b.take_many(2)
    with tf.Session() as sess:
        sess.run(first)
        sess.run(b.close())
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(new_key)
        sess.run(second)
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"insufficient elements \(requested 3, total size 2\)"):
            sess.run(take_three[0])
        _, keys, (a, c) = sess.run(take_two)
    assert list(keys) == [b"k1", b"k2"]
    np.testing.assert_array_equal(a + c, [4.0, 6.0])


def test_cancel_drops_incomplete_and_small_batch_takes_what_is_ready():
    b = Barrier((tf.int32, tf.int32), shapes=((), ()))
    sess = tf.Session()
    sess.run(b.insert_many(0, [b"a", b"b", b"c"], [1, 2, 3]))
    sess.run(b.insert_many(1, [b"a"], [10]))
    small = b.take_many(5, allow_small_batch=True)
    assert small[0].shape.as_list() == [None]
    sess.run(b.close(cancel_pending_enqueues=True))
    assert sess.run(b.incomplete_size()) == 0
    with pytest.raises(tf.errors.CancelledError, match="is closed"):
        sess.run(b.insert_many(1, [b"b"], [20]))
    _, keys, (x, y) = sess.run(small)
    assert list(keys) == [b"a"] and x.tolist() == [1] and y.tolist() == [10]
    with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has insufficient"):
        sess.run(small)
    sess.close()


def test_blocked_take_wakes_on_insert():
    b = Barrier(tf.float32, shapes=())
    take = b.take_many(2)
    got = {}
    with tf.Session() as sess:
        thread = threading.Thread(target=lambda: got.update(v=sess.run(take)))
        thread.start()
        time.sleep(0.1)
        assert "v" not in got
        sess.run(b.insert_many(0, [b"p"], [1.5]))
        sess.run(b.insert_many(0, [b"q"], [-0.5]))
        thread.join(5)
    idx, keys, (vals,) = got["v"]
    np.testing.assert_array_equal(idx, [FIRST, FIRST + 1])
    np.testing.assert_array_equal(vals, [1.5, -0.5])


def test_bad_inserts_and_constructors():
    with pytest.raises(ValueError, match=r"Empty tensors are not supported.*'\(0,\)' at index 1"):
        Barrier((tf.float32, tf.float32), shapes=((2,), (0,)))
    b = Barrier((tf.float32,), shapes=((3,),))
    loose = Barrier((tf.float32,))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape mismatch"):
            sess.run(b.insert_many(0, [b"a"], [[1.0, 2.0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="no elements"):
            sess.run(loose.insert_many(0, [b"a"], np.zeros((1, 0), np.float32)))
        pair = Barrier((tf.float32, tf.float32), shapes=((), ()))
        sess.run(pair.insert_many(0, [b"d"], [1.0]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="already has a value"):
            sess.run(pair.insert_many(0, [b"d"], [2.0]))
        assert sess.run(pair.incomplete_size()) == 1


def test_shared_barriers_must_agree():
    first = Barrier((tf.float32,), shapes=((2,),), shared_name="agree")
    other_type = Barrier((tf.int32,), shapes=((2,),), shared_name="agree")
    other_shape = Barrier((tf.float32,), shapes=((3,),), shared_name="agree")
    with tf.Session() as sess:
        sess.run(first.barrier_ref)
        with pytest.raises(tf.errors.InvalidArgumentError, match="component types"):
            sess.run(other_type.barrier_ref)
        with pytest.raises(tf.errors.InvalidArgumentError, match="component shapes"):
            sess.run(other_shape.barrier_ref)
