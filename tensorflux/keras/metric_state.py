"""Stateful Keras metric objects (TF 1.13+ `tf.keras.metrics.Metric`) in graph mode.

A metric keeps non-trainable state variables (e.g. `total` and `count`); `update_state(...)`
returns the op that accumulates a batch, `result()` the tensor of the value so far and
`reset_states()` zeroes the state in the Keras session. Calling the metric
(`metric(y_true, y_pred)`) updates it and returns the result after that update.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import scopes, tensor_conversion
from tensorflux.keras import backend
from tensorflux.keras.engine.base_layer import Layer
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.state import variable_ops as state_variable_ops

__all__ = ["Metric", "Reduce", "Sum", "Mean", "MeanMetricWrapper", "broadcast_weights"]


def broadcast_weights(weights, values):
    """`weights` (cast to `values`' dtype) squeezed or expanded by trailing axes to the rank
    of `values`, then broadcast to its shape."""
    weights = math_ops.cast(weights, values.dtype.base_dtype)
    w_rank, v_rank = weights.get_shape().ndims, values.get_shape().ndims
    if w_rank is not None and v_rank is not None:
        if w_rank == v_rank + 1 and weights.get_shape().as_list()[-1] == 1:
            weights = array_ops.squeeze(weights, [-1])
        while 0 < w_rank < v_rank:
            weights = array_ops.expand_dims(weights, -1)
            w_rank += 1
    return weights * array_ops.ones_like(values)


class Metric(Layer):
    """Base of stateful metrics: subclasses create state with `add_weight` in `__init__` and
    define `update_state(...)` (returning an op) and `result()`.

    Args:
        name: the metric's name (its variables live under it).
        dtype: the dtype of the state and result (default floatx).
    """

    def __init__(self, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.stateful = True
        self.built = True

    def add_weight(self, name, shape=(), aggregation=None, synchronization=None,
                   initializer=None, dtype=None):
        """A non-trainable state variable `<metric name>/<name>` (zeros by default)."""
        scope = self.__dict__.get("_weight_scope") or self.name
        with scopes.name_scope(scope) as opened:
            self.__dict__["_weight_scope"] = opened  # later weights re-enter the same scope
            return super().add_weight(name=name, shape=shape, dtype=dtype or self.dtype,
                                      initializer=initializer or "zeros", trainable=False)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Must be implemented in subclasses.")

    def result(self):
        raise NotImplementedError("Must be implemented in subclasses.")

    def reset_states(self):
        """Sets every state variable to zero (in the Keras session)."""
        backend.batch_set_value([
            (v, np.zeros(v.get_shape().as_list(), dtype=v.dtype.base_dtype.as_numpy_dtype))
            for v in self.variables])

    def __call__(self, *args, **kwargs):
        """Updates the state with this batch and returns the result after the update."""
        with scopes.name_scope(self.name):
            update = self.update_state(*args, **kwargs)
            with scopes.control_dependencies([update]):
                return array_ops.identity(self.result())

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _assign_add(self, variable, value):
        return state_variable_ops.assign_add(variable, math_ops.cast(value, variable.dtype))


class Reduce(Metric):
    """Reduces all values seen to their (weighted) sum or mean (`reduction` 'sum' or
    'weighted_mean')."""

    def __init__(self, reduction, name, dtype=None):
        if reduction not in ("sum", "weighted_mean", "sum_over_batch_size"):
            raise ValueError(f"Unsupported reduction {reduction!r}.")
        super().__init__(name=name, dtype=dtype)
        self.reduction = reduction
        self.total = self.add_weight("total")
        self.count = None if reduction == "sum" else self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        """Adds `values` (weighted by `sample_weight`, broadcast to their shape)."""
        values = math_ops.cast(tensor_conversion.convert_to_tensor(values), self.dtype)
        if sample_weight is not None:
            weights = broadcast_weights(sample_weight, values)
            values = values * weights
        updates = [self._assign_add(self.total, math_ops.reduce_sum(values))]
        if self.count is not None:
            if sample_weight is not None and self.reduction == "weighted_mean":
                amount = math_ops.reduce_sum(weights)
            else:
                amount = array_ops.size(values)
            updates.append(self._assign_add(self.count, amount))
        return control_flow_primitives.group(*updates)

    def result(self):
        if self.count is None:
            return array_ops.identity(self.total)
        return math_ops.div_no_nan(self.total, self.count)


class Sum(Reduce):
    """The (weighted) sum of all values seen."""

    def __init__(self, name="sum", dtype=None):
        super().__init__("sum", name=name, dtype=dtype)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


class Mean(Reduce):
    """The (weighted) mean of all values seen: sum(values * w) / sum(w)."""

    def __init__(self, name="mean", dtype=None):
        super().__init__("weighted_mean", name=name, dtype=dtype)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


class MeanMetricWrapper(Mean):
    """The weighted mean of `fn(y_true, y_pred, **kwargs)` over all samples seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tensor_conversion.convert_to_tensor(y_pred)
        y_true = tensor_conversion.convert_to_tensor(y_true)
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        return dict(self._fn_kwargs, name=self.name, dtype=self.dtype)
