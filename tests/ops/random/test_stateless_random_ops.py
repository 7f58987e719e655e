"""Stateless random ops: deterministic per seed pair, with the right distributions (the bit
streams are not TensorFlow's)."""

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

COVERED_OPS = {"StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal",
               "StatelessRandomUniformInt", "StatelessMultinomial"}


def _run(x, feed=None):
    with tf.Session() as sess:
        return sess.run(x, feed)


def _all_kinds(seed, n=4000):
    r = tf.random
    return [r.stateless_uniform([n], seed), r.stateless_normal([n], seed),
            r.stateless_truncated_normal([n], seed),
            r.stateless_uniform([n], seed, minval=-3, maxval=4, dtype=tf.int64),
            r.stateless_categorical(np.log([[0.2, 0.8]]), n, seed)]


def test_same_seed_same_values_across_sessions_and_graphs():
    first = _run(_all_kinds([1, 2]))
    with tf.Graph().as_default():
        again = _run(_all_kinds(tf.constant([1, 2], tf.int32)))
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    with tf.Graph().as_default():
        other = _run(_all_kinds([1, 3]))
    assert all(not np.array_equal(a, b) for a, b in zip(first, other))
    seed = tf.placeholder(tf.int64, [2])
    u = tf.random.stateless_uniform([3], seed)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(u, {seed: [5, 6]}), sess.run(u, {seed: [5, 6]}))
        assert not np.array_equal(sess.run(u, {seed: [5, 6]}), sess.run(u, {seed: [6, 5]}))


def test_distributions():
    uniform, normal, truncated, ints, classes = _run(_all_kinds([11, 12], n=20000))
    assert uniform.dtype == np.float32 and 0 <= uniform.min() and uniform.max() < 1
    assert abs(uniform.mean() - 0.5) < 0.01 and abs(uniform.var() - 1 / 12) < 0.005
    assert abs(normal.mean()) < 0.03 and abs(normal.std() - 1) < 0.03
    assert np.abs(truncated).max() < 2 and abs(truncated.std() - 0.8796) < 0.02
    assert ints.dtype == np.int64 and ints.min() == -3 and ints.max() == 3
    assert classes.shape == (1, 20000) and classes.dtype == np.int64
    assert abs(classes.mean() - 0.8) < 0.02


def test_scaling_dtypes_and_shapes():
    u = tf.random.stateless_uniform([2, 3], [1, 2], minval=1.0, maxval=3.0, dtype=tf.float64)
    assert u.shape.as_list() == [2, 3] and u.dtype is tf.float64
    assert u.op.name == "stateless_random_uniform"
    n = tf.random.stateless_normal([500], [3, 4], mean=10.0, stddev=0.5, dtype=tf.float16)
    t = tf.random.stateless_truncated_normal([500], [3, 4], mean=-1.0, stddev=2.0)
    h = tf.random.stateless_uniform([500], [3, 4], dtype=tf.float16)
    i = tf.random.stateless_uniform([3], [3, 4], minval=5, maxval=6, dtype=tf.int32)
    m = tf.random.stateless_multinomial([[0.0, -np.inf, 0.0]] * 2, 50, [3, 4],
                                        output_dtype=tf.int32)
    assert m.shape.as_list() == [2, 50] and m.dtype is tf.int32
    uv, nv, tv, hv, iv, mv = _run([u, n, t, h, i, m])
    assert 1 <= uv.min() and uv.max() < 3
    assert nv.dtype == np.float16 and abs(float(nv.mean()) - 10) < 0.1
    assert np.all(np.abs(tv + 1) < 4)
    assert hv.dtype == np.float16 and hv.max() < 1
    np.testing.assert_array_equal(iv, [5, 5, 5])
    assert set(np.unique(mv)) <= {0, 2}
    shape = tf.placeholder(tf.int32, [2])
    dyn = tf.random.stateless_normal(shape, [1, 1])
    assert dyn.shape.as_list() == [None, None]
    assert _run(dyn, {shape: [2, 5]}).shape == (2, 5)


def test_errors():
    with pytest.raises(ValueError, match=r"seed must have shape \[2\]"):
        tf.random.stateless_uniform([2], [1, 2, 3])
    with pytest.raises(ValueError, match="must be both None or not None"):
        tf.random.stateless_uniform([2], [1, 2], dtype=tf.int32)
    with pytest.raises(TypeError, match="seed must be int32 or int64"):
        tf.random.stateless_normal([2], [1.0, 2.0])
    with pytest.raises(errors.InvalidArgumentError, match="Need minval < maxval"):
        _run(tf.random.stateless_uniform([2], [1, 2], minval=5, maxval=5, dtype=tf.int32))
    seed = tf.placeholder(tf.int64)
    with pytest.raises(errors.InvalidArgumentError, match=r"seed must have shape \[2\]"):
        _run(tf.random.stateless_normal([2], seed), {seed: [1, 2, 3]})
    with pytest.raises(ValueError, match="rank 2|Shape must be rank"):
        tf.random.stateless_categorical([0.0, 1.0], 2, [1, 2])


def test_not_differentiable():
    mean = tf.placeholder(tf.float32, [])
    y = tf.random.stateless_normal([3], [1, 2], mean=mean)
    (g,) = tf.gradients(tf.reduce_sum(y), [mean])
    assert _run(g, {mean: 0.0}) == 3.0
