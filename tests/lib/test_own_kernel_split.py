"""Own kernels take the intra-op split on a quiet machine (`intra_op.own_kernel`, the thread
budget's `own` count), the compiled pooling kernels split over BLAS's thread count, and the
direct convolution's batch parts run on the split's helpers under load.

Values: a kernel run with the budget's two threads equals the one-thread run bit for bit
(the parts are the unsplit products and loops), NaN and inf included, and is right against
direct float64 sums.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorflux.lib.numerics import conv2d, conv_direct, conv_fft, intra_op, jit, pooling_jit
from tensorflux.lib.numerics import window as window_lib
from tensorflux.runtime import thread_budget as tb

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


class _FakeBlas:
    def __init__(self):
        self.calls = []
        self.current = None

    def set(self, threads):
        if threads != self.current:
            self.calls.append(threads)
            self.current = threads

    def restore(self):
        self.calls.append("restore")
        self.current = None


@pytest.fixture
def quiet_process():
    """A process budget of 2 cores on a quiet machine (fake BLAS), released afterwards."""
    load = [0.0]
    blas = _FakeBlas()
    process = tb._Process(probe=lambda cores: load[0], blas=blas)
    process.load, process.fake_blas = load, blas
    yield process
    while process.users:
        process.release()
    intra_op.configure(1)
    intra_op.configure_own_kernels()


# -- the budget's accounting -----------------------------------------------------------------


def test_own_kernel_on_a_quiet_machine_takes_the_split_and_gives_it_back(quiet_process):
    quiet_process.acquire(tb.ThreadBudget(2, 2, 2))
    blas = quiet_process.fake_blas
    assert blas.current == 2 and intra_op.splits() == 1 and intra_op.elementwise_splits() == 2
    with intra_op.own_kernel():
        assert blas.current == 1 and intra_op.splits() == 2 and quiet_process.threads == 1
        with intra_op.own_kernel():  # nested (the input gradient as a convolution)
            assert blas.current == 1 and intra_op.splits() == 2
        assert quiet_process.own == 1 and intra_op.splits() == 2
    assert quiet_process.own == 0 and blas.current == 2 and intra_op.splits() == 1
    assert quiet_process.threads == 2
    with pytest.raises(ValueError, match="inside"):
        with intra_op.own_kernel():
            raise ValueError("inside the kernel")
    assert quiet_process.own == 0 and blas.current == 2
    assert blas.calls == [2, 1, 2, 1, 2]


def test_own_kernel_changes_nothing_under_load_or_with_one_thread(quiet_process):
    quiet_process.load[0] = 1.0  # another process on one of our cores
    quiet_process.acquire(tb.ThreadBudget(2, 2, 2))
    blas = quiet_process.fake_blas
    assert blas.current == 1 and intra_op.splits() == 2
    with intra_op.own_kernel():
        assert quiet_process.own == 0 and blas.current == 1 and intra_op.splits() == 2
    assert blas.calls == [1]
    quiet_process.release()
    quiet_process.load[0] = 0.0
    quiet_process.acquire(tb.ThreadBudget(2, 1, 2))  # intra_op_parallelism_threads=1
    with intra_op.own_kernel():
        assert quiet_process.own == 0 and intra_op.splits() == 1
        assert intra_op.elementwise_splits() == 1
    assert blas.calls[-1] == 1


def test_own_kernel_beside_a_background_kernel_keeps_one_thread_each(quiet_process):
    quiet_process.acquire(tb.ThreadBudget(2, 2, 2))
    quiet_process.kernel_started()  # the fast path's overlap: two kernels share two cores
    with intra_op.own_kernel():
        assert quiet_process.own == 0 and intra_op.splits() == 1
    quiet_process.kernel_finished()
    assert quiet_process.fake_blas.calls == [2, 1, 2]


def test_own_kernel_without_a_runtime_is_a_plain_call():
    intra_op.configure_own_kernels()
    intra_op.configure(1)
    with intra_op.own_kernel() as scope:
        assert not scope.entered


# -- values: budget 2 (own kernels split) equals budget 1 --------------------------------------


@pytest.fixture(scope="module")
def helpers():
    pool = tb.KernelPool(1, "test-own-kernel", counted=False)
    yield pool
    pool.close()


def _budget_one_and_two(fn, process, helpers):
    """(fn() with the budget's one thread, fn() with two on a quiet machine, own kernels)."""
    intra_op.configure(1)
    intra_op.configure_own_kernels()
    one = fn()
    process.intra_pool = helpers  # the runtime's helper pool: the module's (closed with it)
    process.acquire(tb.ThreadBudget(2, 2, 2))
    try:
        assert intra_op.elementwise_splits() == 2
        two = fn()
    finally:
        process.release()
    return one, two


def _assert_same(one, two):
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@st.composite
def conv_cases(draw):
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    shape = (draw(st.integers(1, 5)), draw(st.integers(kh, 12)), draw(st.integers(kw, 12)),
             draw(st.integers(1, 6)))
    depth = draw(st.integers(1, 7))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    strides = draw(st.sampled_from([(1, 1), (2, 2), (1, 2)]))
    path = draw(st.sampled_from(["im2col", "fft"]))
    special = draw(st.sampled_from([None, np.nan, np.inf]))
    return shape, (kh, kw, shape[3], depth), padding, strides, path, special, \
        draw(st.integers(0, 2 ** 31))


@SETTINGS
@given(conv_cases())
def test_convolutions_with_budget_two_equal_budget_one(quiet_process, helpers, monkeypatch,
                                                       case):
    shape, filter_shape, padding, strides, path, special, seed = case
    monkeypatch.setattr(intra_op, "MIN_CHUNK_FLOPS", 1)
    if path == "fft":
        monkeypatch.setattr(conv2d, "_FFT_MIN_FLOPS", 0)
        monkeypatch.setattr(conv2d, "_FFT_MAX_RATIO", 1e9)
        monkeypatch.setattr(conv_fft, "_SPECTRUM_BYTES", 4000)
    else:
        monkeypatch.setattr(conv2d, "_FFT_MAX_RATIO", -1.0)
        monkeypatch.setattr(conv2d, "_PATCH_BYTES", 2000)
    geo = window_lib.Window2D(data_format="NHWC", padding=padding, strides=strides)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(filter_shape).astype(np.float32)
    out_hw, _ = geo.geometry(shape[1], shape[2], *filter_shape[:2])
    g = rng.standard_normal((shape[0], *out_hw, filter_shape[3])).astype(np.float32)
    if special is not None:
        x.flat[rng.integers(x.size)] = special

    def kernels():
        return (conv2d.conv2d(x, w, geo), conv2d.conv2d_backprop_filter(x, w.shape, g, geo),
                conv2d.conv2d_backprop_input(x.shape, w, g, geo))

    one, two = _budget_one_and_two(kernels, quiet_process, helpers)
    _assert_same(one, two)
    if special is None and g.size:  # ... and right: direct float64 sums over the windows
        _, pads = geo.geometry(shape[1], shape[2], *filter_shape[:2])
        xp = np.pad(x.astype(np.float64), ((0, 0), pads[:2], pads[2:], (0, 0)))
        windows = conv2d.patches(xp, filter_shape[:2], out_hw, geo)
        tol = dict(rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(two[0], np.einsum("nhwijc,ijcd->nhwd", windows, w), **tol)
        np.testing.assert_allclose(two[1], np.einsum("nhwijc,nhwd->ijcd", windows, g), **tol)


@pytest.mark.skipif(not jit.available(), reason="compiled kernels off")
@SETTINGS
@given(st.integers(1, 9), st.sampled_from([16, 32]), st.sampled_from([(2, 2), (3, 3)]),
       st.sampled_from([None, np.nan, -np.inf]), st.integers(0, 2 ** 31))
def test_pooling_split_over_blas_threads_equals_inline(quiet_process, helpers, monkeypatch, n,
                                                       c, k, special, seed):
    monkeypatch.setattr(pooling_jit, "SPLIT_MIN_BYTES", 0)
    geo = window_lib.Window2D(data_format="NHWC", ksize=k, strides=(2, 2), padding="SAME")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 10, 9, c)).astype(np.float32)
    if special is not None:
        x.flat[rng.integers(x.size)] = special
    y = pooling_jit.max_pool(x, geo)
    g = rng.standard_normal(y.shape).astype(np.float32)
    one, two = _budget_one_and_two(
        lambda: (pooling_jit.max_pool(x, geo), pooling_jit.max_pool_grad(x, g, geo)),
        quiet_process, helpers)
    _assert_same(one, two)
    np.testing.assert_array_equal(one[0], conv2d._max_pool(x, geo))


@pytest.mark.skipif(not (jit.available() and conv_direct.wide_vectors()),
                    reason="direct convolution needs compiled kernels and AVX-512")
@pytest.mark.parametrize("n,c,padding", [(7, 3, "SAME"), (4, 1, "VALID"), (9, 4, "SAME")])
def test_direct_convolution_split_under_load_equals_inline(helpers, monkeypatch, n, c, padding):
    monkeypatch.setattr(conv_direct, "_MIN_PART_FLOPS", 1)
    geo = window_lib.Window2D(data_format="NHWC", padding=padding)
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 12, 11, c)).astype(np.float32)
    x[0, 3, 4, 0] = np.nan
    w = rng.standard_normal((5, 5, c, 32)).astype(np.float32)
    out_hw, _ = geo.geometry(12, 11, 5, 5)
    g = rng.standard_normal((n, *out_hw, 32)).astype(np.float32)

    def kernels():
        return (conv2d.conv2d(x, w, geo), conv2d.conv2d_backprop_filter(x, w.shape, g, geo))

    intra_op.configure(1)
    one = kernels()
    calls = []

    def submit(fn):
        calls.append(1)
        return helpers.try_run(fn)

    intra_op.configure(2, submit)  # loaded: the row split on, no elementwise threads
    try:
        two = kernels()
    finally:
        intra_op.configure(1)
    _assert_same(one, two)
    assert calls  # the parts were offered to a helper
