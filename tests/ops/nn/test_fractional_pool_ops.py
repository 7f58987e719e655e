"""FractionalMaxPool, FractionalAvgPool and their gradient ops."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.nn import fractional_pool as fp

COVERED_OPS = {"FractionalMaxPool", "FractionalAvgPool", "FractionalMaxPoolGrad",
               "FractionalAvgPoolGrad"}


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def _windows(seq, size, overlapping):
    return [(seq[i], min(seq[i + 1] + (1 if overlapping else 0), size))
            for i in range(len(seq) - 1)]


def _reference(x, rows, cols, overlapping, reduce):
    out = np.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]))
    for i, (r0, r1) in enumerate(_windows(rows, x.shape[1], overlapping)):
        for j, (c0, c1) in enumerate(_windows(cols, x.shape[2], overlapping)):
            out[:, i, j, :] = reduce(x[:, r0:r1, c0:c1, :], axis=(1, 2))
    return out


def _check_sequence(seq, n, m):
    assert seq[0] == 0 and seq[-1] == n and len(seq) == m + 1
    assert set(np.diff(seq)) <= {n // m, n // m + 1}


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 12), st.integers(2, 12), st.floats(1.0, 2.5), st.floats(1.0, 2.5),
       st.booleans(), st.booleans(), st.integers(1, 2**31 - 1))
def test_pooling_matches_reference_for_its_sequences(h, w, ratio_h, ratio_w, pseudo,
                                                     overlapping, seed):
    if int(h / ratio_h) < 1 or int(w / ratio_w) < 1:
        return
    x = np.random.RandomState(seed % 1000).randn(2, h, w, 3)
    with tf.Graph().as_default():
        outs = [fn(x, [1.0, ratio_h, ratio_w, 1.0], pseudo_random=pseudo,
                   overlapping=overlapping, deterministic=True, seed=seed, seed2=1)
                for fn in (tf.nn.fractional_max_pool, tf.nn.fractional_avg_pool)]
        (mx, rows, cols), (av, rows2, cols2) = _run(outs)
    m_h, m_w = int(np.floor(h / ratio_h)), int(np.floor(w / ratio_w))
    _check_sequence(rows, h, m_h)
    _check_sequence(cols, w, m_w)
    np.testing.assert_array_equal(rows, rows2)  # same seeds, same draws
    np.testing.assert_array_equal(mx, _reference(x, rows, cols, overlapping, np.max))
    np.testing.assert_allclose(av, _reference(x, rows, cols, overlapping, np.mean), rtol=1e-12)


def test_dtypes_shapes_and_determinism():
    x = tf.placeholder(tf.float32, [None, 10, 7, 2])
    out, rows, cols = tf.nn.fractional_max_pool(x, [1, 1.6, 1.5, 1])
    assert out.shape.as_list() == [None, 6, 4, 2]
    assert rows.shape.as_list() == [7] and cols.shape.as_list() == [5]
    assert rows.dtype == tf.int64 and out.dtype == tf.float32
    value = np.arange(140, dtype=np.float32).reshape(1, 10, 7, 2)
    det = tf.nn.fractional_avg_pool(value, [1, 1.6, 1.5, 1], deterministic=True, seed=3,
                                    seed2=4)
    with tf.Session() as sess:
        first, second = sess.run(det), sess.run(det)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    ints = tf.nn.fractional_avg_pool(np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1),
                                     [1, 2, 2, 1])
    out, rows, cols = _run(ints)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(rows, [0, 2, 4])
    np.testing.assert_array_equal(out[0, :, :, 0], [[2, 4], [10, 12]])  # truncated means


def test_random_sequences_vary_between_runs():
    x = np.random.RandomState(0).randn(1, 40, 40, 1)
    out = tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1])
    with tf.Session() as sess:
        seqs = {tuple(sess.run(out[1])) for _ in range(6)}
    assert len(seqs) > 1


def test_grad_ops_match_tensorflow_with_ties():
    """TF: cos-weighted checksums of the grad ops for fixed sequences (ties in the input)."""
    rng = np.random.RandomState(0)
    x = np.round(rng.randn(2, 10, 7, 3), 1)
    rows = np.array([0, 1, 3, 4, 6, 8, 10], np.int64)
    cols = np.array([0, 2, 4, 6, 7], np.int64)
    g = rng.randn(2, 6, 4, 3)
    fetches = []
    for overlapping in (False, True):
        fetches.append(fp.FractionalMaxPoolGrad(x, np.zeros((2, 6, 4, 3)), g, rows, cols,
                                                overlapping=overlapping))
        fetches.append(fp.FractionalAvgPoolGrad(np.array([2, 10, 7, 3], np.int64), g, rows,
                                                cols, overlapping=overlapping))
    values = _run(fetches)
    assert fetches[1].shape.as_list() == [2, 10, 7, 3]
    sums = [np.sum(v * np.cos(np.arange(v.size)).reshape(v.shape)) for v in values]
    np.testing.assert_allclose(sums, [-2.03115655, -2.57982442, -2.91237945, 1.21364928],
                               atol=1e-7)


def test_errors():
    x = np.zeros((1, 4, 4, 1))
    with pytest.raises(ValueError, match="batch nor channel"):
        tf.nn.fractional_max_pool(x, [2, 1.5, 1.5, 1])
    with pytest.raises(ValueError, match="higher than the input"):
        tf.nn.fractional_max_pool(x, [1, 5, 1.5, 1])
    with pytest.raises(errors.InvalidArgumentError, match="seed2 should be 0"):
        _run(tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1], seed=1)[0])
    with pytest.raises(errors.InvalidArgumentError, match="pooling_sequence"):
        _run(fp.FractionalMaxPoolGrad(x, x, np.zeros((1, 2, 2, 1)), np.int64([0, 3, 2]),
                                      np.int64([0, 2, 4])))


def _case(fn, overlapping, pseudo):
    def build(tf):
        x = tf.placeholder(tf.float64, [2, 7, 6, 2])
        out = fn(x, [1.0, 1.4, 1.7, 1.0], pseudo_random=pseudo, overlapping=overlapping,
                 deterministic=True, seed=5, seed2=7)[0]
        return out, [x], [np.random.RandomState(0).randn(2, 7, 6, 2)]

    return build


GRADIENT_CASES = [
    ("FractionalMaxPool", _case(tf.nn.fractional_max_pool, False, False)),
    ("FractionalMaxPool", _case(tf.nn.fractional_max_pool, True, True)),
    ("FractionalAvgPool", _case(tf.nn.fractional_avg_pool, False, True)),
    ("FractionalAvgPool", _case(tf.nn.fractional_avg_pool, True, False)),
]
