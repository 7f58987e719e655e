"""Intra-op splits of the convolution and pooling kernels (lib/numerics: conv2d, conv_fft,
pooling_jit) on the helpers of `intra_op`: the split result must equal the unsplit kernel's
on the same inputs, bit for bit, for every path (im2col, frequency domain, compiled pooling)
and shape (batch 1, odd sizes, several chunks).

Thresholds are lowered so that small shapes split and stay fast.
"""

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorflux.lib.numerics import conv2d, conv_fft, intra_op, jit, pooling_jit
from tensorflux.lib.numerics import window as window_lib
from tensorflux.runtime import thread_budget as tb

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def helpers():
    pool = tb.KernelPool(2, "test-intra-split", counted=False)
    yield pool
    pool.close()


@pytest.fixture
def small_thresholds(monkeypatch):
    monkeypatch.setattr(intra_op, "MIN_CHUNK_FLOPS", 1)
    monkeypatch.setattr(pooling_jit, "SPLIT_MIN_BYTES", 0)


class _Counting:
    """A `submit` that hands work to `pool` and counts the hand-offs that were taken."""

    def __init__(self, pool):
        self.pool = pool
        self.taken = 0
        self.lock = threading.Lock()

    def __call__(self, fn) -> bool:
        ran = self.pool.try_run(fn)
        with self.lock:
            self.taken += ran
        return ran


def _split_and_unsplit(fn, pool, splits: int = 3):
    """(fn() unsplit, fn() split in `splits`, hand-offs taken by the split run)."""
    intra_op.configure(1)
    unsplit = fn()
    submit = _Counting(pool)
    intra_op.configure(splits, submit)
    try:
        split = fn()
    finally:
        intra_op.configure(1)
    return unsplit, split, submit.taken


def _assert_same(unsplit, split):
    for a, b in zip(unsplit, split):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def _rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# -- run_parts / balanced_parts --------------------------------------------------------------


@pytest.mark.parametrize("size,parts", [(0, 3), (1, 4), (5, 2), (7, 7), (10, 3), (3, 8)])
def test_balanced_parts_cover_the_range_evenly(size, parts):
    ranges = intra_op.balanced_parts(size, parts)
    assert [i for lo, hi in ranges for i in range(lo, hi)] == list(range(size))
    assert len(ranges) == min(parts, size)
    sizes = [hi - lo for lo, hi in ranges]
    assert not sizes or max(sizes) - min(sizes) <= 1


def test_run_parts_runs_every_part_once_on_helpers(helpers):
    seen = []
    lock = threading.Lock()

    def part(i):
        with lock:
            seen.append(i)

    submit = _Counting(helpers)
    intra_op.configure(3, submit)
    try:
        intra_op.run_parts(part, 9)
    finally:
        intra_op.configure(1)
    assert sorted(seen) == list(range(9)) and submit.taken >= 1
    seen.clear()
    intra_op.run_parts(part, 4)  # split off: inline, in order
    assert seen == [0, 1, 2, 3]


def test_run_parts_raises_the_first_error_after_all_parts(helpers):
    done = []

    def part(i):
        if i == 1:
            raise ValueError("part 1 failed")
        done.append(i)

    intra_op.configure(2, helpers.try_run)
    try:
        with pytest.raises(ValueError, match="part 1"):
            intra_op.run_parts(part, 5)
    finally:
        intra_op.configure(1)
    assert sorted(done) == [0, 2, 3, 4]


def test_run_parts_with_a_refusing_pool_runs_inline():
    seen = []
    intra_op.configure(4, lambda fn: False)
    try:
        intra_op.run_parts(seen.append, 5)
    finally:
        intra_op.configure(1)
    assert seen == [0, 1, 2, 3, 4]


# -- convolutions ----------------------------------------------------------------------------


@st.composite
def conv_cases(draw):
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    shape = (draw(st.integers(1, 6)), draw(st.integers(kh, 11)), draw(st.integers(kw, 11)),
             draw(st.integers(1, 6)))
    depth = draw(st.integers(1, 7))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    path = draw(st.sampled_from(["im2col", "fft"]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return shape, (kh, kw, shape[3], depth), padding, path, dtype, draw(st.integers(0, 2 ** 31))


def _force_path(monkeypatch, path: str, chunk_bytes: int):
    if path == "fft":
        monkeypatch.setattr(conv2d, "_FFT_MIN_FLOPS", 0)
        monkeypatch.setattr(conv2d, "_FFT_MAX_RATIO", 1e9)
        monkeypatch.setattr(conv_fft, "_SPECTRUM_BYTES", chunk_bytes)
    else:
        monkeypatch.setattr(conv2d, "_FFT_MAX_RATIO", -1.0)
        monkeypatch.setattr(conv2d, "_PATCH_BYTES", chunk_bytes)


@SETTINGS
@given(conv_cases(), st.sampled_from([1, 2000, 1 << 30]))
def test_split_convolutions_equal_unsplit(helpers, small_thresholds, monkeypatch, case,
                                          chunk_bytes):
    shape, filter_shape, padding, path, dtype, seed = case
    _force_path(monkeypatch, path, chunk_bytes)
    geo = window_lib.Window2D(data_format="NHWC", padding=padding)
    rng = np.random.default_rng(seed)
    x, w = _rand(rng, shape, dtype), _rand(rng, filter_shape, dtype)
    bias = _rand(rng, filter_shape[3:], dtype)

    def kernels():
        y = conv2d.conv2d(x, w, geo)
        g = np.cos(y)  # a fixed function of y: the same in both runs
        fused = conv2d.conv2d(x, w, geo, epilogue=lambda part: np.add(part, bias, out=part))
        return (y, fused, conv2d.conv2d_backprop_filter(x, w.shape, g, geo),
                conv2d.conv2d_backprop_input(x.shape, w, g, geo))

    unsplit, split, _ = _split_and_unsplit(kernels, helpers)
    _assert_same(unsplit, split)
    np.testing.assert_allclose(unsplit[1], unsplit[0] + bias, rtol=1e-5, atol=1e-5)
    # ... and right: the direct sums over the windows, in float64.
    out_hw, pads = geo.geometry(shape[1], shape[2], *filter_shape[:2])
    xp = np.pad(x.astype(np.float64), ((0, 0), pads[:2], pads[2:], (0, 0)))
    windows = conv2d.patches(xp, filter_shape[:2], out_hw, geo)
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(split[0], np.einsum("nhwijc,ijcd->nhwd", windows, w), **tol)
    g = np.cos(unsplit[0]).astype(np.float64)
    np.testing.assert_allclose(split[2], np.einsum("nhwijc,nhwd->ijcd", windows, g), **tol)


@pytest.mark.parametrize("path", ["im2col", "fft"])
def test_benchmark_shaped_convolutions_split_and_equal_unsplit(helpers, path, monkeypatch):
    """The CNN benchmark's second layer at batch 4 (default thresholds): the helpers are
    really used, and the values are the unsplit kernel's and the direct sums'."""
    _force_path(monkeypatch, path, 1 << 30 if path == "fft" else conv2d._PATCH_BYTES)
    monkeypatch.setattr(intra_op, "MIN_CHUNK_FLOPS", 1)
    geo = window_lib.Window2D(data_format="NHWC", padding="SAME")
    rng = np.random.default_rng(0)
    x, w = _rand(rng, (4, 16, 16, 32)), _rand(rng, (5, 5, 32, 64))
    g = _rand(rng, (4, 16, 16, 64))

    def kernels():
        return (conv2d.conv2d(x, w, geo), conv2d.conv2d_backprop_filter(x, w.shape, g, geo),
                conv2d.conv2d_backprop_input(x.shape, w, g, geo))

    unsplit, split, taken = _split_and_unsplit(kernels, helpers, splits=2)
    _assert_same(unsplit, split)
    assert taken >= 1
    xp = np.pad(x.astype(np.float64), ((0, 0), (2, 2), (2, 2), (0, 0)))
    direct = np.einsum("nhwijc,ijcd->nhwd",
                       conv2d.patches(xp, (5, 5), (16, 16), geo), w.astype(np.float64))
    np.testing.assert_allclose(split[0], direct, rtol=1e-4, atol=1e-3)


def test_im2col_chunks_depend_on_shapes_only(monkeypatch):
    monkeypatch.setattr(conv2d, "_PATCH_BYTES", 6 << 20)
    chunks = conv2d._batch_chunks(64, 307200, 4_915_200)
    assert chunks == [(0, 16), (16, 32), (32, 48), (48, 64)]  # 4 balanced, not 20 + 20 + 20 + 4
    assert conv2d._im2col_units(1, 32, 307200, 4_915_200) == [(0, 1, 0, 32)]  # little work
    bands = conv2d._im2col_units(1, 32, 307200, 49_152_000)  # one large image: row bands
    assert bands == [(0, 1, 0, 8), (0, 1, 8, 16), (0, 1, 16, 24), (0, 1, 24, 32)]
    assert conv2d._batch_chunks(1, 10 << 20, 1 << 40) == [(0, 1)]
    assert conv2d._batch_chunks(3, 100, 10) == [(0, 3)]  # little work: one chunk


# -- pooling ---------------------------------------------------------------------------------


@st.composite
def pool_cases(draw):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    shape = (draw(st.integers(1, 7)), draw(st.integers(k[0], 9)), draw(st.integers(k[1], 9)),
             draw(st.integers(1, 5)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    geo = window_lib.window("NHWC", [1, *k, 1], [1, *s, 1], (1, 1, 1, 1), padding, ())
    return shape, dtype, geo, draw(st.integers(0, 2 ** 31))


@pytest.mark.jit_compile
@pytest.mark.skipif(not jit.available(), reason="numba is not available")
@SETTINGS
@given(pool_cases())
def test_split_pooling_equals_unsplit(helpers, small_thresholds, case):
    shape, dtype, geo, seed = case
    rng = np.random.default_rng(seed)
    x = _rand(rng, shape, dtype)
    x.reshape(-1)[::5] = np.nan  # NaN routing must not depend on the split either
    pooled_shape = pooling_jit.max_pool(x, geo).shape
    g = _rand(rng, pooled_shape, dtype)

    def kernels():
        return (pooling_jit.max_pool(x, geo), pooling_jit.max_pool_grad(x, g, geo),
                pooling_jit.avg_pool(x, geo), pooling_jit.avg_pool_grad(x.shape, g, geo))

    unsplit, split, _ = _split_and_unsplit(kernels, helpers)
    _assert_same(unsplit, split)
    np.testing.assert_array_equal(split[0], conv2d.max_pool(x, geo))


@pytest.mark.jit_compile
@pytest.mark.skipif(not jit.available(), reason="numba is not available")
def test_small_pooling_is_not_split(helpers):
    geo = window_lib.window("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], (1, 1, 1, 1), "VALID", ())
    x = _rand(np.random.default_rng(0), (4, 8, 8, 3))
    _, _, taken = _split_and_unsplit(lambda: (pooling_jit.max_pool(x, geo),), helpers)
    assert taken == 0
