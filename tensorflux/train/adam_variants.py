"""Variants of Adam: AdaMax (infinity-norm second moment), Nadam as Adam with a Nesterov step
(`tf.contrib.opt.AdaMaxOptimizer`, `tf.contrib.opt.NadamOptimizer`) and Keras' Nadam with its
momentum schedule (`tf.keras.optimizers.Nadam`).

AdaMax, per step t (beta1_power = beta1^t):
    m = beta1 m + (1 - beta1) g;  v = max(beta2 v, |g|)
    var -= lr / (1 - beta1_power) * m / (v + epsilon)
Sparse gradients update m in every row (decayed) but v and var only in the touched rows.

Keras' Nadam (Dozat 2016): with mu_t = beta1 (1 - 0.5 * 0.96^(0.004 t)) and the running product
M_t = mu_1 ... mu_t (the non-slot "momentum_cache"):
    g' = g / (1 - M_t);  m = beta1 m + (1 - beta1) g;  m' = m / (1 - M_t mu_{t+1})
    v = beta2 v + (1 - beta2) g^2;  v' = v / (1 - beta2^t)
    var -= lr * ((1 - mu_t) g' + mu_{t+1} m') / (sqrt(v') + epsilon)
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import resource_training_ops, training_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.train.optimizer import Optimizer
from tensorflux.train.optimizers import AdamOptimizer, _cast, _HyperParams

__all__ = ["AdaMaxOptimizer", "NadamOptimizer", "ScheduledNadamOptimizer"]


class AdaMaxOptimizer(AdamOptimizer):
    """AdaMax (Kingma and Ba 2014, section 7): Adam with an infinity-norm second moment."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="AdaMax"):
        super().__init__(learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)

    def _hyper(self, var):
        beta1_power, _ = self._get_beta_accumulators()
        return (_cast(beta1_power, var), _cast(self._learning_rate_t, var),
                _cast(self._beta1_t, var), _cast(self._beta2_t, var),
                _cast(self._epsilon_t, var))

    def _apply_dense(self, grad, var):
        beta1_power, lr, beta1, beta2, epsilon = self._hyper(var)
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        m_t = state_ops.assign(m, beta1 * m + (1 - beta1) * grad, use_locking=self._use_locking)
        v_t = state_ops.assign(v, math_ops.maximum(beta2 * v, math_ops.abs(grad)),
                               use_locking=self._use_locking)
        step = lr / (1 - beta1_power) * m_t / (v_t + epsilon)
        var_update = state_ops.assign_sub(var, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _apply_sparse(self, grad, var):
        graph = graph_mod.get_default_graph()
        beta1_power, lr, beta1, beta2, epsilon = self._hyper(var)
        indices, values = grad.indices, grad.values
        m = self.get_slot(var, "m")
        m_t = state_ops.assign(m, m * beta1, use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, indices, values * (1 - beta1),
                                        use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_rows = math_ops.maximum(array_ops.gather(v, indices) * beta2, math_ops.abs(values))
        v_t = state_ops.scatter_update(v, indices, v_rows, use_locking=self._use_locking)
        step = lr / (1 - beta1_power) * array_ops.gather(m_t, indices) / (v_rows + epsilon)
        var_update = state_ops.scatter_sub(var, indices, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _resource_apply_dense(self, grad, var):
        return self._apply_dense(grad, var)


class NadamOptimizer(AdamOptimizer):
    """Adam with a Nesterov momentum step (`tf.contrib.opt.NadamOptimizer`)."""

    def _apply_dense(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        return resource_training_ops.apply_update(
            training_ops.ApplyAdam, var, self.get_slot(var, "m"), self.get_slot(var, "v"),
            _cast(beta1_power, var), _cast(beta2_power, var), _cast(self._learning_rate_t, var),
            _cast(self._beta1_t, var), _cast(self._beta2_t, var), _cast(self._epsilon_t, var),
            grad, use_locking=self._use_locking, use_nesterov=True)

    def _apply_sparse(self, grad, var):
        graph = graph_mod.get_default_graph()
        beta1_power, beta2_power = self._get_beta_accumulators()
        beta1, beta2 = _cast(self._beta1_t, var), _cast(self._beta2_t, var)
        epsilon = _cast(self._epsilon_t, var)
        lr = _cast(self._learning_rate_t, var) * math_ops.sqrt(
            1 - _cast(beta2_power, var)) / (1 - _cast(beta1_power, var))
        indices, values = grad.indices, grad.values
        m = self.get_slot(var, "m")
        scaled = values * (1 - beta1)
        m_t = state_ops.assign(m, m * beta1, use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, indices, scaled, use_locking=self._use_locking)
            m_bar = scaled + beta1 * array_ops.gather(m_t, indices)
        v = self.get_slot(var, "v")
        v_t = state_ops.assign(v, v * beta2, use_locking=self._use_locking)
        with graph.control_dependencies([v_t]):
            v_t = state_ops.scatter_add(v, indices, values * values * (1 - beta2),
                                        use_locking=self._use_locking)
        step = lr * m_bar / (math_ops.sqrt(array_ops.gather(v_t, indices)) + epsilon)
        var_update = state_ops.scatter_sub(var, indices, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _resource_apply_dense(self, grad, var):
        return self._apply_dense(grad, var)


class ScheduledNadamOptimizer(Optimizer, _HyperParams):
    """Keras' Nadam: Nesterov Adam with the momentum schedule mu_t (module docstring)."""

    _DECAY_BASE = 0.96
    _SCHEDULE_DECAY = 0.004

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-7,
                 use_locking=False, name="Nadam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(1.0, "momentum_cache", first)
        self._create_non_slot_variable(0.0, "iterations", first)
        for var in var_list:
            self._zeros_slot(var, "m", self._name)
        for var in var_list:
            self._zeros_slot(var, "v", self._name)

    def _prepare(self):
        self._tensors(learning_rate=self._lr, beta1=self._beta1, beta2=self._beta2,
                      epsilon=self._epsilon)
        iterations = self._get_non_slot_variable("iterations")
        cache = self._get_non_slot_variable("momentum_cache")
        local_step = iterations + 1.0
        self._mu_t = self._beta1_t * (1.0 - 0.5 * math_ops.pow(
            self._DECAY_BASE, self._SCHEDULE_DECAY * local_step))
        self._mu_next = self._beta1_t * (1.0 - 0.5 * math_ops.pow(
            self._DECAY_BASE, self._SCHEDULE_DECAY * (local_step + 1.0)))
        self._schedule_new = cache * self._mu_t
        self._schedule_next = self._schedule_new * self._mu_next
        self._beta2_power = math_ops.pow(self._beta2_t, local_step)

    def _coefficients(self, var):
        return {name: _cast(t, var) for name, t in (
            ("lr", self._learning_rate_t), ("beta1", self._beta1_t), ("beta2", self._beta2_t),
            ("epsilon", self._epsilon_t), ("mu_t", self._mu_t), ("mu_next", self._mu_next),
            ("new", self._schedule_new), ("next", self._schedule_next),
            ("beta2_power", self._beta2_power))}

    def _apply_dense(self, grad, var):
        c = self._coefficients(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = grad / (1.0 - c["new"])
        m_t = state_ops.assign(m, c["beta1"] * m + (1.0 - c["beta1"]) * grad,
                               use_locking=self._use_locking)
        v_t = state_ops.assign(v, c["beta2"] * v + (1.0 - c["beta2"]) * math_ops.square(grad),
                               use_locking=self._use_locking)
        m_bar = (1.0 - c["mu_t"]) * g_prime + c["mu_next"] * m_t / (1.0 - c["next"])
        v_prime = v_t / (1.0 - c["beta2_power"])
        step = c["lr"] * m_bar / (math_ops.sqrt(v_prime) + c["epsilon"])
        var_update = state_ops.assign_sub(var, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _apply_sparse(self, grad, var):
        graph = graph_mod.get_default_graph()
        c = self._coefficients(var)
        indices, values = grad.indices, grad.values
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = values / (1.0 - c["new"])
        m_t = state_ops.assign(m, m * c["beta1"], use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, indices, values * (1.0 - c["beta1"]),
                                        use_locking=self._use_locking)
        v_t = state_ops.assign(v, v * c["beta2"], use_locking=self._use_locking)
        with graph.control_dependencies([v_t]):
            v_t = state_ops.scatter_add(v, indices, math_ops.square(values)
                                        * (1.0 - c["beta2"]), use_locking=self._use_locking)
        m_bar = (1.0 - c["mu_t"]) * g_prime + c["mu_next"] * array_ops.gather(m_t, indices) \
            / (1.0 - c["next"])
        v_prime = array_ops.gather(v_t, indices) / (1.0 - c["beta2_power"])
        step = c["lr"] * m_bar / (math_ops.sqrt(v_prime) + c["epsilon"])
        var_update = state_ops.scatter_sub(var, indices, step, use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _resource_apply_dense(self, grad, var):
        return self._apply_dense(grad, var)

    def _finish(self, update_ops, name_scope):
        graph = graph_mod.get_default_graph()
        with graph.control_dependencies(update_ops):
            cache = self._get_non_slot_variable("momentum_cache")
            iterations = self._get_non_slot_variable("iterations")
            with graph.colocate_with(cache.op):
                update_cache = cache.assign(self._schedule_new, use_locking=self._use_locking)
                update_step = iterations.assign_add(1.0, use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops, update_cache, update_step, name=name_scope)
