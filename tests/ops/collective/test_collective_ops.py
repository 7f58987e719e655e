"""Collective ops among the devices of one process (the in-process executor): values equal
the NumPy reductions in rank order, and bad groups fail every member with a typed error."""

import functools

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.collective import collective_ops as co

COVERED_OPS = {"CollectiveReduce", "CollectiveBcastSend", "CollectiveBcastRecv",
               "CollectiveGather"}
CONFIG = tf.ConfigProto(device_count={"CPU": 3})
_MERGE = {"Add": np.add, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum}


def _values(n, shape=(4, 3), dtype=np.float32, seed=0):
    rs = np.random.RandomState(seed)
    return [(rs.randn(*shape) * 3).astype(dtype) for _ in range(n)]



def _on_devices(n, build):
    outs = []
    for i in range(n):
        with tf.device(f"/cpu:{i}"):
            outs.append(build(i))
    return outs


@pytest.mark.parametrize("merge_op", ["Add", "Mul", "Min", "Max"])
@pytest.mark.parametrize("final_op", ["Id", "Div"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_all_reduce_equals_numpy_in_rank_order(merge_op, final_op, dtype):
    vals = _values(3, dtype=dtype)
    with tf.Graph().as_default():
        outs = _on_devices(3, lambda i: co.all_reduce(tf.constant(vals[i]), 3, 1, 7, merge_op,
                                                      final_op))
        with tf.Session(config=CONFIG) as sess:
            got = sess.run(outs)
    want = functools.reduce(_MERGE[merge_op], vals[1:], vals[0].copy())
    if final_op == "Div":
        want = want // 3 if np.issubdtype(dtype, np.integer) else \
            (want / dtype(3)).astype(dtype)
    for value in got:
        assert value.dtype == dtype
        np.testing.assert_array_equal(value, want)


def test_gather_and_broadcast_over_several_steps():
    vals = _values(3, shape=(2, 5))
    with tf.Graph().as_default():
        x = [tf.placeholder(tf.float32, [2, 5]) for _ in range(3)]
        gathered = _on_devices(3, lambda i: co.all_gather(x[i], 3, 1, 1))
        bcast = _on_devices(3, lambda i: co.broadcast_send(x[i], [2, 5], tf.float32, 3, 1, 2)
                            if i == 2 else co.broadcast_recv([2, 5], tf.float32, 3, 1, 2))
        assert gathered[0].shape.as_list() == [None, 5]
        with tf.Session(config=CONFIG) as sess:
            for step in range(3):
                feed = {x[i]: vals[i] + step for i in range(3)}
                got_g, got_b = sess.run([gathered, bcast], feed)
                for g, b in zip(got_g, got_b):
                    np.testing.assert_array_equal(g, np.concatenate([v + step for v in vals]))
                    np.testing.assert_array_equal(b, vals[2] + step)
                assert got_b[0] is not got_b[1]  # each member its own buffer


def test_group_of_one_is_the_identity_and_nan_inf_pass_through():
    value = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    with tf.Graph().as_default():
        out = co.all_reduce(tf.constant(value), 1, 1, 1, "Add", "Div")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), value)
    with tf.Graph().as_default():
        outs = _on_devices(2, lambda i: co.all_reduce(tf.constant(value), 2, 1, 1, "Max",
                                                      "Id"))
        with tf.Session(config=CONFIG) as sess:
            np.testing.assert_array_equal(sess.run(outs)[1], value)


def test_empty_dims_reduce_and_gather():
    with tf.Graph().as_default():
        outs = _on_devices(2, lambda i: co.all_reduce(tf.zeros([0, 3]), 2, 1, 1, "Add", "Id"))
        gathered = _on_devices(2, lambda i: co.all_gather(tf.ones([i, 3]), 2, 1, 2))
        with tf.Session(config=CONFIG) as sess:
            got, got_g = sess.run([outs, gathered])
    assert got[0].shape == (0, 3)
    np.testing.assert_array_equal(got_g[0], np.ones((1, 3), np.float32))


def test_mismatched_shapes_fail_every_member():
    with tf.Graph().as_default():
        outs = _on_devices(2, lambda i: co.all_reduce(
            tf.placeholder_with_default(np.zeros(i + 1, np.float32), [None]), 2, 1, 1, "Add",
            "Id"))
        with tf.Session(config=CONFIG) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="differ in shape"):
                sess.run(outs)


def test_broadcast_without_a_sender_fails_instead_of_hanging():
    with tf.Graph().as_default():
        outs = _on_devices(2, lambda i: co.broadcast_recv([2], tf.float32, 2, 1, 1))
        with tf.Session(config=CONFIG) as sess:
            with pytest.raises(tf.errors.InternalError, match="exactly one"):
                sess.run(outs)


def test_a_missing_member_times_out_with_the_step_deadline():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            out = co.all_reduce(tf.ones([2]), 2, 99, 1, "Add", "Id")
        with tf.device("/cpu:1"):
            other = co.all_reduce(tf.ones([2]), 2, 99, 1, "Add", "Id")
        options = tf.RunOptions(timeout_in_ms=200)
        with tf.Session(config=CONFIG) as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(out, options=options)
            # The late member meets the failed instance (and fails) instead of waiting
            # forever; the group is in step again afterwards.
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(other)
            np.testing.assert_array_equal(sess.run([out, other])[0], [2.0, 2.0])


def test_wrapper_arguments_are_checked():
    with tf.Graph().as_default():
        t = tf.ones([2, 3])
        with pytest.raises(ValueError, match="group_size to all_reduce must be at least 1"):
            co.all_reduce(t, 0, 1, 1, "Add", "Id")
        with pytest.raises(ValueError, match="at least 2"):
            co.broadcast_send(t, [2, 3], tf.float32, 1, 1, 1)
        with pytest.raises(ValueError, match="declared shape"):
            co.broadcast_send(t, [3, 2], tf.float32, 2, 1, 1)
        with pytest.raises(ValueError, match="declared type"):
            co.broadcast_send(t, [2, 3], tf.int32, 2, 1, 1)
        with pytest.raises(ValueError):
            co.all_reduce(t, 2, 1, 1, "Sub", "Id")
        with pytest.raises(ValueError, match="scalar"):
            co.all_gather(tf.constant(1.0), 2, 1, 1)
        op = co.all_reduce(t, 2, 5, 6, "Add", "Div").op
        assert op.type == "CollectiveReduce"
        assert (op.get_attr("group_size"), op.get_attr("group_key"),
                op.get_attr("instance_key"), op.get_attr("merge_op"),
                op.get_attr("final_op"), list(op.get_attr("subdiv_offsets"))) == \
            (2, 5, 6, b"Add", b"Div", [0])


def test_a_group_key_names_one_set_of_devices():
    with tf.Graph().as_default():
        first = _on_devices(2, lambda i: co.all_reduce(tf.ones([2]), 2, 41, 1, "Add", "Id"))
        with tf.device("/cpu:2"):
            other = co.all_reduce(tf.ones([2]), 2, 41, 2, "Add", "Id")
        with tf.Session(config=CONFIG) as sess:
            np.testing.assert_array_equal(sess.run(first)[0], [2.0, 2.0])
            with pytest.raises(tf.errors.InternalError, match="cannot join"):
                sess.run(other)
