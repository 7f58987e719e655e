"""Stateful random ops' streams: each op draws from its own PCG64 stream keyed by its seeds.

Small draws are made value by value (keeping the GIL, see `stateful._draw`); they must give the
values one array draw of the same stream gives, whatever the sizes drawn before; threads sharing
an op share its stream without losing or repeating a value; a seeded op's values never depend on
other ops.
"""

import threading

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.random import stateful as random_ops

# Sizes on both sides of the value-by-value limit (16), empty and scalar shapes included.
SHAPES = [[], [3], [2, 2], [16], [17], [0], [4, 5], [1], [2, 0, 3], [3]]


def _stream(op):
    seed, seed2 = op.get_attr("seed"), op.get_attr("seed2")
    sequence = np.random.SeedSequence([seed, seed2])
    return np.random.Generator(np.random.PCG64(sequence))


def _uniform_half(rng, shape):
    bits = rng.integers(0, 1 << 10, size=shape, dtype=np.int32)
    return (bits * np.float32(2.0**-10)).astype(np.float16)


CASES = {
    "uniform32": (lambda s: random_ops.RandomUniform(s, dtype=tf.float32, seed=3, seed2=4),
                  lambda rng, shape: rng.random(shape, dtype=np.float32)),
    "uniform64": (lambda s: random_ops.RandomUniform(s, dtype=tf.float64, seed=5, seed2=0),
                  lambda rng, shape: rng.random(shape, dtype=np.float64)),
    "uniform16": (lambda s: random_ops.RandomUniform(s, dtype=tf.float16, seed=1, seed2=1),
                  _uniform_half),
    "int32": (lambda s: tf.random_uniform(s, 0, 2**31 - 1, dtype=tf.int32, seed=7),
              lambda rng, shape: rng.integers(0, 2**31 - 1, size=shape, dtype=np.int32)),
    "int64": (lambda s: tf.random_uniform(s, -5, 9, dtype=tf.int64, seed=8),
              lambda rng, shape: rng.integers(-5, 9, size=shape, dtype=np.int64)),
    "normal32": (lambda s: random_ops.RandomStandardNormal(s, dtype=tf.float32, seed=2, seed2=9),
                 lambda rng, shape: rng.standard_normal(shape, dtype=np.float32)),
    "normal16": (lambda s: random_ops.RandomStandardNormal(s, dtype=tf.float16, seed=2, seed2=9),
                 lambda rng, shape: rng.standard_normal(shape, dtype=np.float32).astype(
                     np.float16)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_draws_equal_array_draws_of_the_op_stream(case):
    build, reference = CASES[case]
    with tf.Graph().as_default():
        shape = tf.placeholder(tf.int32, [None])
        out = build(shape)
        op = out.op
        with tf.Session() as sess:
            got = [sess.run(out, {shape: np.array(s, np.int32)}) for s in SHAPES]
    rng = _stream(op)
    for s, value in zip(SHAPES, got):
        expected = reference(rng, tuple(s))
        assert value.shape == tuple(s) and value.dtype == expected.dtype
        np.testing.assert_array_equal(value, expected)


def test_truncated_normal_small_and_large_draws_stay_in_bounds_and_repeat():
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        shape = tf.placeholder(tf.int32, [None])
        out = random_ops.truncated_normal(shape)
        with tf.Session() as sess:
            first = [sess.run(out, {shape: s}) for s in ([], [5], [400])]
        with tf.Session() as sess:
            second = [sess.run(out, {shape: s}) for s in ([], [5], [400])]
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)
        assert np.all(np.abs(x) < 2)


def test_threads_sharing_an_op_share_its_stream():
    """Threads running one seeded op draw disjoint parts of its stream: all values, once."""
    threads, runs = 6, 30
    with tf.Graph().as_default():
        crop = tf.random_uniform([3], 0, 2**31 - 1, dtype=tf.int32, seed=21)  # random_crop's
        coin = random_ops.RandomUniform(np.zeros([0], np.int32), dtype=tf.float32, seed=22,
                                        seed2=1)
        with tf.Session() as sess:
            run = sess.make_callable([crop, coin])
            results = [[] for _ in range(threads)]
            start = threading.Barrier(threads)

            def work(out):
                start.wait()
                for _ in range(runs):
                    out.append(run())

            workers = [threading.Thread(target=work, args=(r,)) for r in results]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
    crops = np.concatenate([c for r in results for c, _ in r])
    coins = np.array([k for r in results for _, k in r])
    total = threads * runs
    expected_crops = _stream(crop.op).integers(0, 2**31 - 1, size=3 * total, dtype=np.int32)
    expected_coins = _stream(coin.op).random(total, dtype=np.float32)
    np.testing.assert_array_equal(np.sort(crops), np.sort(expected_crops))
    np.testing.assert_array_equal(np.sort(coins), np.sort(expected_coins))


def test_seeded_op_values_do_not_depend_on_other_ops():
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        a = tf.random_uniform([4])
        b = tf.random_uniform([], 0, 10, dtype=tf.int32)
        c = tf.random_normal([40])
        with tf.Session() as sess:
            alone = [sess.run(a) for _ in range(4)]
        with tf.Session() as sess:
            mixed = []
            for i in range(4):
                sess.run([b, c])
                mixed.append(sess.run([a, b])[0] if i % 2 else sess.run(a))
    for x, y in zip(alone, mixed):
        np.testing.assert_array_equal(x, y)


def test_unseeded_ops_draw_distinct_streams():
    with tf.Graph().as_default():
        ops = [tf.random_uniform([3], 0, 2**31 - 1, dtype=tf.int32) for _ in range(3)]
        with tf.Session() as sess:
            first = sess.run(ops)
        with tf.Session() as sess:
            second = sess.run(ops)
    draws = [tuple(v) for v in first + second]
    assert len(set(draws)) == len(draws)
