"""The compiled first-distinct scan (lib/numerics/distinct_jit.py) against the NumPy reference
of ops/nn/candidate_sampling.py: the same ids in the same order and the same number of draws,
over chunked streams (several chunks needed, duplicates across chunks, huge ids), and the
sampler ops' values with TFX_JIT on and off."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.lib.numerics import jit
from tensorflux.lib.numerics.distinct_jit import DistinctCollector
from tensorflux.ops.nn import candidate_sampling as cs

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]


def _stream_draw(values):
    """A `draw(n)` handing out `values` in order (then a repeat of the last value)."""
    position = [0]

    def draw(n):
        start = position[0]
        position[0] += n
        chunk = values[start:start + n]
        return np.concatenate([chunk, np.full(n - chunk.size, values[-1], np.int64)])

    return draw


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**31 - 1),
       st.sampled_from([1 << 6, 1 << 12, 2**31 - 1, 2**62]))
def test_collector_equals_reference(count, seed, high):
    rng = np.random.default_rng(seed)
    # A stream with about `count` distinct values: several chunks may be needed.
    size = count + int(rng.integers(0, 4))
    pool = rng.permutation(size).astype(np.int64) * (high // size)  # distinct, up to `high`
    values = np.concatenate([pool[rng.integers(0, size, size=4000)], pool])
    want_ids, want_tries = cs._draw_unique_reference(_stream_draw(values), count)
    got_ids, got_tries = cs._draw_unique(_stream_draw(values), count)
    np.testing.assert_array_equal(got_ids, want_ids)
    assert got_tries == want_tries and got_ids.dtype == np.int64


def test_collector_known_values():
    collector = DistinctCollector(3)
    assert not collector.feed(np.array([5, 5, 0]))
    np.testing.assert_array_equal(collector.ids(), [5, 0])
    assert collector.feed(np.array([0, 5, 9, 9, 1]))
    np.testing.assert_array_equal(collector.ids(), [5, 0, 9])
    assert collector.tries == 6  # the 9 was the sixth draw
    assert collector.feed(np.array([2]))  # already complete: nothing more is kept
    assert collector.tries == 6


@pytest.mark.parametrize("op", ["log_uniform", "uniform", "learned_unigram"])
def test_sampler_values_with_and_without_jit(monkeypatch, op):
    results = []
    for flag in ("1", "0"):
        monkeypatch.setenv("TFX_JIT", flag)
        with tf.Graph().as_default():
            labels = tf.constant(np.array([[1], [3], [8], [1]], np.int64))
            sampler = getattr(tf.nn, f"{op}_candidate_sampler")
            out = sampler(labels, 1, 30, True, 40, seed=7)
            with tf.Session() as sess:
                results.append([sess.run(list(out)) for _ in range(3)])
    for got, want in zip(results[0], results[1]):
        for a, b in zip(got, want):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
