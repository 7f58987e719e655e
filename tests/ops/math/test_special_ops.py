"""Special functions: igamma/igammac, betainc, zeta, polygamma, Bessel I0/I1, xlog1py, erfcinv,
nextafter.

Reference literals were computed once with TensorFlow 2.21 (tf.compat.v1) on the same inputs;
SciPy, when importable, is an extra reference over wider ranges.
"""

import collections

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.lib.numerics import special_functions
from tensorflux.ops.math.special import IgammaGradA

try:
    import scipy.special as sp
except ImportError:  # SciPy is optional: only the wide-range comparisons need it
    sp = None

Row = collections.namedtuple("Row", "op build expected")
A = np.array([0.5, 1.0, 3.0, 10.0])
X = np.array([0.2, 2.0, 2.5, 12.0])
B = np.array([-9.4, -4.0, -2.5, 26.0])   # 3 X - 10

ROWS = [
    Row("Igamma", lambda: tf.igamma(A, X),
        [0.47291074313446185, 0.8646647167633873, 0.4561868841166704, 0.757607838329488]),
    Row("Igammac", lambda: tf.igammac(A, X),
        [0.5270892568655381, 0.1353352832366127, 0.5438131158833296, 0.24239216167051197]),
    Row("IgammaGradA", lambda: IgammaGradA(A, X),
        [-0.8201614064863386, -0.22082542621185938, -0.24711735748326835,
         -0.09717797203717947]),
    Row("Betainc", lambda: tf.betainc(A, A + 1.5, np.array([0.1, 0.5, 0.7, 0.9])),
        [0.458530260724415, 0.823223304703363, 0.954686159699081, 0.9999997031752546]),
    Row("Zeta", lambda: tf.zeta(np.array([2.0, 3.5, 1.5, 6.0]), X),
        [26.26737720542378, 0.12673386731705663, 1.4037797688568259, 9.850690875901241e-07]),
    Row("Polygamma", lambda: tf.polygamma(np.array([0.0, 1.0, 2.0, 3.0]), X),
        [-5.289039896592188, 0.6449340668482266, -0.23620405164172736, 0.001310093231070826]),
    Row("BesselI0", lambda: tf.math.bessel_i0(B),
        [1595.284377456265, 11.30192195213633, 3.289839144050123, 15388976705.66081]),
    Row("BesselI0e", lambda: tf.math.bessel_i0e(B),
        [0.1319684094221633, 0.20700192122398672, 0.27004644161220276, 0.07862365204001373]),
    Row("BesselI1", lambda: tf.math.bessel_i1(B),
        [-1507.8794019390584, -9.759465153704449, -2.5167162452886984, 15090072642.341646]),
    Row("BesselI1e", lambda: tf.math.bessel_i1e(B),
        [-0.12473791449750207, -0.1787508395024353, -0.20658464953126654, 0.07709652456966624]),
    Row("Xlog1py", lambda: tf.math.xlog1py(np.array([0.0, 2.0, -1.0, 3.0]), [-1.0, 1.0, 0.5, 0.0]),
        [0.0, 1.3862943611198906, -0.4054651081081644, 0.0]),
    Row("NextAfter", lambda: tf.math.nextafter(np.float32([1.0, 0.0]), np.float32([2.0, -1.0])),
        np.float32([1.0000001192092896, -1.401298464324817e-45])),
]
COVERED_OPS = {row.op for row in ROWS}


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def _check(t, expected, rtol=1e-12):
    value = _run(t)
    expected = np.asarray(expected)
    if expected.dtype == np.float64 and t.dtype == tf.float32:
        expected = expected.astype(np.float32)
        rtol = max(rtol, 1e-6)
    assert value.dtype == t.dtype.as_numpy_dtype == expected.dtype
    assert t.shape.is_compatible_with(value.shape)
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=0)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    out = row.build()
    assert out.op.type == row.op
    _check(out, row.expected)


def test_igamma_grad_a_is_the_a_gradient():
    a = tf.constant(A)
    grad = tf.gradients(tf.igamma(a, X), a)[0]
    np.testing.assert_allclose(_run(grad), [-0.8201614064863386, -0.22082542621185938,
                                            -0.24711735748326835, -0.09717797203717947],
                               rtol=1e-12)


def test_float32_and_names():
    out = tf.igamma(np.float32([1.0, 2.0]), np.float32([1.0, 3.0]))
    assert out.dtype == tf.float32 and out.op.name == "Igamma"
    np.testing.assert_allclose(_run(out), [1 - np.exp(-1), 1 - 4 * np.exp(-3)], rtol=1e-6)
    assert tf.math.bessel_i0(1.0).op.name == "bessel_i0/BesselI0"
    assert tf.math.xlog1py(1.0, 1.0).op.name == "xlog1py/Xlog1py"
    assert tf.zeta(2.0, 1.0).shape.as_list() == []
    assert tf.betainc(tf.placeholder(tf.float32, [None, 3]), 1.0, 0.5).shape.as_list() == \
        [None, 3]
    with pytest.raises(ValueError):
        tf.betainc(tf.ones([2]), tf.ones([3]), tf.ones([2]))
    with pytest.raises(TypeError):
        tf.zeta(tf.constant([2], tf.int32), tf.constant([1], tf.int32))


def test_edge_cases_match_reference():
    nan, inf = np.nan, np.inf
    _check(tf.igamma([0.0, -1.0, 2.0, 2.0, 1.0], [1.0, 1.0, 0.0, -1.0, inf]),
           [nan, nan, 0.0, nan, 1.0])
    _check(tf.igammac([2.0, 1.0], [0.0, inf]), [1.0, 0.0])
    _check(tf.zeta([1.0, 0.5, 2.0, 2.0], [1.0, 1.0, -2.0, -1.5]),
           [inf, nan, inf, 9.379246644989124], rtol=1e-13)
    _check(tf.polygamma([-1.0, 1.5], [2.0, 2.0]), [nan, nan])
    _check(tf.betainc([1.0, 1.0, -1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.5]), [0.0, 1.0, nan])
    _check(tf.math.erfcinv([0.1, 1.0, 1.5, 2.0, 0.0]),
           [1.1630871536766743, -0.0, -0.4769362762044699, -inf, inf], rtol=1e-9)
    _check(tf.math.bessel_i0e([0.0, inf, -inf]), [1.0, 0.0, 0.0])
    _check(tf.math.bessel_i1([0.0, inf, -inf]), [0.0, inf, -inf])


@pytest.mark.skipif(sp is None, reason="SciPy not installed")
def test_wide_ranges_against_scipy():
    rng = np.random.RandomState(0)
    a = np.exp(rng.uniform(-4, 5, 400))
    x = np.exp(rng.uniform(-6, 6, 400))
    np.testing.assert_allclose(special_functions.igamma(a, x), sp.gammainc(a, x), atol=1e-13)
    np.testing.assert_allclose(special_functions.igammac(a, x), sp.gammaincc(a, x), rtol=1e-9,
                               atol=1e-300)
    b = np.exp(rng.uniform(-3, 4, 400))
    u = rng.uniform(0, 1, 400)
    np.testing.assert_allclose(special_functions.betainc(a, b, u), sp.betainc(a, b, u),
                               atol=1e-12)
    s = rng.uniform(1.01, 20, 400)
    np.testing.assert_allclose(special_functions.zeta(s, x), sp.zeta(s, x), rtol=1e-12)
    n = rng.randint(0, 6, 400)
    np.testing.assert_allclose(special_functions.polygamma(n, x), sp.polygamma(n, x),
                               rtol=1e-10)
    v = rng.uniform(-80, 80, 400)
    for ours, theirs in [(special_functions.bessel_i0e, sp.i0e),
                         (special_functions.bessel_i1e, sp.i1e),
                         (special_functions.bessel_i0, sp.i0),
                         (special_functions.bessel_i1, sp.i1)]:
        np.testing.assert_allclose(ours(v), theirs(v), rtol=1e-13)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.05, 60.0), st.floats(0.01, 80.0))
def test_igamma_grad_a_matches_finite_differences(a, x):
    h = 1e-6 * a
    p = special_functions.igamma if special_functions.igamma(a, x) < 0.5 else \
        (lambda a_, x_: -special_functions.igammac(a_, x_))
    numeric = (p(a + h, x) - p(a - h, x)) / (2 * h)
    analytic = special_functions.igamma_grad_a(a, x)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.1, 30.0), st.floats(0.1, 30.0), st.floats(0.0, 1.0))
def test_betainc_symmetry_and_gamma_identities(a, b, x):
    assume(1.0 - (1.0 - x) == x)  # 1 - x must be exact, or the identity tests rounding
    left = special_functions.betainc(a, b, x)
    right = special_functions.betainc(b, a, 1.0 - x)
    np.testing.assert_allclose(left + right, 1.0, atol=1e-12)
    total = special_functions.igamma(a, b) + special_functions.igammac(a, b)
    np.testing.assert_allclose(total, 1.0, atol=1e-12)


def test_known_closed_forms():
    x = np.linspace(0.1, 5, 7)
    np.testing.assert_allclose(special_functions.igamma(1.0, x), 1 - np.exp(-x), rtol=1e-14)
    np.testing.assert_allclose(special_functions.betainc(1.0, 1.0, x / 5), x / 5, rtol=1e-14)
    np.testing.assert_allclose(special_functions.zeta(4.0, 1.0), np.pi ** 4 / 90, rtol=1e-15)
    np.testing.assert_allclose(special_functions.polygamma(1.0, 0.5), np.pi ** 2 / 2,
                               rtol=1e-14)


# -- gradients -----------------------------------------------------------------------------------

def _case(fn, *ranges, constants=(), seed=0):
    """fn(tf, *placeholders, *constants); placeholder values uniform in `ranges`."""

    def build(tf):
        rng = np.random.RandomState(seed)
        values = [rng.uniform(lo, hi, [3]) for lo, hi in ranges]
        xs = [tf.placeholder(tf.float64, [3]) for _ in ranges]
        return fn(tf, *xs, *[tf.constant(c) for c in constants]), xs, values

    return build


GRADIENT_CASES = [
    ("Igamma", _case(lambda tf, a, x: tf.igamma(a, x), (0.5, 3.0), (0.2, 4.0))),
    ("Igammac", _case(lambda tf, a, x: tf.igammac(a, x), (0.5, 3.0), (0.2, 4.0))),
    ("Betainc", _case(lambda tf, x, a, b: tf.betainc(a, b, x), (0.1, 0.9),
                      constants=(np.array([0.5, 2.0, 3.0]), np.array([1.5, 1.0, 4.0])))),
    ("Zeta", _case(lambda tf, q, x: tf.zeta(x, q), (0.5, 3.0),
                   constants=(np.array([2.0, 3.5, 5.0]),))),
    ("Polygamma", _case(lambda tf, x, n: tf.polygamma(n, x), (0.5, 3.0),
                        constants=(np.array([0.0, 1.0, 2.0]),))),
    ("Digamma", _case(lambda tf, x: tf.digamma(x), (0.5, 3.0))),
    ("BesselI0", _case(lambda tf, x: tf.math.bessel_i0(x), (-3.0, 3.0))),
    ("BesselI0e", _case(lambda tf, x: tf.math.bessel_i0e(x), (0.3, 3.0))),
    ("BesselI1", _case(lambda tf, x: tf.math.bessel_i1(x), (-3.0, 3.0))),
    ("BesselI1e", _case(lambda tf, x: tf.math.bessel_i1e(x), (-3.0, -0.3))),
    ("Xlog1py", _case(lambda tf, x, y: tf.math.xlog1py(x, y), (-1.0, 1.0), (-0.5, 2.0))),
]


def test_bessel_gradients_at_zero():
    x = tf.constant([0.0, 0.0])
    grads = tf.gradients([tf.math.bessel_i1(x), tf.math.bessel_i1e(x)], x)[0]
    np.testing.assert_allclose(_run(grads), [1.0, 1.0])
