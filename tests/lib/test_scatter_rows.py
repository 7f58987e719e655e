"""lib/numerics/scatter.py: `scatter_at` equals `ufunc.at` bit for bit (duplicate, distinct,
empty and scalar-update cases, NaN/inf/-0.0, int wrap-around), compiled and with TFX_JIT=0;
and the ScatterSub/ScatterAdd ops on word2vec-shaped updates (many duplicates) equal it too.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

import tensorflux as tf
from tensorflux.lib.numerics import jit, scatter

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
UFUNCS = [np.add, np.subtract, np.multiply, np.maximum, np.minimum]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.float16]


def _values(rng, shape, dtype, specials):
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        # Extremes too, so sums wrap around as NumPy's do.
        return rng.choice([info.min, info.max, -3, 0, 1, 7], size=shape).astype(dtype)
    return floats(rng, shape, dtype, specials, every=5)


@st.composite
def cases(draw):
    rows = draw(st.integers(1, 9))
    tail = draw(st.sampled_from([(), (1,), (3,), (2, 3), (0,)]))
    index_shape = draw(st.sampled_from([(0,), (1,), (3,), (7,), (17,), (2, 5), (4, 0)]))
    dtype = draw(st.sampled_from(DTYPES))
    ufunc = draw(st.sampled_from(UFUNCS))
    # Few rows and many indices: duplicates; many rows: often all distinct.
    return rows, tail, index_shape, dtype, ufunc, draw(st.booleans()), draw(st.integers(0, 2**31))


def _check(case):
    rows, tail, index_shape, dtype, ufunc, specials, seed = case
    rng = np.random.default_rng(seed)
    buffer = _values(rng, (rows,) + tail, dtype, specials)
    indices = rng.integers(0, rows, size=index_shape).astype(rng.choice([np.int32, np.int64]))
    updates = _values(rng, index_shape + tail, dtype, specials)
    expected = buffer.copy()
    with np.errstate(all="ignore"):
        ufunc.at(expected, indices, updates)
        scatter.scatter_at(ufunc, buffer, indices, updates)
    np.testing.assert_array_equal(buffer, expected)
    assert buffer.dtype == expected.dtype
    # -0.0 and +0.0 compare equal: the sign bits must match too.
    if buffer.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(buffer), np.signbit(expected))


@pytest.mark.jit_compile
@pytest.mark.skipif(not jit.available(), reason="numba is not available")
@SETTINGS
@given(cases())
def test_scatter_at_equals_ufunc_at_compiled(case):
    _check(case)


@SETTINGS
@given(case=cases())
def test_scatter_at_equals_ufunc_at_numpy_only(monkeypatch, case):
    monkeypatch.setenv("TFX_JIT", "0")
    _check(case)


def test_scalar_updates_and_mixed_dtypes_take_the_reference():
    buffer = np.arange(6, dtype=np.float32).reshape(3, 2)
    expected = buffer.copy()
    indices = np.array([0, 2, 0, 0, 1])
    np.subtract.at(expected, indices, 1.5)
    scatter.scatter_at(np.subtract, buffer, indices, np.float32(1.5))
    np.testing.assert_array_equal(buffer, expected)
    updates = np.linspace(0, 1, 10).reshape(5, 2)  # float64 into float32: NumPy's casting
    np.add.at(expected, indices, updates)
    scatter.scatter_at(np.add, buffer, indices, updates)
    np.testing.assert_array_equal(buffer, expected)


def test_duplicates_are_applied_in_index_order():
    # 1e8 - 1 - 1 ... rounds differently from 1e8 - (1 + 1 + ...): the order must be kept.
    buffer = np.full((2, 1), 1e8, np.float32)
    indices = np.zeros(16, np.int64)
    updates = np.full((16, 1), 3.0, np.float32)
    expected = buffer.copy()
    np.subtract.at(expected, indices, updates)
    scatter.scatter_at(np.subtract, buffer, indices, updates)
    np.testing.assert_array_equal(buffer, expected)
    assert expected[0, 0] != np.float32(1e8) - np.float32(48.0)


def _zipf_case(seed, vocab=500, size=8, count=96):
    rng = np.random.RandomState(seed)
    indices = np.minimum(rng.zipf(1.3, count) - 1, vocab - 1)
    return (rng.rand(vocab, size).astype(np.float32), indices,
            rng.rand(count, size).astype(np.float32))


@pytest.mark.parametrize("resource", [False, True])
@pytest.mark.parametrize("kind", ["scatter_sub", "scatter_add"])
def test_scatter_ops_on_zipf_indices_equal_ufunc_at(kind, resource):
    base, indices, updates = _zipf_case(3)
    assert len(np.unique(indices)) < len(indices)  # duplicates: the compiled path
    expected = base.copy()
    (np.subtract if kind == "scatter_sub" else np.add).at(expected, indices, updates)
    with tf.Graph().as_default():
        var = tf.Variable(base, use_resource=resource)
        update = getattr(var, kind)(tf.IndexedSlices(tf.constant(updates), tf.constant(indices)))
        with tf.Session() as sess:
            sess.run(var.initializer)
            sess.run(update)
            np.testing.assert_array_equal(sess.run(var), expected)


@pytest.mark.parametrize("bad", [[0, 3, -1, 3], [0, 1, 2, 500], [500, 1, 1, 1]])
def test_scatter_sub_rejects_indices_out_of_range(bad):
    base, _, _ = _zipf_case(0)
    with tf.Graph().as_default():
        var = tf.Variable(base)
        update = tf.scatter_sub(var, tf.constant(bad), tf.ones([4, 8]))
        with tf.Session() as sess:
            sess.run(var.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"is not in \[0, 500\)"):
                sess.run(update)
            np.testing.assert_array_equal(sess.run(var), base)  # nothing applied


def test_scatter_sub_with_no_indices_changes_nothing():
    base, _, _ = _zipf_case(1)
    with tf.Graph().as_default():
        var = tf.Variable(base)
        update = tf.scatter_sub(var, tf.zeros([0], tf.int64), tf.zeros([0, 8]))
        with tf.Session() as sess:
            sess.run(var.initializer)
            sess.run(update)
            np.testing.assert_array_equal(sess.run(var), base)


def _check_checked(case, bad_at):
    rows, tail, index_shape, dtype, ufunc, specials, seed = case
    rng = np.random.default_rng(seed)
    buffer = _values(rng, (rows,) + tail, dtype, specials)
    indices = rng.integers(0, rows, size=index_shape).astype(rng.choice([np.int32, np.int64]))
    updates = _values(rng, index_shape + tail, dtype, specials)
    expected = buffer.copy()
    if bad_at is not None and indices.size:
        position = bad_at % indices.size
        indices.reshape(-1)[position] = rows if bad_at % 2 else -1
        first = int(np.argmax((indices.reshape(-1) < 0) | (indices.reshape(-1) >= rows)))
        assert scatter.checked_scatter_at(ufunc, buffer, indices, updates) == first
        assert buffer.tobytes() == expected.tobytes()  # nothing written
        return
    with np.errstate(all="ignore"):
        ufunc.at(expected, indices, updates)
        assert scatter.checked_scatter_at(ufunc, buffer, indices, updates) == -1
    assert buffer.tobytes() == expected.tobytes()


@pytest.mark.parametrize("flag", ["1", "0"])
@SETTINGS
@given(case=cases(), bad_at=st.none() | st.integers(0, 40))
def test_checked_scatter_at_equals_check_then_ufunc_at(monkeypatch, flag, case, bad_at):
    if flag == "1" and not jit.available():
        pytest.skip("numba is not available")
    monkeypatch.setenv("TFX_JIT", flag)
    _check_checked(case, bad_at)
