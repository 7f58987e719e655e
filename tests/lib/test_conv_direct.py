"""The direct compiled convolution (lib/numerics/conv_direct.py over conv_direct_jit: few input
channels, output channels a multiple of 16) against the im2col path (`MAX_CHANNELS = 0`) and a
float64 loop reference on the same inputs: odd shapes and widths (tile tails), strides,
dilations, SAME/VALID/explicit padding, 1..4 input channels, NaN/inf inputs, empty batches;
the intra-op split (bit for bit), the fused epilogue, and the ops' choice of kernel."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

import tensorflux as tf
from tensorflux.lib.numerics import conv2d, conv_direct, intra_op, jit
from tensorflux.runtime import thread_budget as tb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from conv_refs import geometry, ref_backprop_filter, ref_conv  # noqa: E402

_WIDE_VECTORS = conv_direct.wide_vectors

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _direct_kernels_on(monkeypatch):
    """The direct kernels run (correct, if slower) on CPUs without AVX-512 too: tested there
    as well."""
    monkeypatch.setattr(conv_direct, "wide_vectors", lambda: True)


@st.composite
def cases(draw):
    k = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilations = (draw(st.integers(1, 2)), draw(st.sampled_from([1, 1, 2])))
    padding = draw(st.sampled_from(["SAME", "VALID", ((1, 0), (2, 1)), ((0, 3), (0, 0))]))
    reach = (k[0] - 1) * dilations[0] + 1, (k[1] - 1) * dilations[1] + 1
    shape = (draw(st.integers(0, 3)), draw(st.integers(reach[0], 10)),
             draw(st.integers(reach[1], 30)), draw(st.integers(1, 4)))
    depth = draw(st.sampled_from([16, 32, 48, 64, 80, 96, 112, 128]))
    return (geometry(None, strides, dilations, padding), shape, k, depth,
            draw(st.booleans()), draw(st.integers(0, 2 ** 31 - 1)))


def _im2col(monkeypatch, fn):
    with monkeypatch.context() as patch:
        patch.setattr(conv_direct, "MAX_CHANNELS", 0)
        return fn()


@SETTINGS
@given(cases())
def test_direct_matches_im2col_and_reference(case):
    geo, shape, k, depth, specials, seed = case
    rng = np.random.default_rng(seed)
    x = floats(rng, shape, np.float32, specials)
    f = floats(rng, (*k, shape[3], depth), np.float32, False)
    assert conv_direct.applies(np.float32, shape[3], depth)
    with pytest.MonkeyPatch.context() as monkeypatch:
        y = conv2d.conv2d(x, f, geo)
        y_im2col = _im2col(monkeypatch, lambda: conv2d.conv2d(x, f, geo))
        g = floats(rng, y.shape, np.float32, specials and seed % 2 == 0)
        df = conv2d.conv2d_backprop_filter(x, f.shape, g, geo)
        df_im2col = _im2col(monkeypatch, lambda: conv2d.conv2d_backprop_filter(x, f.shape, g, geo))
    assert y.dtype == df.dtype == np.float32 and y.flags.c_contiguous
    assert y.shape == y_im2col.shape and df.shape == f.shape
    np.testing.assert_allclose(y, y_im2col, rtol=1e-4, atol=1e-4, equal_nan=True)
    np.testing.assert_allclose(df, df_im2col, rtol=1e-4, atol=1e-3, equal_nan=True)
    if not specials:
        x64, f64, g64 = (v.astype(np.float64) for v in (x, f, g))
        np.testing.assert_allclose(y, ref_conv(x64, f64, geo), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(df, ref_backprop_filter(x64, f.shape, g64, geo),
                                   rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_nonfinite_input_reaches_only_its_windows(special):
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    x = np.ones((1, 6, 20, 3), np.float32)
    x[0, 2, 9, 1] = special
    f = np.ones((3, 3, 3, 32), np.float32)
    y = conv2d.conv2d(x, f, geo)
    hit = np.zeros(y.shape[:3], bool)
    hit[0, 1:4, 8:11] = True
    assert np.all(np.isnan(y[hit]) if np.isnan(special) else y[hit] == special)
    np.testing.assert_array_equal(y[~hit][:, 0], ref_conv(np.where(np.isfinite(x), x, 0),
                                                          f, geo)[~hit][:, 0])


@pytest.mark.parametrize("shape,depth", [((4, 32, 32, 3), 32), ((3, 24, 24, 3), 64)])
def test_benchmark_shapes_match_im2col(monkeypatch, shape, depth):
    """The CNN benchmark's conv1 and the CIFAR-10 model's (batch cut to stay fast)."""
    rng = np.random.default_rng(1)
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    x = rng.standard_normal(shape).astype(np.float32)
    f = rng.standard_normal((5, 5, 3, depth)).astype(np.float32)
    g = rng.standard_normal((*shape[:3], depth)).astype(np.float32)
    y, df = conv2d.conv2d(x, f, geo), conv2d.conv2d_backprop_filter(x, f.shape, g, geo)
    y_ref = _im2col(monkeypatch, lambda: conv2d.conv2d(x, f, geo))
    df_ref = _im2col(monkeypatch, lambda: conv2d.conv2d_backprop_filter(x, f.shape, g, geo))
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(df, df_ref, rtol=1e-5, atol=1e-4)


def test_other_dtypes_and_depths_keep_im2col(monkeypatch):
    assert conv_direct.applies(np.float32, 3, 32)
    assert not conv_direct.applies(np.float64, 3, 32)
    assert not conv_direct.applies(np.float32, 3, 24)
    assert not conv_direct.applies(np.float32, 5, 32)
    assert not conv_direct.applies(np.float16, 3, 32)
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    x = np.random.default_rng(2).standard_normal((2, 7, 9, 3))
    f = np.random.default_rng(3).standard_normal((3, 3, 3, 16))
    np.testing.assert_allclose(conv2d.conv2d(x, f, geo), ref_conv(x, f, geo), rtol=1e-12)
    monkeypatch.setattr(conv_direct, "wide_vectors", lambda: False)  # no AVX-512: im2col
    assert not conv_direct.applies(np.float32, 3, 32)


def test_wide_vectors_reads_the_cpu_flags(monkeypatch):
    real = _WIDE_VECTORS.__wrapped__  # uncached
    try:
        with open("/proc/cpuinfo") as info:
            flags = next((line.split() for line in info if line.startswith("flags")), [])
    except OSError:
        flags = []
    assert real() == ("avx512f" in flags)
    monkeypatch.setenv("NUMBA_CPU_NAME", "generic")  # numba compiles for another CPU
    assert real() is False


def test_split_equals_unsplit_and_epilogue_applies(monkeypatch):
    monkeypatch.setattr(conv_direct, "_MIN_PART_FLOPS", 1)
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 9, 13, 2)).astype(np.float32)
    f = rng.standard_normal((5, 5, 2, 48)).astype(np.float32)
    g = rng.standard_normal((5, 9, 13, 48)).astype(np.float32)
    bias = rng.standard_normal(48).astype(np.float32)

    def kernels():
        fused = conv2d.conv2d(x, f, geo, epilogue=lambda part: np.add(part, bias, out=part))
        return (conv2d.conv2d(x, f, geo), fused, conv2d.conv2d_backprop_filter(x, f.shape, g, geo))

    pool = tb.KernelPool(2, "test-conv-direct", counted=False)
    try:
        intra_op.configure(1)
        unsplit = kernels()
        intra_op.configure(2, pool.try_run, elementwise=2)
        split = kernels()
    finally:
        intra_op.configure(1)
        pool.close()
    for a, b in zip(unsplit, split):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(split[1], split[0] + bias, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(split[2], ref_backprop_filter(x.astype(np.float64), f.shape,
                                                             g.astype(np.float64), geo),
                               rtol=1e-4, atol=1e-3)


def test_ops_take_the_direct_kernel_and_match_the_numpy_path(monkeypatch):
    """tf.nn.conv2d and its filter gradient in a session, compiled (direct) against
    TFX_JIT=0 (the NumPy im2col path) on the same inputs."""
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((3, 11, 14, 3)).astype(np.float32)
    fv = rng.standard_normal((5, 5, 3, 32)).astype(np.float32)
    calls = []
    real = conv_direct.conv2d_backprop_filter
    monkeypatch.setattr(conv_direct, "conv2d_backprop_filter",
                        lambda *a: calls.append(1) or real(*a))

    def run():
        with tf.Graph().as_default():
            x = tf.constant(xv)
            f = tf.constant(fv)
            y = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME")
            loss = tf.reduce_sum(tf.sin(y))
            (df,) = tf.gradients(loss, [f])
            with tf.Session() as sess:
                return sess.run([y, df])

    y, df = run()
    assert calls
    monkeypatch.setenv("TFX_JIT", "0")
    y0, df0 = run()
    np.testing.assert_allclose(y, y0, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(df, df0, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_strided_views_and_grouped_slices(monkeypatch, padding):
    """Inputs that are views (reversed columns, a channel slice as the grouped op passes)."""
    rng = np.random.default_rng(6)
    geo = geometry(None, (1, 2), (1, 1), padding)
    base = rng.standard_normal((2, 9, 21, 6)).astype(np.float32)
    x = base[:, :, ::-1, 1:4]
    assert not x.flags.c_contiguous
    f = rng.standard_normal((3, 4, 3, 32)).astype(np.float32)
    y = conv2d.conv2d(x, f, geo)
    g = rng.standard_normal(y.shape).astype(np.float32)
    df = conv2d.conv2d_backprop_filter(x, f.shape, g, geo)
    x64 = np.ascontiguousarray(x, dtype=np.float64)
    np.testing.assert_allclose(y, ref_conv(x64, f.astype(np.float64), geo), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(df, ref_backprop_filter(x64, f.shape, g.astype(np.float64), geo),
                               rtol=1e-4, atol=1e-3)
