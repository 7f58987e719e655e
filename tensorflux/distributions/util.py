"""Helpers shared by the distributions: parameter checks, logits/probs, seeds, the normal CDF."""

from __future__ import annotations

import hashlib

import numpy as np

from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.nn import core as nn_core


def gen_new_seed(seed, salt: str):
    """A new op seed derived from `seed` and `salt` (None stays None), so that the several
    random ops of one sample draw independent streams that are still reproducible."""
    if seed is None:
        return None
    digest = hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def with_checks(checks, tensor, name):
    """`tensor` under an identity that waits for the assert ops in `checks` (if any)."""
    if not checks:
        return array_ops.identity(tensor, name=name)
    with scopes.control_dependencies(checks):
        return array_ops.identity(tensor, name=name)


def assert_same_float_dtype(tensors):
    """The common floating dtype of `tensors`; ValueError (as TF) names the odd one out."""
    dtype = None
    for t in tensors:
        base = t.dtype.base_dtype
        if not base.is_floating:
            raise ValueError(f"Expected floating point type, got {base!r} for {t.name}.")
        if dtype is None:
            dtype = base
        elif base != dtype:
            raise ValueError(f"{t.name}, type={base!r}, must be of the same type ({dtype!r}) as "
                             f"{tensors[0].name}.")
    return dtype


def get_logits_and_probs(logits=None, probs=None, multidimensional=False, validate_args=False,
                         name="get_logits_and_probs", dtype=None):
    """Converts whichever of `logits` / `probs` is given into both (exactly one must be).

    Binary: logits = log(p) - log1p(-p), probs = sigmoid(logits). Multidimensional (the last
    axis holds the classes): logits = log(p), probs = softmax(logits).
    """
    with scopes.name_scope(name, values=[probs, logits]):
        if (probs is None) == (logits is None):
            raise ValueError("Must pass probs or logits, but not both.")
        if probs is None:
            logits = convert_to_tensor(logits, name="logits", dtype=dtype)
            if not logits.dtype.is_floating:
                raise TypeError("logits must having floating type.")
            if multidimensional:
                if validate_args:
                    logits = embed_check_categorical_event_shape(logits)
                return logits, nn_core.softmax(logits, name="probs")
            return logits, math_ops.sigmoid(logits, name="probs")
        probs = convert_to_tensor(probs, name="probs", dtype=dtype)
        if not probs.dtype.is_floating:
            raise TypeError("probs must having floating type.")
        if validate_args:
            with scopes.name_scope("validate_probs"):
                one = array_ops.constant(1.0, probs.dtype)
                checks = [check_ops.assert_non_negative(probs)]
                if multidimensional:
                    probs = embed_check_categorical_event_shape(probs)
                    eps = np.finfo(probs.dtype.as_numpy_dtype).eps
                    checks.append(check_ops.assert_less_equal(
                        math_ops.abs(math_ops.reduce_sum(probs,
                                                         -1) - one), array_ops.constant(10 * eps,
                                                                                        probs.dtype),
                        message="probs does not sum to 1."))
                else:
                    checks.append(check_ops.assert_less_equal(
                        probs, one, message="probs has components greater than 1."))
                probs = with_checks(checks, probs, "probs")
        with scopes.name_scope("logits"):
            if multidimensional:
                return math_ops.log(probs), probs
            return math_ops.log(probs) - math_ops.log1p(-probs), probs


def embed_check_categorical_event_shape(categorical_param):
    """Statically rejects a parameter with no class axis or fewer than 2 classes."""
    shape = categorical_param.shape
    if shape.ndims is not None and shape.ndims < 1:
        raise ValueError(f"A categorical-distribution parameter must have at least 1 dimension, "
                         f"got shape {shape}.")
    if shape.ndims is not None and shape._dim_list[-1] is not None and int(shape._dim_list[-1]) < 2:
        raise ValueError(f"A categorical-distribution parameter must have at least 2 events, "
                         f"got {int(shape._dim_list[-1])}.")
    return categorical_param


def check_nonnegative_integer_form(x, message="elements must be non-negative integers."):
    """Assert ops: `x` (a float tensor of counts) holds non-negative whole numbers."""
    return [check_ops.assert_non_negative(x, message=message),
            check_ops.assert_equal(x, math_ops.round(x), message=message)]


def log_combinations(n, counts, name="log_combinations"):
    """log(n! / prod(counts!)) over the last axis of `counts`."""
    with scopes.name_scope(name, values=[n, counts]):
        total_permutations = math_ops.lgamma(n + 1)
        redundant = math_ops.reduce_sum(math_ops.lgamma(counts + 1), axis=[-1])
        return total_permutations - redundant


def ndtr(x):
    """The standard normal CDF, 0.5 erfc(-x / sqrt(2)) (accurate in both tails)."""
    return 0.5 * math_ops.erfc(-x * (1.0 / np.sqrt(2.0)))


def log_ndtr(x):
    """log of the standard normal CDF without underflow far in the lower tail.

    Above 0 it is log1p(-ndtr(-x)) (full relative accuracy as ndtr(x) -> 1); down to `lower`
    log(ndtr(x)); below it the asymptotic series
    -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6).
    """
    lower = -20.0 if x.dtype.base_dtype == dtypes.float64 else -10.0
    upper = 0.0
    dtype = x.dtype.base_dtype
    lower_t = array_ops.constant(lower, dtype)
    upper_t = array_ops.constant(upper, dtype)
    high = math_ops.log1p(-ndtr(-math_ops.maximum(x, upper_t)))
    middle = math_ops.log(ndtr(math_ops.minimum(math_ops.maximum(x, lower_t), upper_t)))
    low_x = math_ops.minimum(x, lower_t)
    inv_sq = 1.0 / math_ops.square(low_x)
    series = 1.0 + inv_sq * (-1.0 + inv_sq * (3.0 + inv_sq * -15.0))
    low = (-0.5 * math_ops.square(low_x) - math_ops.log(-low_x) - 0.5 * np.log(2.0 * np.pi)
           + math_ops.log(series))
    return math_ops.where(x > upper_t, high, math_ops.where(x > lower_t, middle, low))


def broadcast_tensors(*tensors):
    """The tensors broadcast against each other (for ops that want equal shapes)."""
    zero = array_ops.zeros_like(tensors[0])
    for t in tensors[1:]:
        zero = zero + array_ops.zeros_like(t)
    return [t + zero for t in tensors]


def nan_where(condition, value, name=None):
    """`value` where `condition` holds, NaN elsewhere."""
    nan = array_ops.fill(array_ops.shape(value), array_ops.constant(np.nan, value.dtype.base_dtype))
    return math_ops.where(condition, value, nan, name=name)
