"""Loss scaling (TF 1.14/1.15 `tf.train.experimental.LossScale`): the loss is multiplied by a
scale before its gradients are taken and the gradients divided by it after, so small float16
gradients do not underflow. `DynamicLossScale` halves the scale when a step's gradients are not
finite (and that step is skipped) and doubles it after `increment_period` finite steps.
"""

from __future__ import annotations

import abc

from tensorflux.framework import dtypes, nest
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variables as variables_lib

__all__ = ["LossScale", "FixedLossScale", "DynamicLossScale", "get", "all_finite"]


class LossScale(abc.ABC):
    """A loss scale: `self()` is its current value; `update(grads)` returns
    `(update op, should_apply_gradients)`."""

    @abc.abstractmethod
    def __call__(self):
        """The current loss scale (a float32 scalar tensor)."""

    @abc.abstractmethod
    def update(self, grads):
        """(update op, should_apply_gradients) for this step's gradients."""

    def get_config(self) -> dict:
        return {}

    @property
    def _checkpoint_dependencies(self) -> list:
        """The variables a checkpoint keeps for this loss scale (none for a fixed one)."""
        return []

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class FixedLossScale(LossScale):
    """A constant loss scale; every step's gradients are applied.

    Raises:
        ValueError: a scale below 1.
    """

    def __init__(self, loss_scale_value):
        if not isinstance(loss_scale_value, (int, float)):
            raise ValueError(f"loss_scale_value must be a Python int or float, got "
                             f"{loss_scale_value!r}")
        if loss_scale_value < 1:
            raise ValueError(f"loss_scale_value must be at least 1, got {loss_scale_value}")
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self):
        return math_ops.cast(self._loss_scale_value, dtypes.float32)

    def update(self, grads):
        return control_flow_ops.no_op(), True

    def get_config(self) -> dict:
        return {"loss_scale_value": self._loss_scale_value}

    def __repr__(self) -> str:
        return f"FixedLossScale({self._loss_scale_value})"


def all_finite(grads):
    """A scalar bool: every (dense or sparse) gradient in `grads` is finite.

    `grads` is any nested structure of gradients (one tensor, a list, a dict, ...); `None`
    entries are skipped.
    """
    checks = []
    for grad in nest.flatten(grads):
        if grad is None:
            continue
        values = grad.values if isinstance(grad, IndexedSlices) else grad
        checks.append(math_ops.reduce_all(math_ops.is_finite(values)))
    if not checks:
        return math_ops.cast(True, dtypes.bool_)
    result = checks[0]
    for flag in checks[1:]:
        result = math_ops.logical_and(result, flag)
    return result


class DynamicLossScale(LossScale):
    """A loss scale that adapts: halved (not below 1) after a step with non-finite gradients,
    which is skipped; multiplied by `multiplier` after `increment_period` finite steps.

    Raises:
        ValueError: a multiplier of at most 1, or an increment period below 1.
    """

    def __init__(self, initial_loss_scale=2 ** 15, increment_period=2000, multiplier=2.0):
        if multiplier <= 1:
            raise ValueError(f"multiplier must be greater than 1, got {multiplier}")
        if increment_period < 1:
            raise ValueError(f"increment_period must be at least 1, got {increment_period}")
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        graph = graph_mod.get_default_graph()
        with graph.name_scope(None):
            self._current_loss_scale = variables_lib.Variable(
                self._initial_loss_scale, name="current_loss_scale", dtype=dtypes.float32,
                trainable=False, aggregation=variables_lib.VariableAggregation.ONLY_FIRST_REPLICA)
            self._num_good_steps = variables_lib.Variable(
                0, name="good_steps", dtype=dtypes.int64, trainable=False,
                aggregation=variables_lib.VariableAggregation.ONLY_FIRST_REPLICA)

    @property
    def _checkpoint_dependencies(self) -> list:
        return [("current_loss_scale", self._current_loss_scale),
                ("good_steps", self._num_good_steps)]

    @property
    def initial_loss_scale(self) -> float:
        return self._initial_loss_scale

    @property
    def increment_period(self) -> int:
        return self._increment_period

    @property
    def multiplier(self) -> float:
        return self._multiplier

    def __call__(self):
        return self._current_loss_scale.read_value()

    def update(self, grads):
        finite = all_finite(grads)
        scale, good = self._current_loss_scale, self._num_good_steps

        def grow_or_count():
            def grow():
                bigger = scale * self._multiplier
                kept = control_flow_ops.cond(math_ops.is_finite(bigger),
                                             lambda: state_ops.assign(scale, bigger).op,
                                             control_flow_ops.no_op)
                return control_flow_ops.group(kept, state_ops.assign(good, 0))

            return control_flow_ops.cond(good + 1 >= self._increment_period, grow,
                                         lambda: state_ops.assign_add(good, 1).op)

        def shrink():
            smaller = math_ops.maximum(scale / self._multiplier, 1.0)
            return control_flow_ops.group(state_ops.assign(good, 0),
                                          state_ops.assign(scale, smaller))

        return control_flow_ops.cond(finite, grow_or_count, shrink), finite

    def get_config(self) -> dict:
        return {"initial_loss_scale": self._initial_loss_scale,
                "increment_period": self._increment_period, "multiplier": self._multiplier}

    def __repr__(self) -> str:
        return (f"DynamicLossScale(initial_loss_scale={self._initial_loss_scale}, "
                f"increment_period={self._increment_period}, multiplier={self._multiplier})")


def get(identifier):
    """A LossScale from a number (fixed), "dynamic", None, or a LossScale.

    Raises:
        ValueError: any other identifier.
    """
    if isinstance(identifier, (int, float)) and not isinstance(identifier, bool):
        return FixedLossScale(identifier)
    if identifier == "dynamic":
        return DynamicLossScale()
    if identifier is None or isinstance(identifier, LossScale):
        return identifier
    raise ValueError(f"Could not interpret loss scale identifier: {identifier!r}")
