"""The compiled Select (lib/numerics/select_jit.py) against np.where, the NumPy reference:
bit-identical for every fixed-width dtype on odd shapes (empty dims, views, NaN payloads, -0.0),
and the op's choice of kernel (TFX_JIT=0 takes the NumPy path, same values)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tensorflux.lib.numerics import jit, select_jit
from tensorflux.ops.math import select as select_ops

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]

_DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.int8, np.int64, np.uint16,
           np.bool_]


@st.composite
def select_cases(draw):
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7))
    raw = draw(hnp.arrays(np.uint8, shape + (2, dtype.itemsize)))
    pair = raw[..., 0] % 2 == 1 if dtype == np.bool_ else raw.view(dtype).reshape(shape + (2,))
    t, e = pair[..., 0], pair[..., 1]  # strided views
    if draw(st.booleans()):
        t, e = t.copy(), e.copy()
    return draw(hnp.arrays(np.bool_, shape)), t, e


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(select_cases())
def test_select_is_bit_identical_to_where(case):
    condition, t, e = case
    assert select_jit.supports(condition, t, e)
    got = select_jit.select(condition, t, e)
    want = np.where(condition, t, e)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def test_special_floats_copied_bit_for_bit():
    payload = np.array([0x7FC00001, 0xFFC12345], np.uint32).view(np.float32)
    t = np.array([payload[0], -0.0, np.inf, 1.5, payload[1]], np.float32)
    e = np.array([0.0, payload[1], -np.inf, -0.0, 2.5], np.float32)
    condition = np.array([True, False, True, False, True])
    got = select_jit.select(condition, t, e)
    np.testing.assert_array_equal(got.view(np.uint32),
                                  np.where(condition, t, e).view(np.uint32))


def test_unsupported_operands_are_refused():
    c = np.ones(3, bool)
    assert not select_jit.supports(c, np.ones(3), np.ones(3, np.float32))  # dtypes differ
    assert not select_jit.supports(c, np.ones(4), np.ones(4))  # shapes differ
    assert not select_jit.supports(c.astype(np.int8), np.ones(3), np.ones(3))
    assert not select_jit.supports(c, np.ones(3, np.complex128), np.ones(3, np.complex128))
    assert not select_jit.supports(c, np.array([1, None, 2]), np.array([1, 2, None]))


@pytest.mark.parametrize("flag", ["1", "0"])
def test_select_kernel_both_paths_equal_where(monkeypatch, flag):
    monkeypatch.setenv("TFX_JIT", flag)
    rng = np.random.default_rng(3)
    t = rng.standard_normal((130, 65)).astype(np.float32)
    e = np.zeros_like(t)
    e[::3] = -0.0
    t[5, 7] = np.nan
    condition = t >= 0
    for kernel in (select_ops._select_kernel, select_ops._select_v2_kernel):
        got = kernel(condition, t, e)
        np.testing.assert_array_equal(got.view(np.uint32),
                                      np.where(condition, t, e).view(np.uint32))
