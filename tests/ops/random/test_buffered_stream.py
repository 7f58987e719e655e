"""BufferedStream: values drawn a block at a time are the values of unbuffered draws, in order,
whatever the sizes and bounds requested (bounds changes rewind the generator)."""

import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorflux.ops.random.buffered_stream import BLOCK, BufferedStream

DIMS = st.sampled_from([(), (1,), (3,), (2, 2), (0,), (2, 0, 3), (16,), (17,), (5, 40),
                        (BLOCK,), (BLOCK + 3,)])
BOUNDS = st.sampled_from([(0, 2**31 - 1), (0, 7), (-5, 9), (3, 4)])


def _pair(seed, method, dtype):
    ours = np.random.Generator(np.random.PCG64(seed))
    reference = np.random.Generator(np.random.PCG64(seed))
    return BufferedStream(ours, getattr(ours, method), dtype), getattr(reference, method)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dims=st.lists(DIMS, min_size=1, max_size=40),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_uniform_draws_equal_unbuffered_draws(seed, dims, dtype):
    stream, reference = _pair(seed, "random", dtype)
    for d in dims:
        got = stream.take(d)
        expected = np.asarray(reference(size=d, dtype=dtype))
        assert got.shape == d and got.dtype == dtype
        np.testing.assert_array_equal(got, expected)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       requests=st.lists(st.tuples(DIMS, BOUNDS, st.integers(1, 6)), min_size=1, max_size=12),
       dtype=st.sampled_from([np.int32, np.int64]))
def test_integer_draws_equal_unbuffered_draws_when_bounds_change(seed, requests, dtype):
    stream, reference = _pair(seed, "integers", dtype)
    for d, (low, high), repeat in requests:
        for _ in range(repeat):
            got = stream.take(d, low, high)
            expected = np.asarray(reference(low, high, size=d, dtype=dtype))
            assert got.shape == d and got.dtype == dtype
            np.testing.assert_array_equal(got, expected)


def test_values_handed_out_are_fresh_arrays():
    rng = np.random.Generator(np.random.PCG64(3))
    stream = BufferedStream(rng, rng.random, np.float32)
    first = [stream.take((3,)) for _ in range(4)]
    kept = [a.copy() for a in first]
    for a in first:
        a[:] = -1  # a kernel writing into its output must not change later draws
    later = stream.take((BLOCK,))
    assert np.all(later >= 0)
    expected = np.random.Generator(np.random.PCG64(3)).random(12 + BLOCK, dtype=np.float32)
    np.testing.assert_array_equal(np.concatenate(kept + [later]), expected)


def test_bounds_changed_after_a_block_continue_the_unbuffered_stream():
    rng = np.random.Generator(np.random.PCG64(11))
    stream = BufferedStream(rng, rng.integers, np.int64)
    got = [stream.take((2,), 0, 10) for _ in range(5)] + [stream.take((3,), -4, 1000)]
    reference = np.random.Generator(np.random.PCG64(11))
    expected = [reference.integers(0, 10, size=2) for _ in range(5)]
    expected.append(reference.integers(-4, 1000, size=3))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    # The generator itself continues where the values handed out end.
    np.testing.assert_array_equal(rng.random(4), reference.random(4))


def test_threads_draw_every_value_once():
    rng = np.random.Generator(np.random.PCG64(5))
    stream = BufferedStream(rng, rng.integers, np.int32)
    threads, runs = 4, 300
    results = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def work(out):
        start.wait()
        for i in range(runs):
            out.append(stream.take((3,) if i % 7 else (20,), 0, 2**31 - 1))

    workers = [threading.Thread(target=work, args=(r,)) for r in results]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    values = np.concatenate([v for r in results for v in r])
    expected = np.random.Generator(np.random.PCG64(5)).integers(
        0, 2**31 - 1, size=values.size, dtype=np.int32)
    np.testing.assert_array_equal(np.sort(values), np.sort(expected))

