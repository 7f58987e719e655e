"""MaxPool3D, AvgPool3D and their gradient ops; tf.nn.max_pool3d / avg_pool3d."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case as _case
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.ops.nn import pool3d as pool3d_ops

COVERED_OPS = {"MaxPool3D", "MaxPool3DGrad", "MaxPool3DGradGrad", "AvgPool3D", "AvgPool3DGrad"}


def _geometry(size, k, s, padding):
    if padding == "SAME":
        out = -(-size // s)
        need = max(0, (out - 1) * s + k - size)
        return out, need // 2
    return (size - k) // s + 1, 0


def _windows(x, ksize, strides, padding):
    """Yields (output position, window slices into x) for an NDHWC input."""
    geo = [_geometry(x.shape[i + 1], ksize[i], strides[i], padding) for i in range(3)]
    for pos in itertools.product(*(range(o) for o, _ in geo)):
        sl = []
        for i, (p, (_, before)) in enumerate(zip(pos, geo)):
            start = p * strides[i] - before
            sl.append(slice(max(start, 0), min(start + ksize[i], x.shape[i + 1])))
        yield pos, (slice(None), *sl, slice(None))


def pool_ref(x, ksize, strides, padding, kind):
    geo = [_geometry(x.shape[i + 1], ksize[i], strides[i], padding)[0] for i in range(3)]
    out = np.zeros((x.shape[0], *geo, x.shape[4]), dtype=x.dtype)
    for pos, sl in _windows(x, ksize, strides, padding):
        reduce = np.max if kind == "max" else np.mean
        out[(slice(None), *pos)] = reduce(x[sl], axis=(1, 2, 3))
    return out


def max_grad_ref(x, g, ksize, strides, padding):
    """TF's MaxPool3DGrad: each window's gradient goes to every input equal to its max."""
    dx = np.zeros_like(x)
    for pos, sl in _windows(x, ksize, strides, padding):
        win = x[sl]
        hit = win == win.max(axis=(1, 2, 3), keepdims=True)
        dx[sl] += hit * g[(slice(None), *pos)][:, None, None, None, :]
    return dx


def avg_grad_ref(shape, g, ksize, strides, padding):
    dx = np.zeros(shape)
    for pos, sl in _windows(dx, ksize, strides, padding):
        count = np.prod([s.stop - s.start for s in sl[1:4]])
        dx[sl] += g[(slice(None), *pos)][:, None, None, None, :] / count
    return dx


X = np.random.RandomState(0).randn(2, 5, 4, 6, 3).astype(np.float32)
CASES = [((2, 2, 2), (2, 2, 2), "VALID"), ((2, 3, 2), (1, 2, 1), "SAME"),
         ((3, 1, 2), (2, 1, 3), "SAME"), ((1, 1, 1), (1, 1, 1), "VALID")]


@pytest.mark.parametrize("ksize,strides,padding", CASES)
def test_max_pool3d(ksize, strides, padding):
    x = tf.constant(X)
    y = tf.nn.max_pool3d(x, [1, *ksize, 1], [1, *strides, 1], padding)
    expected = pool_ref(X, ksize, strides, padding, "max")
    g = np.random.RandomState(1).randn(*expected.shape).astype(np.float32)
    dx = tf.gradients(y, x, g)[0]
    value, dx_v = run([y, dx])
    assert y.shape.as_list() == list(expected.shape) and value.dtype == np.float32
    np.testing.assert_array_equal(value, expected)
    np.testing.assert_allclose(dx_v, max_grad_ref(X, g, ksize, strides, padding), rtol=1e-6,
                               atol=1e-6)


@pytest.mark.parametrize("ksize,strides,padding", CASES)
def test_avg_pool3d(ksize, strides, padding):
    x = tf.constant(X)
    y = tf.nn.avg_pool3d(x, ksize, strides, padding)
    expected = pool_ref(X, ksize, strides, padding, "avg")
    g = np.random.RandomState(2).randn(*expected.shape).astype(np.float32)
    dx = tf.gradients(y, x, g)[0]
    value, dx_v = run([y, dx])
    assert y.shape.as_list() == list(expected.shape) and value.dtype == np.float32
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx_v, avg_grad_ref(X.shape, g, ksize, strides, padding),
                               rtol=1e-5, atol=1e-6)


def test_ties_and_grad_grad():
    x = np.ones((1, 2, 2, 2, 1), np.float32)
    y = tf.nn.max_pool3d(x, 2, 2, "VALID")
    dx = pool3d_ops.MaxPool3DGrad(x, y, np.full((1, 1, 1, 1, 1), 3.0, np.float32),
                                  ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1],
                                  padding="VALID")
    gg = pool3d_ops.MaxPool3DGradGrad(x, y, np.arange(1, 9, dtype=np.float32).reshape(x.shape),
                                      ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1],
                                      padding="VALID")
    dx_v, gg_v = run([dx, gg])
    np.testing.assert_array_equal(dx_v, np.full(x.shape, 3.0))  # every tied maximum
    np.testing.assert_array_equal(gg_v, [[[[[1.0]]]]])  # the first maximum
    assert gg.shape.as_list() == [1, 1, 1, 1, 1]


def test_ncdhw_and_float64():
    xc = np.moveaxis(X, -1, 1).astype(np.float64)
    y = tf.nn.max_pool3d(xc, [1, 1, 2, 2, 2], [1, 1, 2, 2, 2], "SAME", data_format="NCDHW")
    a = tf.nn.avg_pool3d(xc, 2, 1, "SAME", data_format="NCDHW")
    y_v, a_v = run([y, a])
    assert y.shape.as_list() == [2, 3, 3, 2, 3] and y_v.dtype == np.float64
    np.testing.assert_array_equal(
        y_v, np.moveaxis(pool_ref(X, (2, 2, 2), (2, 2, 2), "SAME", "max"), -1, 1))
    np.testing.assert_allclose(
        a_v, np.moveaxis(pool_ref(X.astype(np.float64), (2, 2, 2), (1, 1, 1), "SAME", "avg"),
                         -1, 1), rtol=1e-12)


def test_avg_pool3d_grad_op_shape():
    g = np.ones((2, 2, 2, 3, 3), np.float32)
    dx = pool3d_ops.AvgPool3DGrad([2, 5, 4, 6, 3], g, ksize=[1, 2, 2, 2, 1],
                                  strides=[1, 2, 2, 2, 1], padding="VALID")
    assert dx.shape.as_list() == [2, 5, 4, 6, 3]
    np.testing.assert_allclose(run(dx), avg_grad_ref(X.shape, g, (2, 2, 2), (2, 2, 2),
                                                      "VALID"))


def test_errors():
    with pytest.raises(ValueError, match="ksize"):
        tf.nn.max_pool3d(X, [2, 2, 2, 2, 1], 1, "SAME")
    with pytest.raises(ValueError, match="ksize"):
        tf.nn.avg_pool3d(X, [2, 2, 2, 2], 1, "SAME")
    with pytest.raises(ValueError, match="Negative dimension"):
        tf.nn.max_pool3d(X, [6, 1, 1], 1, "VALID")
    with pytest.raises(ValueError, match="rank"):
        tf.nn.max_pool3d(X[0], 1, 1, "VALID")
    with pytest.raises(TypeError):
        tf.nn.max_pool3d(X.astype(np.int32), 1, 1, "VALID")


@settings(max_examples=12, deadline=None)
@given(d=st.integers(2, 5), h=st.integers(2, 5), k=st.integers(1, 2), s=st.integers(1, 3),
       padding=st.sampled_from(["SAME", "VALID"]), kind=st.sampled_from(["max", "avg"]))
def test_pool3d_hypothesis(d, h, k, s, padding, kind):
    x = np.random.RandomState(d * 7 + h).randn(1, d, h, 3, 2)
    with tf.Graph().as_default():
        fn = tf.nn.max_pool3d if kind == "max" else tf.nn.avg_pool3d
        y = fn(x, [k, 2, k], [s, 1, s], padding)
        np.testing.assert_allclose(run(y), pool_ref(x, (k, 2, k), (s, 1, s), padding, kind),
                                   rtol=1e-12)


_K = dict(ksize=[1, 2, 2, 1, 1], strides=[1, 1, 2, 1, 1], padding="SAME")
_XC = np.random.RandomState(5).permutation(18).reshape(1, 3, 3, 2, 1) / 7.0


def _grad_of(tf, gg, op):
    x = tf.constant(_XC)
    y = tf.nn.max_pool3d(x, _K["ksize"], _K["strides"], "SAME")
    return op(x, y, gg, **_K)


GRADIENT_CASES = [
    ("MaxPool3D", _case(lambda tf, x: tf.nn.max_pool3d(x, [2, 2, 1], [1, 2, 1], "SAME"),
                        [1, 3, 3, 2, 2])),
    ("AvgPool3D", _case(lambda tf, x: tf.nn.avg_pool3d(x, [2, 2, 1], [1, 2, 1], "SAME"),
                        [1, 3, 3, 2, 2])),
    ("MaxPool3DGrad", _case(lambda tf, g: _grad_of(tf, g, pool3d_ops.MaxPool3DGrad),
                            [1, 3, 2, 2, 1])),
    ("MaxPool3DGradGrad", _case(lambda tf, g: _grad_of(tf, g, pool3d_ops.MaxPool3DGradGrad),
                                [1, 3, 3, 2, 1])),
    ("AvgPool3DGrad", _case(lambda tf, g: pool3d_ops.AvgPool3DGrad([1, 3, 3, 2, 1], g, **_K),
                            [1, 3, 2, 2, 1])),
]
