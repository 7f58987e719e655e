"""Vectorised float64 special functions for special_ops: incomplete gamma and beta, Hurwitz zeta,
polygamma, modified Bessel functions of order 0 and 1.

NumPy only (SciPy is not a dependency). Every loop below runs over whole arrays, a bounded
number of times (iterative ones stop once all elements have converged):

- igamma / igammac: the power series of P(a, x) for x < a + 1 and the continued fraction of
  Q(a, x) (modified Lentz) beyond; `igamma_grad_a` carries d/da through the same iterations
  (forward-mode), as the reference does for IgammaGradA.
- betainc: the continued fraction of I_x(a, b), on the side of the symmetry
  I_x(a, b) = 1 - I_{1-x}(b, a) where it converges fast.
- zeta: Euler-Maclaurin summation with 12 Bernoulli terms after shifting q to >= 9.
- polygamma: digamma for order 0, (-1)^(n+1) n! zeta(n + 1, x) above.
- Bessel I0/I1: the all-positive power series for |x| < 30, the asymptotic expansion of
  exp(-|x|) I_v(x) beyond (its error there is below float64 resolution).
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

import numpy as np

from tensorflux.lib.numerics.erf_gamma import digamma, lgamma

_EPS = np.finfo(np.float64).eps
_TINY = 1e-300
_MAX_ITERATIONS = 5000


def _float64(*arrays):
    return np.broadcast_arrays(*[np.asarray(a, np.float64) for a in arrays])


# -- incomplete gamma ---------------------------------------------------------------------------

def _iterate(state, step, outputs):
    """Runs `step(i, state) -> (state, done)` for i = 1, 2, ... on the elements not yet done.

    `state` maps names to equal-length 1-D arrays; finished elements are dropped from it after
    each step (so slow elements do not make the fast ones iterate), and their `outputs` entries
    are returned at their original positions.
    """
    size = len(next(iter(state.values())))
    results = {name: state[name].copy() for name in outputs}
    index = np.arange(size)
    for i in range(1, _MAX_ITERATIONS + 1):
        if index.size == 0:
            break
        state, done = step(i, state)
        if i == _MAX_ITERATIONS:
            done = np.ones_like(done)
        if np.any(done):
            for name in outputs:
                results[name][index[done]] = state[name][done]
            keep = ~done
            index = index[keep]
            state = {name: value[keep] for name, value in state.items()}
    return [results[name] for name in outputs]


def _gamma_series(a, x):
    """sum_n x^n / (a (a+1) ... (a+n)) and its derivative wrt a."""

    def step(n, s):
        ratio = s["x"] / (s["a"] + n)
        term = s["term"] * ratio
        dterm = s["dterm"] * ratio - term / (s["a"] + n)
        total = s["total"] + term
        dtotal = s["dtotal"] + dterm
        done = ((np.abs(term) <= _EPS * np.abs(total))
                & (np.abs(dterm) <= _EPS * np.abs(dtotal) + _TINY))
        return {"a": s["a"], "x": s["x"], "term": term, "dterm": dterm, "total": total,
                "dtotal": dtotal}, done

    term = 1.0 / a
    state = {"a": a, "x": x, "term": term, "dterm": -term / a, "total": term,
             "dtotal": -term / a}
    return _iterate(state, step, ("total", "dtotal"))


def _gamma_fraction(a, x):
    """Continued fraction h with Q(a, x) = exp(a log x - x - lgamma(a)) h, and dh/da."""

    def step(i, s):
        a = s["a"]
        an = -i * (i - a)
        b = s["b"] + 2.0
        raw = an * s["d"] + b
        draw = i * s["d"] + an * s["dd"] - 1.0
        raw = np.where(np.abs(raw) < _TINY, _TINY, raw)
        dc = -1.0 + i / s["c"] - an * s["dc"] / (s["c"] * s["c"])
        c = b + an / s["c"]
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / raw
        dd = -draw * d * d
        delta = d * c
        ddelta = dd * c + d * dc
        dh = s["dh"] * delta + s["h"] * ddelta
        h = s["h"] * delta
        done = (np.abs(delta - 1.0) <= _EPS) & (np.abs(ddelta) <= _EPS * np.abs(dh) + _TINY)
        return {"a": a, "b": b, "c": c, "dc": dc, "d": d, "dd": dd, "h": h, "dh": dh}, done

    b = x + 1.0 - a
    d = 1.0 / b
    state = {"a": a, "b": b, "c": np.full_like(x, 1.0 / _TINY), "dc": np.zeros_like(x),
             "d": d, "dd": d * d, "h": d, "dh": d * d}
    return _iterate(state, step, ("h", "dh"))


def _igamma_all(a, x):
    """(P, Q, dP/da) for a > 0, x > 0 (finite)."""
    log_x = np.log(x)
    log_prefix = a * log_x - x - lgamma(a)
    prefix = np.exp(log_prefix)
    slope = log_x - digamma(a)
    series = x < a + 1.0
    p = np.empty_like(x)
    q = np.empty_like(x)
    dp = np.empty_like(x)
    if np.any(series):
        a_s, x_s = a[series], x[series]
        total, dtotal = _gamma_series(a_s, x_s)
        p[series] = prefix[series] * total
        q[series] = 1.0 - p[series]
        dp[series] = prefix[series] * (total * slope[series] + dtotal)
    rest = ~series
    if np.any(rest):
        h, dh = _gamma_fraction(a[rest], x[rest])
        q[rest] = prefix[rest] * h
        p[rest] = 1.0 - q[rest]
        dp[rest] = -prefix[rest] * (h * slope[rest] + dh)
    return p, q, dp


def _igamma_dispatch(a, x, which):
    a, x = _float64(a, x)
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        inside = (a > 0) & (x > 0) & np.isfinite(x) & np.isfinite(a)
        if np.any(inside):
            parts = _igamma_all(a[inside], x[inside])
            out[inside] = parts[which]
        zero_x = (a > 0) & (x == 0)
        inf_x = (a > 0) & np.isposinf(x) & np.isfinite(a)
        edge = {0: (0.0, 1.0), 1: (1.0, 0.0), 2: (0.0, 0.0)}[which]
        out[zero_x] = edge[0]
        out[inf_x] = edge[1]
    return out


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return _igamma_dispatch(a, x, 0)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _igamma_dispatch(a, x, 1)


def igamma_grad_a(a, x):
    """d P(a, x) / da."""
    return _igamma_dispatch(a, x, 2)


# -- incomplete beta ----------------------------------------------------------------------------

def _beta_fraction(a, b, x):
    def guard(v):
        return np.where(np.abs(v) < _TINY, _TINY, v)

    def step(m, s):
        a, b, x = s["a"], s["b"], s["x"]
        c, d, h = s["c"], s["d"], s["h"]
        m2 = 2.0 * m
        for aa in (m * (b - m) * x / ((a - 1.0 + m2) * (a + m2)),
                   -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2))):
            d = 1.0 / guard(1.0 + aa * d)
            c = guard(1.0 + aa / c)
            delta = d * c
            h = h * delta
        return {"a": a, "b": b, "x": x, "c": c, "d": d, "h": h}, np.abs(delta - 1.0) <= _EPS

    d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    state = {"a": a, "b": b, "x": x, "c": np.ones_like(x), "d": d, "h": d}
    return _iterate(state, step, ("h",))[0]


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = _float64(a, b, x)
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        valid = (a > 0) & (b > 0) & (x >= 0) & (x <= 1)
        inside = valid & (x > 0) & (x < 1)
        if np.any(inside):
            ai, bi, xi = a[inside], b[inside], x[inside]
            log_front = (lgamma(ai + bi) - lgamma(ai) - lgamma(bi) + ai * np.log(xi)
                         + bi * np.log1p(-xi))
            front = np.exp(log_front)
            swap = xi >= (ai + 1.0) / (ai + bi + 2.0)
            aa, bb = np.where(swap, bi, ai), np.where(swap, ai, bi)
            xx = np.where(swap, 1.0 - xi, xi)
            fraction = _beta_fraction(aa, bb, xx)
            direct = front * fraction / aa
            out[inside] = np.where(swap, 1.0 - direct, direct)
        out[valid & (x == 0)] = 0.0
        out[valid & (x == 1)] = 1.0
    return out


# -- zeta and polygamma -------------------------------------------------------------------------

_BERNOULLI = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
              Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510),
              Fraction(43867, 798), Fraction(-174611, 330), Fraction(854513, 138),
              Fraction(-236364091, 2730))
# (2j)! / B_2j for j = 1..12: the Euler-Maclaurin correction divisors.
_EM_DIVISORS = tuple(float(factorial(2 * j) / b) for j, b in enumerate(_BERNOULLI, start=1))


def zeta(x, q):
    """The Hurwitz zeta function sum_{k >= 0} (k + q)^(-x), for x > 1."""
    x, q = _float64(x, q)
    with np.errstate(all="ignore"):
        total = np.power(q, -x)
        shifted = q.copy()
        count = 0
        while True:
            need = ((count < 9) | (shifted <= 9.0)) & np.isfinite(shifted)
            if not np.any(need) or count >= _MAX_ITERATIONS:
                break
            count += 1
            shifted = np.where(need, shifted + 1.0, shifted)
            total = total + np.where(need, np.power(shifted, -x), 0.0)
        w = shifted
        b = np.power(w, -x)
        # the last summed term is counted half: Euler-Maclaurin starts at w
        total = total + b * w / (x - 1.0) - 0.5 * b
        rising = np.ones_like(x)
        k = 0.0
        for divisor in _EM_DIVISORS:
            rising = rising * (x + k)
            b = b / w
            total = total + rising * b / divisor
            k += 1.0
            b = b / w
            rising = rising * (x + k)
            k += 1.0
        big_q = q > 1e8
        asymptotic = (1.0 / (x - 1.0) + 0.5 / q) * np.power(q, 1.0 - x)
        total = np.where(big_q, asymptotic, total)
        total = np.where(shifted <= 9.0, np.nan, total)  # q too negative to shift
        total = np.where(x == 1.0, np.inf, total)
        non_positive = q <= 0
        total = np.where(non_positive & (q == np.floor(q)), np.inf, total)
        total = np.where(non_positive & (q != np.floor(q)) & (x != np.floor(x)), np.nan, total)
        total = np.where((x < 1.0) | np.isnan(x) | np.isnan(q), np.nan, total)
    return total


def polygamma(n, x):
    """The n-th derivative of digamma at x (n a non-negative integer; NaN otherwise)."""
    n, x = _float64(n, x)
    with np.errstate(all="ignore"):
        order = np.where(n >= 1, n, 1.0)
        sign = np.where(np.mod(order, 2.0) == 1.0, 1.0, -1.0)
        higher = sign * np.exp(lgamma(order + 1.0)) * zeta(order + 1.0, x)
        result = np.where(n == 0, digamma(x), higher)
        result = np.where((n < 0) | (n != np.floor(n)), np.nan, result)
    return result


# -- modified Bessel functions I0, I1 -----------------------------------------------------------

_BESSEL_SWITCH = 30.0
_BESSEL_SERIES_TERMS = 90
_BESSEL_ASYMPTOTIC_TERMS = 30


def _bessel_series(x, order):
    """sum_k (x^2/4)^k / (k! (k + order)!) for |x| < 30 (times (x/2)^order)."""
    quarter = 0.25 * x * x
    term = np.ones_like(x) / factorial(order)
    total = term.copy()
    for k in range(1, _BESSEL_SERIES_TERMS):
        term = term * quarter / (k * (k + order))
        total = total + term
    return total * (0.5 * x) ** order


def _bessel_scaled_asymptotic(ax, order):
    """exp(-x) I_order(x) for x >= 30: 1/sqrt(2 pi x) sum_k (-1)^k a_k / x^k."""
    mu = 4.0 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for k in range(1, _BESSEL_ASYMPTOTIC_TERMS):
        term = -term * (mu - (2 * k - 1) ** 2) / (8.0 * k * ax)
        total = total + term
    return total / np.sqrt(2.0 * np.pi * ax)


def _bessel_scaled(x, order):
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    small = ax < _BESSEL_SWITCH
    with np.errstate(all="ignore"):
        near = _bessel_series(np.where(small, x, 0.0), order) * np.exp(-np.where(small, ax, 0.0))
        far = _bessel_scaled_asymptotic(np.where(small, _BESSEL_SWITCH, ax), order)
        if order == 1:
            far = np.copysign(far, x)
    result = np.where(small, near, far)
    return np.where(np.isnan(x), np.nan, result)


def bessel_i0e(x):
    return _bessel_scaled(x, 0)


def bessel_i1e(x):
    return _bessel_scaled(x, 1)


def bessel_i0(x):
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.asarray(x, np.float64)
        return np.where(np.isinf(x), np.inf, bessel_i0e(x) * np.exp(np.abs(x)))


def bessel_i1(x):
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.asarray(x, np.float64)
        return np.where(np.isinf(x), np.copysign(np.inf, x), bessel_i1e(x) * np.exp(np.abs(x)))
