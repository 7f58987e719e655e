"""Exponential moving averages of variables (TF1 `tf.train.ExponentialMovingAverage`)."""

from __future__ import annotations

import contextlib

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import init_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state.variables import Variable

__all__ = ["ExponentialMovingAverage", "assign_moving_average", "weighted_moving_average"]


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """variable -= (1 - decay) * (variable - value); returns the updated reference.

    With `zero_debias` the average of a zero-initialised variable is bias-corrected as in
    Adam: a biased accumulator and a step counter are kept next to the variable.
    """

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "AssignMovingAvg") as scope:
        with graph.colocate_with(variable.op):
            decay = math_ops.cast(convert_to_tensor(decay), variable.dtype.base_dtype)
            value = convert_to_tensor(value, dtype=variable.dtype.base_dtype)
            if not zero_debias:
                update = (variable - value) * (1.0 - decay)
                return state_ops.assign_sub(variable, update, name=scope)
            with init_scope(), graph.name_scope(None):
                biased = Variable(graph_mod_zeros(variable), trainable=False,
                                  name=f"{variable.op.name}/biased")
                local_step = Variable(0.0, trainable=False, dtype=variable.dtype.base_dtype,
                                      name=f"{variable.op.name}/local_step")
            update_biased = state_ops.assign_sub(biased, (biased - value) * (1.0 - decay))
            update_step = state_ops.assign_add(local_step, 1.0)
            unbiased = update_biased / (1.0 - math_ops.pow(decay, update_step))
            return state_ops.assign(variable, unbiased, name=scope)


def weighted_moving_average(value, decay, weight, truediv=True, collections=None, name=None):
    """Moving average of `value` weighted by `weight`: avg(value * weight) / avg(weight).

    Two zero-initialised, non-trainable variables `<scope>/value_x_weight` and
    `<scope>/weight` (in `collections`, default the global variables) hold the averages,
    updated by each run of the returned tensor.

    Args:
        value, weight: tensors of the same dtype; `weight` broadcasts against `value`.
        decay: the averages' decay.
        truediv: true division of the two averages (else TF1 `div`).
        collections: the graph collections of the two variables.
        name: scope name, default "WeightedMovingAvg".

    Returns:
        The weighted average after this update.
    """
    if collections is None:
        collections = [GraphKeys.GLOBAL_VARIABLES]
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "WeightedMovingAvg") as scope:
        value = convert_to_tensor(value, name="value")
        weight = convert_to_tensor(weight, dtype=value.dtype.base_dtype, name="weight")
        for what, tensor in (("value", value), ("weight", weight)):
            if not tensor.get_shape().is_fully_defined():
                raise ValueError(f"weighted_moving_average needs a fully defined shape for "
                                 f"{what}, got {tensor.get_shape()}")
        with init_scope(), graph.name_scope(None):
            value_x_weight_var = Variable(graph_mod_zeros(value), trainable=False,
                                          collections=collections,
                                          name=f"{scope}value_x_weight")
            weight_var = Variable(graph_mod_zeros(weight), trainable=False,
                                  collections=collections, name=f"{scope}weight")
        numerator = assign_moving_average(value_x_weight_var, value * weight, decay,
                                          zero_debias=False)
        denominator = assign_moving_average(weight_var, weight, decay, zero_debias=False)
        divide = math_ops.truediv if truediv else math_ops.div
        return divide(numerator, denominator, name=scope[:-1])


_VARIABLE_OP_TYPES = ("Variable", "VariableV2", "VarHandleOp")


def graph_mod_zeros(variable):
    shape = variable.get_shape()
    if shape.is_fully_defined():
        return array_ops.zeros(shape.as_list(), dtype=variable.dtype.base_dtype)
    if hasattr(variable, "initialized_value"):
        return array_ops.zeros_like(variable.initialized_value())
    return array_ops.zeros_like(variable)


class ExponentialMovingAverage:
    """Maintains shadow variables `<var>/<name>` = decay * shadow + (1 - decay) * var."""

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None):
        """Creates shadows (once) and returns an op updating them all."""

        graph = graph_mod.get_default_graph()
        if var_list is None:
            var_list = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        for var in var_list:
            if not var.dtype.base_dtype.is_floating:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            key = _key(var)
            if key in self._averages:
                continue
            # NOTE: init_scope, as TF: a shadow created under control dependencies (e.g. after
            # a train op) must not make its initializer run them.
            # A variable's shadow lives with it and starts at its value; a plain tensor's
            # starts at zeros and is placed by the device scope in force (as TF's slots).
            is_variable = hasattr(var, "initialized_value")
            colocate = is_variable or var.op.type in _VARIABLE_OP_TYPES
            with init_scope(), graph.name_scope(None), \
                    (graph.colocate_with(var.op) if colocate else contextlib.nullcontext()):
                initial = var.initialized_value() if is_variable else graph_mod_zeros(var)
                shadow = Variable(initial, trainable=False, name=f"{_op_name(var)}/{self._name}")
            self._averages[key] = shadow
            if hasattr(var, "initializer"):
                graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
        with graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                updates = math_ops.cast(self._num_updates, decay.dtype)
                decay = math_ops.minimum(decay, (1.0 + updates) / (10.0 + updates))
            ops = []
            for var in var_list:
                ops.append(assign_moving_average(self._averages[_key(var)], var, decay,
                                                 zero_debias=self._zero_debias))
            return control_flow_ops.group(*ops, name=scope)

    def average(self, var):
        return self._averages.get(_key(var))

    def average_name(self, var) -> str:
        if _key(var) in self._averages:
            return self._averages[_key(var)].op.name
        return f"{_op_name(var)}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """{checkpoint name: variable}: averaged variables restore from their shadows."""
        graph = graph_mod.get_default_graph()
        if moving_avg_variables is None:
            moving_avg_variables = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
            moving_avg_variables += graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES)
        result = {self.average_name(var): var for var in moving_avg_variables}
        averaged = {_key(v) for v in moving_avg_variables}
        # Every other global variable restores under its own name, unless that name is
        # already taken by an averaged variable's shadow: so a Tensor's shadow (it averages no
        # variable) restores itself.
        for var in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if _key(var) not in averaged and var.op.name not in result:
                result[var.op.name] = var
        return result


def _op_name(var) -> str:
    return var.op.name


def _key(var) -> str:
    return var.op.name
