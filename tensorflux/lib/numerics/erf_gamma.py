"""Vectorised float64 special functions (erf, erfc, lgamma, digamma) for the unary kernels.

NumPy has none of them and SciPy is not a dependency. Each works on whole arrays with a fixed
number of vectorised steps (no per-element Python):

- erf/erfc: the everywhere-positive series erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1)/(2n+1)!!
  for |x| < 3, and the continued fraction of erfc beyond; relative error ~1e-15.
- lgamma: the Lanczos approximation (g = 7, 9 terms) with the reflection formula below 0.5.
- digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series;
  reflection below 0.5. Poles (0, -1, -2, ...) give +inf for lgamma and NaN for digamma.
"""

from __future__ import annotations

import numpy as np

_SQRT_PI = np.sqrt(np.pi)
_SERIES_TERMS = 90
_FRACTION_TERMS = 90
_SWITCH = 3.0


def _erf_series(x):
    """erf for |x| < 3 by the positive series (no cancellation)."""
    x2 = x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, _SERIES_TERMS):
        term = term * (2.0 * x2) / (2 * n + 1)
        total = total + term
    return 2.0 / _SQRT_PI * np.exp(-x2) * total


def _erfc_fraction(x):
    """erfc for x >= 3 by the continued fraction x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))."""
    t = x.copy()
    for k in range(_FRACTION_TERMS, 0, -1):
        t = x + (0.5 * k) / t
    return np.exp(-x * x) / (_SQRT_PI * t)


def erf(x):
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    small = ax < _SWITCH
    series = _erf_series(np.where(small, x, 0.0))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        tail = 1.0 - _erfc_fraction(np.where(small, _SWITCH, ax))
    result = np.where(small, series, np.copysign(tail, x))
    return np.where(np.isnan(x), np.nan, result)


def erfc(x):
    x = np.asarray(x, np.float64)
    small = np.abs(x) < _SWITCH
    series = 1.0 - _erf_series(np.where(small, x, 0.0))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        upper = _erfc_fraction(np.where(small, _SWITCH, np.abs(x)))
    tail = np.where(x > 0, upper, 2.0 - upper)
    result = np.where(small, series, tail)
    return np.where(np.isnan(x), np.nan, result)


_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)
_EULER = 0.57721566490153286


def _lgamma_positive(x):
    """lgamma for x >= 0.5."""
    z = x - 1.0
    series = np.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        series = series + c / (z + i)
    t = z + _LANCZOS_G + 0.5
    return _HALF_LOG_2PI + (z + 0.5) * np.log(t) - t + np.log(series)


def lgamma(x):
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reflect = x < 0.5
        direct = _lgamma_positive(np.where(reflect, 1.0, x))
        mirrored = _lgamma_positive(np.where(reflect, 1.0 - x, 1.0))
        # x - round(x) is exact, so sin(pi x) stays accurate next to the poles.
        frac = np.where(reflect, x - np.round(x), 0.5)
        sine = np.abs(np.sin(np.pi * frac))
        reflected = np.log(np.pi / sine) - mirrored
        result = np.where(reflect, reflected, direct)
        tiny = np.abs(x) < 1e-9  # the reflection would overflow for subnormal x
        result = np.where(tiny, -np.log(np.abs(x)) - _EULER * x, result)
        pole = (x <= 0) & (x == np.floor(x))
        result = np.where(pole | np.isposinf(x) | np.isneginf(x), np.inf, result)
    return np.where(np.isnan(x), np.nan, result)


def _digamma_positive(x):
    """digamma for x >= 0.5: shift up to x >= 10, then the asymptotic expansion."""
    shift = np.zeros_like(x)
    for _ in range(10):
        low = x < 10.0
        shift = shift - np.where(low, 1.0 / x, 0.0)
        x = np.where(low, x + 1.0, x)
    inv2 = 1.0 / (x * x)
    tail = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132)))))
    return shift + np.log(x) - 0.5 / x - tail


def digamma(x):
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reflect = x < 0.5
        direct = _digamma_positive(np.where(reflect, 1.0, x))
        mirrored = _digamma_positive(np.where(reflect, 1.0 - x, 1.0))
        frac = np.where(reflect, x - np.round(x), 0.25)  # tan has period pi: exact reduction
        reflected = mirrored - np.pi / np.tan(np.pi * frac)
        result = np.where(reflect, reflected, direct)
        pole = (x <= 0) & (x == np.floor(x))
        result = np.where(pole | np.isneginf(x), np.nan, result)
        result = np.where(np.isposinf(x), np.inf, result)
    return np.where(np.isnan(x), np.nan, result)
