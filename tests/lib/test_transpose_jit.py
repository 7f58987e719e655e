"""The compiled transposing copy (lib/numerics/transpose_jit.py) against NumPy's
`ascontiguousarray(x.T)`: the same bits (NaN payloads, signed zeros, inf) on odd shapes, both
float types, empty and small matrices (NumPy's path), views, and through MatMul's swapped
product."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorflux.lib.numerics import jit, transpose_jit
from tensorflux.ops.math import matrix_product

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _specials(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    if flat.size:
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 40))
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=picks.size)
        bits = flat.view(np.uint32 if dtype == np.float32 else np.uint64)
        bits[picks[:1]] |= 1  # a NaN or a denormal-sized change keeps its own payload
    return x


def _same_bits(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    kind = np.uint32 if got.dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(got.view(kind), want.view(kind))


@SETTINGS
@given(st.integers(1, 600), st.integers(1, 300), st.sampled_from([np.float32, np.float64]),
       st.integers(0, 2 ** 31 - 1))
def test_transposed_copy_has_the_same_bits_as_numpy(rows, cols, dtype, seed):
    x = _specials(np.random.default_rng(seed), (rows, cols), dtype)
    _same_bits(transpose_jit.transposed_copy(x), np.ascontiguousarray(x.T))


@pytest.mark.parametrize("shape", [(1024, 128), (33, 1000), (4097, 9), (0, 5000), (5000, 0)])
def test_large_and_empty_shapes(shape):
    x = _specials(np.random.default_rng(1), shape, np.float32)
    _same_bits(transpose_jit.transposed_copy(x), np.ascontiguousarray(x.T))


def test_compiled_kernel_runs_for_large_float_matrices_only(monkeypatch):
    calls = []
    real = transpose_jit._transpose
    monkeypatch.setattr(transpose_jit, "_transpose", lambda *a: calls.append(a[0].shape) or
                        real(*a))
    x = np.arange(1024 * 128, dtype=np.float32).reshape(1024, 128)
    _same_bits(transpose_jit.transposed_copy(x), np.ascontiguousarray(x.T))
    transpose_jit.transposed_copy(x[:, :64])  # a view: NumPy
    transpose_jit.transposed_copy(x.astype(np.int32))  # another dtype: NumPy
    transpose_jit.transposed_copy(x[:8])  # small: NumPy
    assert calls == [(1024, 128)]
    monkeypatch.setenv("TFX_JIT", "0")
    _same_bits(transpose_jit.transposed_copy(x), np.ascontiguousarray(x.T))
    assert calls == [(1024, 128)]


def test_swapped_product_has_the_bits_of_the_numpy_transpose():
    rng = np.random.default_rng(2)
    g = _specials(rng, (128, 1024), np.float32)
    w = rng.standard_normal((1024, 1024)).astype(np.float32)
    with np.errstate(all="ignore"):
        want = np.ascontiguousarray((w @ g.T).T)
        got = matrix_product.product(g, w, transpose_b=True)
    _same_bits(got, want)
