"""Raw ops TF 1.15 has: UniqueV2, UniqueWithCountsV2 (unique along an axis),
ScatterNdNonAliasingAdd, Snapshot, GuaranteeConst, RefIdentity, RefSelect."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case, graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.array import forwarding, partition, tensor_scatter

COVERED_OPS = {"UniqueV2", "UniqueWithCountsV2", "ScatterNdNonAliasingAdd", "Snapshot",
               "GuaranteeConst", "RefIdentity", "RefSelect"}


def _unique_ref(x, axis):
    """Unique slices along `axis` in order of first appearance, by a Python loop."""
    moved = np.moveaxis(x, axis, 0)
    keys, idx, counts = [], [], []
    for row in moved:
        for j, key in enumerate(keys):
            if np.array_equal(key, row):
                idx.append(j)
                counts[j] += 1
                break
        else:
            keys.append(row)
            idx.append(len(keys) - 1)
            counts.append(1)
    return np.moveaxis(np.array(keys), 0, axis), np.array(idx), np.array(counts)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 1), st.booleans(),
       st.integers(0, 99))
def test_unique_v2_along_axis(rows, cols, axis, negative, seed):
    x = np.random.RandomState(seed).randint(0, 2, size=(rows, cols))
    ax = axis - 2 if negative else axis
    with tf.Graph().as_default():
        y, idx, counts = partition.UniqueWithCountsV2(tf.constant(x), tf.constant([ax],
                                                                                  tf.int64))
        y2, idx2 = partition.UniqueV2(tf.constant(x), tf.constant([ax], tf.int32),
                                      out_idx=tf.int64)
        assert idx.shape.as_list() == [x.shape[axis]]
        got = run([y, idx, counts, y2, idx2])
    want = _unique_ref(x, axis)
    for g, w in zip(got[:3], want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[3], want[0])
    assert got[4].dtype == np.int64


def test_unique_v2_empty_axis_is_1d_unique():
    y, idx = partition.UniqueV2(tf.constant([3, 1, 3, 2]), tf.constant([], tf.int64))
    got = run([y, idx])
    np.testing.assert_array_equal(got[0], [3, 1, 2])
    np.testing.assert_array_equal(got[1], [0, 1, 0, 2])


def test_unique_v2_bad_axis():
    with pytest.raises(ValueError, match=r"in the range \[-2, 2\), got 2"):
        partition.UniqueV2(tf.zeros([2, 2]), tf.constant([2], tf.int64))
    with pytest.raises(ValueError, match="larger than 1 elements"):
        partition.UniqueV2(tf.zeros([2, 2]), tf.constant([0, 1], tf.int64))
    with pytest.raises(ValueError, match="axis expects a 1D vector"):
        partition.UniqueV2(tf.zeros([2, 2]), tf.constant([[0]], tf.int64))
    with pytest.raises(ValueError, match="x expects a 1D vector"):
        partition.UniqueV2(tf.zeros([2, 2]), tf.constant([], tf.int64))
    p = tf.placeholder(tf.int64, [None])
    y, _ = partition.UniqueV2(tf.zeros([2, 2]), p)
    with pytest.raises(tf.errors.InvalidArgumentError, match="in the range"):
        run(y, {p: [-3]})


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_scatter_nd_non_aliasing_add(dtype):
    base = np.array([1, 0, 3, 0], dtype)
    indices = np.array([[1], [1], [3]])
    updates = np.array([1, 1, 1], dtype)
    out = tensor_scatter.ScatterNdNonAliasingAdd(tf.constant(base), tf.constant(indices),
                                                 tf.constant(updates))
    want = base.copy()
    np.add.at(want, indices[:, 0], updates)
    np.testing.assert_array_equal(run(out), want)


def test_snapshot_is_a_copy_before_an_update():
    v = tf.Variable([1.0, 2.0])
    snap = forwarding.Snapshot(v.value())
    with tf.control_dependencies([snap]):
        update = tf.assign_add(v, [10.0, 10.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        got_snap, got_update = sess.run([snap, update])
    np.testing.assert_array_equal(got_snap, [1.0, 2.0])
    np.testing.assert_array_equal(got_update, [11.0, 12.0])


def test_ref_identity_and_ref_select_write_through():
    v = tf.Variable([1.0, 2.0])
    w = tf.Variable([5.0, 6.0])
    index = tf.placeholder(tf.int32, [])
    through = tf.assign(forwarding.RefIdentity(v._ref()), [3.0, 3.0])
    chosen = tf.assign(forwarding.RefSelect(index, [v._ref(), w._ref()]), [7.0, 7.0])
    with tf.Session() as sess:
        sess.run([v.initializer, w.initializer])
        np.testing.assert_array_equal(sess.run(through), [3.0, 3.0])
        sess.run(chosen, {index: 1})
        np.testing.assert_array_equal(sess.run([v, w]), [[3.0, 3.0], [7.0, 7.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(chosen, {index: 2})


def test_guarantee_const_forwards_and_stops_gradients():
    x = tf.constant([1.0, 2.0])
    g = tf.guarantee_const(x)
    assert g.op.type == "GuaranteeConst"
    np.testing.assert_array_equal(run(g), [1.0, 2.0])
    assert tf.gradients(g, x) == [None]


def _ref_identity_gradient_case(tf):
    # The ref output of a variable, fed directly: the case differentiates through RefIdentity.
    v = tf.Variable(np.zeros(3), dtype=tf.float64)
    ref = v._ref()
    return forwarding.RefIdentity(ref) * 3.0, [ref], [np.array([0.5, -1.0, 2.0])]


def test_ref_identity_gradient_reaches_the_variable():
    v = tf.Variable([1.0, 2.0])
    (g,) = tf.gradients(tf.reduce_sum(forwarding.RefIdentity(v._ref()) * 3.0), [v])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(g), [3.0, 3.0])


def _ref_identity_case(tf, x):
    return forwarding.Snapshot(x) * 2.0


GRADIENT_CASES = [
    ("ScatterNdNonAliasingAdd", gradient_case(
        lambda tf, a, u: tensor_scatter.ScatterNdNonAliasingAdd(a, tf.constant([[0], [2], [0]]),
                                                                u), (4, 2), (3, 2))),
    ("Snapshot", gradient_case(_ref_identity_case, (3,))),
    ("RefIdentity", _ref_identity_gradient_case),
]


def test_gather_axis0_gradient_is_indexed_slices():
    params = tf.Variable(np.arange(12.0).reshape(4, 3))
    (g,) = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0, 2]) * 2.0), [params])
    assert isinstance(g, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(params.initializer)
        dense = sess.run(tf.convert_to_tensor(g))
    want = np.zeros([4, 3])
    want[2], want[0] = 4.0, 2.0
    np.testing.assert_array_equal(dense, want)


def test_gather_nd_gradient_with_single_index_column_is_indexed_slices():
    params = tf.Variable(np.arange(12.0).reshape(4, 3))
    (g,) = tf.gradients(tf.reduce_sum(tf.gather_nd(params, [[2], [0]])), [params])
    assert isinstance(g, tf.IndexedSlices)
