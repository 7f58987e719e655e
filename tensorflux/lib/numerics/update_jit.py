"""Compiled dense optimizer updates: each variable element read and written once.

NumPy needs a temporary and a pass per operator of an update: `var -= lr * grad` reads the
gradient, writes `lr * grad`, then reads both and writes the variable (two passes over 4 MB
for a 1024x1024 float32 kernel); Adam's update takes nine. These loops do one pass with the
same arithmetic, in the variable's dtype and in the reference kernels' order (no fused
multiply-add: numba's `fastmath` is off), so results are bit-identical to the NumPy kernels in
ops/state/training_ops.py, which stay the reference and the fallback.

Callers check `supports(...)` first: numba on, float32/float64, C-contiguous buffers of one
shape and dtype, and enough elements to be worth leaving NumPy (small variables stay there).
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import jit as jit_mod

__all__ = ["supports", "gradient_descent", "momentum", "adam", "moving_average_supports",
           "moving_average"]

SUPPORTED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
MIN_ELEMENTS = 4096


def supports(var: np.ndarray, *others: np.ndarray) -> bool:
    """True when the compiled update may run on `var` and the same-shaped `others`."""
    if (var.dtype not in SUPPORTED_TYPES or var.size < MIN_ELEMENTS
            or not var.flags.c_contiguous or not var.flags.writeable
            or not jit_mod.available()):
        return False
    for other in others:
        if (other.dtype != var.dtype or other.shape != var.shape
                or not other.flags.c_contiguous):
            return False
    return True


def gradient_descent(var: np.ndarray, alpha, delta: np.ndarray) -> None:
    """`var -= alpha * delta` in place (ApplyGradientDescent)."""
    kernel = _gradient_descent_held if jit_mod.holds_gil(var.size) else _gradient_descent
    kernel(var.reshape(-1), var.dtype.type(alpha), delta.reshape(-1))


def momentum(var: np.ndarray, accum: np.ndarray, lr, grad: np.ndarray, mu,
             use_nesterov: bool) -> None:
    """ApplyMomentum in place: `accum = accum * mu + grad`, then the variable step."""
    kind = var.dtype.type
    kernel = _momentum_held if jit_mod.holds_gil(var.size) else _momentum
    kernel(var.reshape(-1), accum.reshape(-1), kind(lr), grad.reshape(-1), kind(mu),
              bool(use_nesterov))


def adam(var: np.ndarray, m: np.ndarray, v: np.ndarray, lr_t, beta1, beta2, epsilon,
         grad: np.ndarray, use_nesterov: bool) -> None:
    """ApplyAdam in place, given the bias-corrected step size `lr_t`."""
    kind = var.dtype.type
    one = kind(1)
    kernel = _adam_held if jit_mod.holds_gil(var.size) else _adam
    kernel(var.reshape(-1), m.reshape(-1), v.reshape(-1), kind(lr_t), kind(beta1),
          kind(one - kind(beta1)), kind(one - kind(beta2)), kind(epsilon), grad.reshape(-1),
          bool(use_nesterov))


def moving_average_supports(var: np.ndarray, value: np.ndarray) -> bool:
    """True when `moving_average` may run on `var` and `value` (any size: it replaces three
    NumPy passes that each release the GIL above ~500 elements)."""
    return (var.dtype in SUPPORTED_TYPES and var.size > 0 and var.flags.c_contiguous and
            var.flags.writeable and value.dtype == var.dtype and value.shape == var.shape and
            value.flags.c_contiguous and jit_mod.available())


# `moving_average` keeps the GIL below this many elements (~1 ms of work), above
# `jit.HOLD_GIL_ELEMENTS`: a moving average runs after the step's last kernel, with nothing of
# the step to overlap, and giving the GIL away costs the step far more than the loop. The
# CIFAR-10 tutorial's EMA step over its ten variables (local3: 884,736 elements) beside two
# busy Python threads: 915 us median holding the GIL, 18-67 ms releasing it in that one
# kernel (bench/gil_ops.py --session).
MOVING_AVERAGE_HOLD_ELEMENTS = 1 << 22


def moving_average(var: np.ndarray, value: np.ndarray, factor) -> None:
    """`var -= (var - value) * factor` in place, one pass (ExponentialMovingAverage's
    Sub, Mul and AssignSub, in their order: bit-identical)."""
    held = var.size < MOVING_AVERAGE_HOLD_ELEMENTS
    kernel = _moving_average_held if held else _moving_average
    kernel(var.reshape(-1), value.reshape(-1), var.dtype.type(factor))


@jit_mod.jit
def _moving_average(var, value, factor):
    for i in range(var.size):
        var[i] = var[i] - (var[i] - value[i]) * factor


@jit_mod.jit
def _gradient_descent(var, alpha, delta):
    for i in range(var.size):
        var[i] = var[i] - alpha * delta[i]


@jit_mod.jit
def _momentum(var, accum, lr, grad, mu, nesterov):
    for i in range(var.size):
        acc = accum[i] * mu
        acc = acc + grad[i]
        accum[i] = acc
        if nesterov:
            var[i] = var[i] - lr * (grad[i] + mu * acc)
        else:
            var[i] = var[i] - lr * acc


@jit_mod.jit
def _adam(var, m, v, lr_t, beta1, one_minus_beta1, one_minus_beta2, epsilon, grad, nesterov):
    for i in range(var.size):
        g = grad[i]
        mi = m[i] + (g - m[i]) * one_minus_beta1
        vi = v[i] + (g * g - v[i]) * one_minus_beta2
        m[i] = mi
        v[i] = vi
        if nesterov:
            step = lr_t * (mi * beta1 + one_minus_beta1 * g)
        else:
            step = lr_t * mi
        var[i] = var[i] - step / (np.sqrt(vi) + epsilon)


# Twins keeping the GIL for small variables (`jit.holds_gil`): the same loops.

@jit_mod.jit(nogil=False)
def _gradient_descent_held(var, alpha, delta):
    _gradient_descent(var, alpha, delta)


@jit_mod.jit(nogil=False)
def _momentum_held(var, accum, lr, grad, mu, nesterov):
    _momentum(var, accum, lr, grad, mu, nesterov)


@jit_mod.jit(nogil=False)
def _adam_held(var, m, v, lr_t, beta1, one_minus_beta1, one_minus_beta2, epsilon, grad,
               nesterov):
    _adam(var, m, v, lr_t, beta1, one_minus_beta1, one_minus_beta2, epsilon, grad, nesterov)


@jit_mod.jit(nogil=False)
def _moving_average_held(var, value, factor):
    _moving_average(var, value, factor)
