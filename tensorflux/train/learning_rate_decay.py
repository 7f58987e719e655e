"""Learning-rate schedules of a global step (TF1 `tf.train.*_decay`), built from graph ops."""

from __future__ import annotations

import math

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math import select
from tensorflux.ops.random import stateful as random_ops

__all__ = ["exponential_decay", "inverse_time_decay", "natural_exp_decay", "piecewise_constant",
           "polynomial_decay", "cosine_decay", "cosine_decay_restarts", "linear_cosine_decay",
           "noisy_linear_cosine_decay", "piecewise_constant_decay"]


def _floats(global_step, *values):
    lr = convert_to_tensor(values[0], name="learning_rate")
    dtype = lr.dtype.base_dtype
    step = math_ops.cast(global_step, dtype)
    return [lr, step] + [math_ops.cast(v, dtype) for v in values[1:]]


def _check(global_step, name):
    if global_step is None:
        raise ValueError(f"global_step is required for {name}.")


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """lr * decay_rate ^ (step / decay_steps) (floored when staircase)."""

    _check(global_step, "exponential_decay")
    with graph_mod.get_default_graph().name_scope(name or "ExponentialDecay") as scope:
        lr, step, steps, rate = _floats(global_step, learning_rate, decay_steps, decay_rate)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.pow(rate, p), name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """lr * exp(-decay_rate * step / decay_steps)."""

    _check(global_step, "natural_exp_decay")
    with graph_mod.get_default_graph().name_scope(name or "NaturalExpDecay") as scope:
        lr, step, steps, rate = _floats(global_step, learning_rate, decay_steps, decay_rate)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.exp(-rate * p), name=scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """lr / (1 + decay_rate * step / decay_steps)."""

    _check(global_step, "inverse_time_decay")
    with graph_mod.get_default_graph().name_scope(name or "InverseTimeDecay") as scope:
        lr, step, steps, rate = _floats(global_step, learning_rate, decay_steps, decay_rate)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.truediv(lr, 1.0 + rate * p, name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """values[i] on (boundaries[i-1], boundaries[i]]: values[0] for x <= boundaries[0].

    Raises:
        ValueError: len(values) != len(boundaries) + 1; a boundary whose dtype is not x's
            (int32 boundaries widen to an int64 x); values of different dtypes.
    """

    if len(values) != len(boundaries) + 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with graph_mod.get_default_graph().name_scope(name or "PiecewiseConstant") as scope:
        x = convert_to_tensor(x)
        values = [convert_to_tensor(v) for v in values]
        boundaries = [_boundary(convert_to_tensor(b), x.dtype.base_dtype) for b in boundaries]
        for value in values[1:]:
            if value.dtype.base_dtype != values[0].dtype.base_dtype:
                raise ValueError(f"Values must have elements all with the same dtype "
                                 f"({values[0].dtype.base_dtype.name} vs "
                                 f"{value.dtype.base_dtype.name}).")
        result = values[-1]
        for boundary, value in reversed(list(zip(boundaries, values[:-1]))):
            result = select.where(x <= boundary, value, result)
        return array_ops.identity(result, name=scope)


def _boundary(boundary, x_dtype):
    """A boundary must have x's dtype (no silent float -> int truncation); int32 widens to
    int64, the common case of Python-int boundaries against an int64 global step."""
    if boundary.dtype.base_dtype == x_dtype:
        return boundary
    if boundary.dtype.base_dtype == dtypes.int32 and x_dtype == dtypes.int64:
        return math_ops.cast(boundary, x_dtype)
    raise ValueError(f"Boundaries ({boundary.dtype.base_dtype.name}) must have the same dtype "
                     f"as x ({x_dtype.name}).")


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(lr - end) * (1 - step / decay_steps) ^ power + end, with optional cycling."""

    _check(global_step, "polynomial_decay")
    with graph_mod.get_default_graph().name_scope(name or "PolynomialDecay") as scope:
        lr, step, steps, end, pw = _floats(global_step, learning_rate, decay_steps,
                                           end_learning_rate, power)
        if cycle:
            multiplier = math_ops.maximum(math_ops.ceil(step / steps), 1.0)
            steps = steps * multiplier
        else:
            step = math_ops.minimum(step, steps)
        fraction = 1.0 - step / steps
        return math_ops.add((lr - end) * math_ops.pow(fraction, pw), end, name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)."""

    _check(global_step, "cosine_decay")
    with graph_mod.get_default_graph().name_scope(name or "CosineDecay") as scope:
        lr, step, steps, a = _floats(global_step, learning_rate, decay_steps, alpha)
        step = math_ops.minimum(step, steps)
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * step / steps))
        return math_ops.multiply(lr, (1 - a) * cosine + a, name=scope)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """SGDR: cosine decay with warm restarts (periods grow by t_mul, peaks by m_mul)."""

    _check(global_step, "cosine_decay_restarts")
    with graph_mod.get_default_graph().name_scope(name or "SGDRDecay") as scope:
        lr, step, first, t_mul, m_mul, a = _floats(global_step, learning_rate,
                                                   first_decay_steps, t_mul, m_mul, alpha)
        done = step / first
        if _static(t_mul) == 1.0:
            i_restart = math_ops.floor(done)
            done = done - i_restart
        else:
            i_restart = math_ops.floor(math_ops.log(1.0 - done * (1.0 - t_mul)) /
                                       math_ops.log(t_mul))
            sum_r = (1.0 - math_ops.pow(t_mul, i_restart)) / (1.0 - t_mul)
            done = (done - sum_r) / math_ops.pow(t_mul, i_restart)
        m_fac = math_ops.pow(m_mul, i_restart)
        cosine = 0.5 * m_fac * (1.0 + math_ops.cos(math.pi * done))
        return math_ops.multiply(lr, (1 - a) * cosine + a, name=scope)


def _static(tensor):
    value = constant_value(tensor)
    return 2.0 if value is None else float(value)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """lr * ((alpha + linear) * cosine + beta), as in TF."""

    _check(global_step, "linear_cosine_decay")
    with graph_mod.get_default_graph().name_scope(name or "LinearCosineDecay") as scope:
        lr, step, steps, periods, a, b = _floats(global_step, learning_rate, decay_steps,
                                                 num_periods, alpha, beta)
        step = math_ops.minimum(step, steps)
        linear = (steps - step) / steps
        fraction = 2.0 * periods * step / steps
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * fraction))
        return math_ops.multiply(lr, (a + linear) * cosine + b, name=scope)


piecewise_constant_decay = piecewise_constant


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """Linear cosine decay with Gaussian noise on the linear part (Bello et al., 2017).

    `lr * ((alpha + linear + eps) * cosine + beta)`, where `linear = (decay_steps - step) /
    decay_steps`, `cosine = 0.5 * (1 + cos(pi * 2 * num_periods * step / decay_steps))`, the
    step is capped at `decay_steps`, and `eps ~ N(0, initial_variance / (1 + step) **
    variance_decay)` is drawn anew each run (seeded by the graph seed).

    Raises:
        ValueError: `global_step` is None.

    Example: `lr = tf.train.noisy_linear_cosine_decay(0.1, global_step, 1000)`.
    """

    _check(global_step, "noisy_linear_cosine_decay")
    with graph_mod.get_default_graph().name_scope(name or "NoisyLinearCosineDecay") as scope:
        lr, step, steps, variance0, decay, periods, a, b = _floats(
            global_step, learning_rate, decay_steps, initial_variance, variance_decay,
            num_periods, alpha, beta)
        step = math_ops.minimum(step, steps)
        linear = (steps - step) / steps
        variance = variance0 / math_ops.pow(1.0 + step, decay)
        noise = random_ops.random_normal(linear.shape, stddev=math_ops.sqrt(variance),
                                         dtype=lr.dtype.base_dtype)
        fraction = 2.0 * periods * step / steps
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * fraction))
        return math_ops.multiply(lr, (a + linear + noise) * cosine + b, name=scope)
