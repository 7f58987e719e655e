"""cond / case / Merge edges: IndexedSlices branches whose indices disagree on int32/int64
merge as int64; `case(exclusive=True)` checks at run time even when every predicate is known
while building; fetching a Merge's value_index when the predicate is a constant."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.control_flow import primitives as cf


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.mark.parametrize("pred", [True, False])
def test_cond_indexed_slices_mixed_index_dtypes(pred):
    values = tf.constant([[3.0, 1.0]])
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p,
                lambda: tf.IndexedSlices(values * 2.0, tf.constant([4], tf.int32)),
                lambda: tf.IndexedSlices(values - 1.0, tf.constant([1], tf.int64)))
    assert r.indices.dtype == tf.int64
    with tf.Session() as sess:
        val, ind = sess.run([r.values, r.indices], {p: pred})
    np.testing.assert_allclose(val, [[6.0, 2.0]] if pred else [[2.0, 0.0]])
    assert ind.dtype == np.int64
    np.testing.assert_array_equal(ind, [4] if pred else [1])


def test_cond_still_rejects_mixed_value_dtypes():
    with pytest.raises(ValueError, match="same type"):
        tf.cond(tf.constant(True), lambda: tf.constant(1, tf.int32),
                lambda: tf.constant(1, tf.int64))


def test_case_exclusive_with_constant_predicates_fails_when_run():
    x, y = tf.constant(1), tf.constant(2)
    r = tf.case([(x < y, lambda: tf.constant(5)), (x < y, lambda: tf.constant(6))],
                default=lambda: tf.constant(-1), exclusive=True)
    ok = tf.case([(x < y, lambda: tf.constant(5)), (x > y, lambda: tf.constant(6))],
                 default=lambda: tf.constant(-1), exclusive=True)
    with tf.Session() as sess:
        assert sess.run(ok) == 5
        with pytest.raises(errors.InvalidArgumentError, match="more than 1 conditions"):
            sess.run(r)


@pytest.mark.parametrize("dtype", [tf.float32, tf.uint64, tf.qint8])
@pytest.mark.parametrize("pred", [True, False])
def test_fetch_merge_value_index_with_constant_predicate(dtype, pred):
    data = tf.constant(np.array([42]), dtype)
    f, t = cf.switch(data, tf.constant(pred))
    merged = cf.merge([f, t])
    with tf.Session() as sess:
        value, index = sess.run(merged)
    np.testing.assert_array_equal(value, [42])
    assert index == (1 if pred else 0)
