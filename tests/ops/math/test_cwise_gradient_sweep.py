"""Gradient sweep of the binary cwise ops: every op over broadcast pairs of ranks 0-4, in
float16/float32/float64/complex64, first derivatives and gradients of gradients against central
finite differences (computed in float64 / complex128 on the same graph).

Pow's float16 product order and its complex conjugation have their own regression tests
(test_pow_gradient_float16_underflow_order, test_pow_gradient_complex_conjugation)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf

# name -> (function, complex supported, domain) ; domains keep away from kinks and poles.
OPS = {
    "AddV2": (tf.add, True, "any"),
    "Sub": (tf.subtract, True, "any"),
    "Mul": (tf.multiply, True, "any"),
    "RealDiv": (tf.realdiv, True, "positive_y"),
    "Pow": (tf.pow, True, "positive_x"),
    "Maximum": (tf.maximum, False, "distinct"),
    "Minimum": (tf.minimum, False, "distinct"),
    "SquaredDifference": (tf.squared_difference, True, "any"),
    "Atan2": (tf.atan2, False, "positive_y"),
    "DivNoNan": (tf.div_no_nan, False, "positive_y"),
    "Xdivy": (tf.math.xdivy, False, "positive_y"),
    "Xlogy": (tf.math.xlogy, False, "positive_y"),
    "FloorMod": (tf.floormod, False, "floormod"),
}
DTYPES = {"float16": (tf.float16, tf.float64), "float32": (tf.float32, tf.float64),
          "float64": (tf.float64, tf.float64),
          "complex64": (tf.complex64, tf.complex128)}


@st.composite
def broadcast_pair(draw):
    """Shapes of ranks 0-4 that broadcast together (dims 1 or 2, some 1s on either side)."""
    rx, ry = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    n = max(rx, ry)
    sx, sy = [], []
    for _ in range(n):
        d = draw(st.sampled_from([1, 2]))
        kind = draw(st.sampled_from(["same", "x1", "y1"]))
        sx.append(1 if kind == "x1" else d)
        sy.append(1 if kind == "y1" else d)
    return sx[n - rx:], sy[n - ry:]


def _values(rng, shape, domain, which, is_complex):
    real = rng.uniform(0.5, 1.5, shape)
    if domain == "any" or (domain == "positive_y" and which == "x") or \
            (domain == "positive_x" and which == "y"):
        real = real * rng.choice([-1.0, 1.0], shape)
    if domain == "distinct":
        real = real + (0.0 if which == "x" else 3.0) * rng.choice([-1.0, 1.0], shape)
    if domain == "floormod":
        real = rng.uniform(0.1, 0.9, shape) + (2.0 if which == "x" else 1.5)
    if is_complex:
        return real + 1j * rng.uniform(0.5, 1.5, shape)
    return real


def _numeric(sess, loss, x, xv, feed, eps):
    out = np.zeros(xv.shape, dtype=xv.dtype)
    flat_out = out.reshape(-1)
    steps = [eps, 1j * eps] if np.iscomplexobj(xv) else [eps]
    for i in range(xv.size):
        for step in steps:
            up, down = xv.copy().reshape(-1), xv.copy().reshape(-1)
            up[i] += step
            down[i] -= step
            diff = sess.run(loss, {**feed, x: up.reshape(xv.shape)}) - \
                sess.run(loss, {**feed, x: down.reshape(xv.shape)})
            flat_out[i] += diff / (2 * eps) * (1 if step == eps else 1j)
    return out


def _check(op_name, dtype_name, shapes, seed, second_order):
    fn, _, domain = OPS[op_name]
    dtype, wide = DTYPES[dtype_name]
    is_complex = dtype.is_complex
    rng = np.random.RandomState(seed)
    xv = _values(rng, shapes[0], domain, "x", is_complex)
    yv = _values(rng, shapes[1], domain, "y", is_complex)
    if dtype == tf.float16:  # both sides see the same (float16-representable) inputs
        xv, yv = xv.astype(np.float16).astype(np.float64), yv.astype(np.float16).astype(np.float64)
    out_shape = np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1]))
    wv = rng.uniform(0.5, 1.5, out_shape)
    vv, uv = rng.uniform(0.5, 1.5, shapes[0]), rng.uniform(0.5, 1.5, shapes[1])
    results = {}
    for role, dt in (("analytic", dtype), ("numeric", wide)):
        with tf.Graph().as_default():
            x = tf.placeholder(dt, shapes[0])
            y = tf.placeholder(dt, shapes[1])
            z = fn(x, y)
            w = tf.cast(tf.constant(wv), dt)
            loss = tf.real(tf.reduce_sum(z * w)) if is_complex else tf.reduce_sum(z * w)
            gx, gy = tf.gradients(loss, [x, y])
            target = loss
            if second_order:
                v = tf.cast(tf.constant(vv), dt)
                u = tf.cast(tf.constant(uv), dt)
                inner = tf.reduce_sum(gx * v) + tf.reduce_sum(gy * u)
                target = tf.real(inner) if is_complex else inner
                gx, gy = tf.gradients(target, [x, y])
            np_dt = dt.as_numpy_dtype
            feed = {x: xv.astype(np_dt), y: yv.astype(np_dt)}
            with tf.Session() as sess:
                if role == "numeric":
                    results["numeric"] = [
                        _numeric(sess, target, t, feed[t], feed, 1e-6) for t in (x, y)]
                else:
                    got = sess.run([g for g in (gx, gy) if g is not None], feed)
                    results["analytic"] = [None if g is None else got.pop(0)
                                           for g in (gx, gy)]
    tol = dict(rtol=2e-3, atol=2e-3) if dtype in (tf.float32, tf.complex64) else \
        dict(rtol=3e-2, atol=3e-2) if dtype == tf.float16 else dict(rtol=1e-5, atol=1e-6)
    for analytic, numeric in zip(results["analytic"], results["numeric"]):
        if analytic is None:
            np.testing.assert_allclose(numeric, 0, atol=1e-6)
        else:
            np.testing.assert_allclose(analytic, numeric, **tol,
                                       err_msg=f"{op_name} {dtype_name} {shapes}")


# Pow in complex64 is checked by test_pow_gradient_complex_conjugation.
CASES = [(op, dt) for op, (_, cplx, _) in OPS.items() for dt in DTYPES
         if (cplx or dt != "complex64") and (op, dt) != ("Pow", "complex64")]


@pytest.mark.parametrize("op_name,dtype_name", CASES)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_first_derivatives(op_name, dtype_name, shapes, seed):
    _check(op_name, dtype_name, shapes, seed, second_order=False)


@pytest.mark.parametrize("op_name,dtype_name", [(op, "float64") for op in OPS])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_gradients_of_gradients(op_name, dtype_name, shapes, seed):
    _check(op_name, dtype_name, shapes, seed, second_order=True)


def test_pow_gradient_float16_underflow_order():
    with tf.Graph().as_default():
        x = tf.constant(np.array([60000.0], np.float16))
        y = tf.constant(np.array([1.0], np.float16))
        z = tf.pow(x, y)
        gx, gy = tf.gradients(z, [x, y], grad_ys=tf.constant(np.zeros(1, np.float16)))
        with tf.Session() as sess:
            vx, vy = sess.run([gx, gy])
    # TF: (0 * 60000) * log(60000) = 0 and (0 * 1) * 60000 ** 0 = 0.
    np.testing.assert_array_equal(vx, [0.0])
    np.testing.assert_array_equal(vy, [0.0])


def test_pow_gradient_complex_conjugation():
    _check("Pow", "complex64", ([], [2]), 3, second_order=False)
