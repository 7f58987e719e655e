"""`LazyAdamOptimizer`: Adam whose sparse updates touch only the rows in the gradient.

For an IndexedSlices gradient g over rows `idx` (duplicates summed first):
    m[idx] = beta1 * m[idx] + (1 - beta1) * g
    v[idx] = beta2 * v[idx] + (1 - beta2) * g ** 2
    var[idx] -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m[idx] / (sqrt(v[idx]) + epsilon)
Other rows of var, m and v are left as they are (plain Adam decays every row's moments).
Dense gradients use Adam's update unchanged.
"""

from __future__ import annotations

from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.train.optimizers import AdamOptimizer

__all__ = ["LazyAdamOptimizer"]


def _cast(value, var):
    return math_ops.cast(value, var.dtype.base_dtype)


class LazyAdamOptimizer(AdamOptimizer):
    """Adam with lazy (touched-rows-only) sparse updates; arguments as AdamOptimizer."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)

    def _apply_sparse(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        beta1_power = _cast(beta1_power, var)
        beta2_power = _cast(beta2_power, var)
        lr_t = _cast(self._learning_rate_t, var)
        beta1_t = _cast(self._beta1_t, var)
        beta2_t = _cast(self._beta2_t, var)
        epsilon_t = _cast(self._epsilon_t, var)
        lr = lr_t * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        indices, values = grad.indices, grad.values
        m = self.get_slot(var, "m")
        m_t = state_ops.scatter_update(
            m, indices, beta1_t * array_ops.gather(m, indices) + (1 - beta1_t) * values,
            use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_t = state_ops.scatter_update(
            v, indices,
            beta2_t * array_ops.gather(v, indices) + (1 - beta2_t) * math_ops.square(values),
            use_locking=self._use_locking)
        m_slice = array_ops.gather(m_t, indices)
        v_slice = array_ops.gather(v_t, indices)
        var_update = state_ops.scatter_sub(var, indices,
                                           lr * m_slice / (math_ops.sqrt(v_slice) + epsilon_t),
                                           use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)
