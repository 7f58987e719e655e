"""Gradient sweep of the unary cwise ops (math/unary.py, nn/activations.py and the Bessel ops of
math/special.py): first derivatives and gradients of gradients against central finite
differences (computed in float64 / complex128 on the same graph), over shapes of rank 0-3, in
float32/float64 and complex64/complex128 where the op takes complex inputs; plus a float16 smoke
check against the float64 analytic gradient. Inputs are drawn from each op's domain, away from
kinks (Abs, Sign, Relu at 0; Relu6 at 6) and poles. A coverage test keeps the table complete."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework.op_def import GRADIENTS, OpDef
from tensorflux.ops.math import special as special_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import activations

# op name -> (function, kinds of input it takes, domain).
# kinds: "real" (float16/32/64), "complex" (complex64/128), "both".
OPS = {
    "Neg": (tf.negative, "both", "any"),
    "Abs": (tf.abs, "real", "any"),
    "ComplexAbs": (tf.abs, "complex", "any"),
    "Sign": (tf.sign, "real", "any"),  # complex: TF defines the gradient as 0, see below
    "Square": (tf.square, "both", "any"),
    "Sqrt": (tf.sqrt, "both", "positive"),
    "Rsqrt": (tf.rsqrt, "both", "positive"),
    "Reciprocal": (tf.reciprocal, "both", "any"),
    "Inv": (unary_ops.Inv, "both", "any"),
    "Exp": (tf.exp, "both", "any"),
    "Expm1": (tf.expm1, "both", "any"),
    "Log": (tf.log, "both", "positive"),
    "Log1p": (tf.log1p, "both", "positive"),
    "Sin": (tf.sin, "both", "any"),
    "Cos": (tf.cos, "both", "any"),
    "Tan": (tf.tan, "both", "small"),
    "Asin": (tf.asin, "both", "unit"),
    "Acos": (tf.acos, "both", "unit"),
    "Atan": (tf.atan, "both", "any"),
    "Sinh": (tf.sinh, "both", "any"),
    "Cosh": (tf.cosh, "both", "any"),
    "Tanh": (tf.tanh, "both", "any"),
    "Asinh": (tf.asinh, "both", "any"),
    "Acosh": (tf.acosh, "both", "above_one"),
    "Atanh": (tf.atanh, "both", "unit"),
    "Sigmoid": (tf.sigmoid, "both", "any"),
    "Erf": (tf.erf, "real", "any"),
    "Erfc": (tf.erfc, "real", "any"),
    "Lgamma": (tf.lgamma, "real", "positive"),
    "Digamma": (tf.digamma, "real", "positive"),
    "Conj": (tf.conj, "complex", "any"),
    "Real": (tf.real, "complex", "any"),
    "Imag": (tf.imag, "complex", "any"),
    "Angle": (tf.angle, "complex", "any"),
    "Relu": (tf.nn.relu, "real", "any"),
    "Relu6": (tf.nn.relu6, "real", "relu6"),
    "Elu": (tf.nn.elu, "real", "any"),
    "Selu": (tf.nn.selu, "real", "any"),
    "LeakyRelu": (lambda x: tf.nn.leaky_relu(x, alpha=0.3), "real", "any"),
    "Softplus": (tf.nn.softplus, "real", "any"),
    "Softsign": (tf.nn.softsign, "real", "any"),
    "BesselI0": (tf.math.bessel_i0, "real", "any"),
    "BesselI0e": (tf.math.bessel_i0e, "real", "any"),
    "BesselI1": (tf.math.bessel_i1, "real", "any"),
    "BesselI1e": (tf.math.bessel_i1e, "real", "any"),
}
# dtype name -> (dtype under test, dtype of the finite differences)
DTYPES = {"float32": (tf.float32, tf.float64), "float64": (tf.float64, tf.float64),
          "complex64": (tf.complex64, tf.complex128),
          "complex128": (tf.complex128, tf.complex128)}
SHAPES = [(), (3,), (2, 2), (2, 1, 2)]


def _values(rng, shape, domain, is_complex):
    signs = rng.choice([-1.0, 1.0], shape)
    ranges = {"any": (0.5, 1.5, True), "positive": (0.5, 1.5, False),
              "small": (0.2, 1.0, True), "unit": (0.1, 0.8, True),
              "above_one": (1.5, 2.5, False), "relu6": (0.5, 5.0, True)}
    low, high, signed = ranges[domain]
    real = rng.uniform(low, high, shape) * (signs if signed else 1.0)
    if is_complex:
        # Off the real axis, so away from the branch cuts of sqrt/log/asin/acosh/atanh.
        return real + 1j * rng.uniform(0.3, 0.8, shape) * signs
    return np.asarray(real)


def _numeric(sess, target, x, xv, eps=1e-6):
    out = np.zeros(xv.shape, dtype=xv.dtype)
    flat = out.reshape(-1)
    steps = [eps, 1j * eps] if np.iscomplexobj(xv) else [eps]
    for i in range(xv.size):
        for step in steps:
            up, down = xv.copy().reshape(-1), xv.copy().reshape(-1)
            up[i] += step
            down[i] -= step
            diff = sess.run(target, {x: up.reshape(xv.shape)}) - \
                sess.run(target, {x: down.reshape(xv.shape)})
            flat[i] += diff / (2 * eps) * (1 if step == eps else 1j)
    return out


def _real_sum(t):
    return tf.reduce_sum(tf.real(t)) if t.dtype.is_complex else tf.reduce_sum(t)


def _build(op_name, dt, shape, wv, vv, second_order):
    """Graph of target = sum(w * f(x)) (or, second order, sum(v * d target / dx)); returns
    (x, target, d target / dx)."""
    fn = OPS[op_name][0]
    x = tf.placeholder(dt, shape)
    z = fn(x)
    if second_order and z.dtype == x.dtype:
        # An incoming gradient that depends on x (and is complex for complex x) reaches the
        # second input of the fused gradient ops (SqrtGrad, TanhGrad, ...).
        z = z * x
    target = _real_sum(z * tf.cast(tf.constant(wv), z.dtype))
    (gx,) = tf.gradients(target, [x])
    if second_order:
        target = _real_sum(gx * tf.cast(tf.constant(vv), dt))
        (gx,) = tf.gradients(target, [x])
    if gx is None:  # the first gradient does not depend on x (Neg, Conj, Real, ...)
        gx = tf.zeros_like(x)
    return x, target, gx


def _check(op_name, dtype_name, shape, seed, second_order):
    dtype, wide = DTYPES[dtype_name]
    rng = np.random.RandomState(seed)
    xv = _values(rng, shape, OPS[op_name][2], dtype.is_complex)
    wv, vv = rng.uniform(0.5, 1.5, shape), rng.uniform(0.5, 1.5, shape)
    with tf.Graph().as_default():
        x, _, gx = _build(op_name, dtype, shape, wv, vv, second_order)
        with tf.Session() as sess:
            analytic = sess.run(gx, {x: xv.astype(dtype.as_numpy_dtype)})
    with tf.Graph().as_default():
        x, target, _ = _build(op_name, wide, shape, wv, vv, second_order)
        with tf.Session() as sess:
            numeric = _numeric(sess, target, x, xv.astype(wide.as_numpy_dtype))
    tol = dict(rtol=2e-3, atol=2e-3) if dtype in (tf.float32, tf.complex64) else \
        dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(analytic, numeric, **tol,
                               err_msg=f"{op_name} {dtype_name} {shape} order "
                                       f"{2 if second_order else 1}")


def _dtypes_of(kind):
    return {"real": ["float32", "float64"], "complex": ["complex64", "complex128"],
            "both": ["float32", "float64", "complex64", "complex128"]}[kind]


# Every shape (ranks 0-3) in the wide dtypes, two of them (alternating) in the narrow ones.
FIRST = [(op, dt, shape) for op, (_, kind, _) in OPS.items()
         for i, dt in enumerate(_dtypes_of(kind)) for j, shape in enumerate(SHAPES)
         if dt in ("float64", "complex128") or (i + j) % 2 == 0]
# Second order in the wide dtypes (float64, complex128), whose finite differences are tight,
# over two shapes each.
SECOND = [(op, dt, SHAPES[(i + j) % len(SHAPES)])
          for op, (_, kind, _) in OPS.items()
          for i, dt in enumerate(_dtypes_of(kind)) if dt in ("float64", "complex128")
          for j in (0, 2)]


@pytest.mark.parametrize("op_name,dtype_name,shape", FIRST)
def test_first_derivatives(op_name, dtype_name, shape):
    _check(op_name, dtype_name, shape, seed=sum(map(ord, op_name + dtype_name)), second_order=False)


@pytest.mark.parametrize("op_name,dtype_name,shape", SECOND)
def test_gradients_of_gradients(op_name, dtype_name, shape):
    _check(op_name, dtype_name, shape, seed=7 + len(op_name), second_order=True)


def _takes_float16(op_name):
    # Digamma's gradient is Polygamma, which (as in TF) has no float16 kernel: see
    # test_digamma_float16_gradient_needs_polygamma.
    return OPS[op_name][1] != "complex" and op_name != "Digamma"


@pytest.mark.parametrize("op_name", [op for op in OPS if _takes_float16(op)])
def test_float16_gradients_match_float64(op_name):
    """float16 gradients are finite and agree with float64's to float16 precision (products
    ordered so that moderate inputs neither overflow nor lose the incoming gradient)."""
    rng = np.random.RandomState(11)
    shape = (2, 3)
    xv = _values(rng, shape, OPS[op_name][2], False)
    wv = rng.uniform(0.5, 1.5, shape)
    grads = {}
    for dt in (tf.float16, tf.float64):
        with tf.Graph().as_default():
            x, _, gx = _build(op_name, dt, shape, wv, wv, second_order=False)
            with tf.Session() as sess:
                grads[dt] = sess.run(gx, {x: xv.astype(dt.as_numpy_dtype)})
    assert grads[tf.float16].dtype == np.float16
    np.testing.assert_allclose(grads[tf.float16].astype(np.float64), grads[tf.float64],
                               rtol=2e-2, atol=2e-2, err_msg=op_name)


def test_sweep_covers_every_differentiable_unary_op():
    defined = {v.name for m in (unary_ops, activations, special_ops) for v in vars(m).values()
               if isinstance(v, OpDef) and len(v.inputs) == 1 and v.name in GRADIENTS}
    assert defined - set(OPS) == set()


def test_digamma_float16_gradient_needs_polygamma():
    """TF's Polygamma takes float32/float64 only, so Digamma has no float16 gradient."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float16, [2])
        with pytest.raises(TypeError, match="Polygamma"):
            tf.gradients(tf.digamma(x), [x])


def test_complex_sign_gradient_is_zero_as_in_tf():
    """TF defines Sign's gradient as 0 for every dtype (x/|x| is not constant for complex x,
    but TF's rule is kept)."""
    with tf.Graph().as_default():
        x = tf.constant(np.array([1 + 2j, -0.5 + 0.1j], np.complex64))
        (gx,) = tf.gradients(tf.real(tf.reduce_sum(tf.sign(x))), [x])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(gx), np.zeros(2, np.complex64))


def test_rsqrt_gradient_float16_product_order():
    """x = 1e-4: y = rsqrt(x) = 100, y**3 = 1e6 overflows float16; the gradient
    -0.5 * dy * y**3 = -500 (dy = 1e-3) does not, and is computed as -0.5 * (dy * y) * (y * y)."""
    with tf.Graph().as_default():
        x = tf.constant(np.array([1e-4, 0.25], np.float16))
        dy = tf.constant(np.array([1e-3, 1.0], np.float16))
        (gx,) = tf.gradients(tf.rsqrt(x), [x], grad_ys=dy)
        with tf.Session() as sess:
            got = sess.run(gx)
    xv = np.array([1e-4, 0.25], np.float16).astype(np.float64)
    want = -0.5 * np.array([1e-3, 1.0]) * xv ** -1.5
    assert got.dtype == np.float16 and np.all(np.isfinite(got))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-2)
