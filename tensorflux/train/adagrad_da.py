"""Adagrad Dual Averaging: the ApplyAdagradDA / SparseApplyAdagradDA ops and the optimizer.

The update (TensorFlow's, for sparse linear models) keeps the sum `g_acc` and the squared sum
`gg_acc` of all gradients and sets the variable in closed form at step `t`:
    g_acc += grad;  gg_acc += grad^2
    var = -lr * sign(g_acc) * max(|g_acc| - l1 * t, 0) / (l2 * t * lr + sqrt(gg_acc))

(with l1 = 0 the shrinkage is skipped: `var = -lr * g_acc / (...)`). The optimizer passes
`t = global_step + 1`, reading its `global_step` argument once per apply.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.state import resource_training_ops
from tensorflux.train.optimizer import Optimizer

__all__ = ["AdagradDAOptimizer"]

_T = "T: {float16, bfloat16, float32, float64}"
_COMMON = ["var: Ref(T)", "gradient_accumulator: Ref(T)",
           "gradient_squared_accumulator: Ref(T)", "grad: T"]
_SCALARS = ["lr: T", "l1: T", "l2: T", "global_step: int64"]

ApplyAdagradDA = define_op(
    "ApplyAdagradDA", inputs=[*_COMMON, *_SCALARS], outputs=["out: Ref(T)"],
    attrs=[_T, "use_locking: bool = False"], stateful=True, differentiable=False)

SparseApplyAdagradDA = define_op(
    "SparseApplyAdagradDA", inputs=[*_COMMON, "indices: Tindices", *_SCALARS],
    outputs=["out: Ref(T)"],
    attrs=[_T, "Tindices: {int32, int64}", "use_locking: bool = False"], stateful=True,
    differentiable=False)


@ApplyAdagradDA.shape_fn
def _apply_adagrad_da_shape(var, g_acc, gg_acc, grad, lr, l1, l2, global_step):
    var.merge_with(g_acc).merge_with(gg_acc).merge_with(grad)
    for scalar in (lr, l1, l2, global_step):
        scalar.with_rank(0)
    return var


@SparseApplyAdagradDA.shape_fn
def _sparse_apply_adagrad_da_shape(var, g_acc, gg_acc, grad, indices, lr, l1, l2,
                                   global_step):
    var.merge_with(g_acc).merge_with(gg_acc)
    indices.with_rank(1)
    for scalar in (lr, l1, l2, global_step):
        scalar.with_rank(0)
    return var


def _closed_form(g_acc, gg_acc, lr, l1, l2, step):
    denom = l2 * step * lr + np.sqrt(gg_acc)
    if l1 > 0:
        shrunk = np.maximum(np.abs(g_acc) - l1 * step, 0)
        return (-lr * np.sign(g_acc) * shrunk / denom).astype(g_acc.dtype, copy=False)
    return (-lr * g_acc / denom).astype(g_acc.dtype, copy=False)


@ApplyAdagradDA.kernel
def _apply_adagrad_da(var, g_acc, gg_acc, grad, lr, l1, l2, global_step):
    buf, acc, sq = var.read(), g_acc.read(), gg_acc.read()
    if grad.shape != buf.shape:
        raise ValueError(f"ApplyAdagradDA: grad shape {list(grad.shape)} must equal the "
                         f"variable shape {list(buf.shape)}")
    acc += grad
    sq += grad * grad
    buf[...] = _closed_form(acc, sq, lr, l1, l2, global_step.astype(buf.dtype))
    return var


@SparseApplyAdagradDA.kernel
def _sparse_apply_adagrad_da(var, g_acc, gg_acc, grad, indices, lr, l1, l2, global_step):
    buf, acc, sq = var.read(), g_acc.read(), gg_acc.read()
    if indices.ndim != 1 or grad.shape != (len(indices), *buf.shape[1:]):
        raise ValueError(f"SparseApplyAdagradDA: grad shape {list(grad.shape)} must be "
                         f"[len(indices)] + variable shape[1:] = "
                         f"{[len(indices), *buf.shape[1:]]}")
    if indices.size and (indices.min() < 0 or indices.max() >= buf.shape[0]):
        raise ValueError(f"SparseApplyAdagradDA: indices must be in [0, {buf.shape[0]}), "
                         f"got {indices.tolist()}")
    rows = acc[indices] + grad
    sq_rows = sq[indices] + grad * grad
    acc[indices] = rows
    sq[indices] = sq_rows
    buf[indices] = _closed_form(rows, sq_rows, lr, l1, l2, global_step.astype(buf.dtype))
    return var


ResourceApplyAdagradDA = resource_training_ops.resource_twin(ApplyAdagradDA)
ResourceSparseApplyAdagradDA = resource_training_ops.resource_twin(SparseApplyAdagradDA)


class AdagradDAOptimizer(Optimizer):
    """Adagrad Dual Averaging (Duchi et al., 2011), for sparse linear models.

    Args:
        learning_rate: a float or scalar tensor.
        global_step: the global step variable (int64); its value + 1 is the step `t` of the
            closed-form update.
        initial_gradient_squared_accumulator_value: positive start of the squared sums.
        l1_regularization_strength, l2_regularization_strength: non-negative floats.

    Raises:
        ValueError: a non-positive initial accumulator value.

    Example: `tf.train.AdagradDAOptimizer(0.1, global_step).minimize(loss, global_step)`.
    """

    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = (
            initial_gradient_squared_accumulator_value)
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step
        self._global_step_on_worker = None

    def _create_slots(self, var_list):
        for var in var_list:
            shape = var.get_shape()
            dtype = var.dtype.base_dtype
            if shape.is_fully_defined():
                zeros = array_ops.zeros(shape.as_list(), dtype=dtype)
                squares = array_ops.fill(shape.as_list(), convert_to_tensor(
                    self._initial_gradient_squared_accumulator_value, dtype=dtype))
            else:
                zeros = array_ops.zeros_like(var.initialized_value())
                squares = zeros + convert_to_tensor(
                    self._initial_gradient_squared_accumulator_value, dtype=dtype)
            self._get_or_make_slot(var, zeros, "gradient_accumulator", self._name)
            self._get_or_make_slot(var, squares, "gradient_squared_accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        step = math_ops.cast(array_ops.identity(self._global_step), dtypes.int64)
        self._global_step_on_worker = step + 1

    def _scalars(self, var):
        dtype = var.dtype.base_dtype
        lr = self._learning_rate_tensor
        if lr.dtype.base_dtype != dtype:
            lr = math_ops.cast(lr, dtype)
        return (lr, convert_to_tensor(self._l1_regularization_strength, dtype=dtype),
                convert_to_tensor(self._l2_regularization_strength, dtype=dtype),
                self._global_step_on_worker)

    def _apply_dense(self, grad, var):
        return resource_training_ops.apply_update(
            ApplyAdagradDA, var, self.get_slot(var, "gradient_accumulator"),
            self.get_slot(var, "gradient_squared_accumulator"), grad, *self._scalars(var),
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return resource_training_ops.apply_update(
            SparseApplyAdagradDA, var, self.get_slot(var, "gradient_accumulator"),
            self.get_slot(var, "gradient_squared_accumulator"), grad.values, grad.indices,
            *self._scalars(var), use_locking=self._use_locking)
