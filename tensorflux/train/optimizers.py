"""The TF1 optimizers, each a small subclass of `Optimizer` over the `Apply*` update ops."""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import resource_training_ops, training_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.train.optimizer import Optimizer, _create_slot, _var_key

__all__ = ["GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer",
           "AdadeltaOptimizer", "RMSPropOptimizer", "AdamOptimizer", "FtrlOptimizer",
           "ProximalAdagradOptimizer", "ProximalGradientDescentOptimizer"]


def _update(op, *args, **attrs):
    """The update op `op(*args)`, or its Resource twin for a resource variable."""

    return resource_training_ops.apply_update(op, *args, **attrs)


def _cast(tensor, var):
    dtype = var.dtype.base_dtype
    return tensor if tensor.dtype.base_dtype == dtype else math_ops.cast(tensor, dtype)


class _HyperParams:
    """Converts named hyperparameters to tensors once per apply (in `_prepare`)."""

    def _tensors(self, **params):
        for name, value in params.items():
            setattr(self, f"_{name}_t", convert_to_tensor(self._call_if_callable(value),
                                                         name=name))


class GradientDescentOptimizer(Optimizer, _HyperParams):
    """var -= learning_rate * grad."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate)

    def _apply_dense(self, grad, var):
        return _update(training_ops.ApplyGradientDescent, var, _cast(self._learning_rate_t, var),
                       grad, use_locking=self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad, var):
        return self._apply_sparse(grad, var)

    def _apply_sparse(self, grad, var):
        delta = grad.values * _cast(self._learning_rate_t, var)
        return state_ops.scatter_sub(var, grad.indices, delta, use_locking=self._use_locking).op


class ProximalGradientDescentOptimizer(GradientDescentOptimizer):
    """Gradient descent with FOBOS-style l1/l2 shrinkage."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(learning_rate, use_locking, name)
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate, l1=self._l1, l2=self._l2)

    def _apply_dense(self, grad, var):
        return _update(training_ops.ApplyProximalGradientDescent, var,
                       _cast(self._learning_rate_t, var), _cast(self._l1_t, var),
                       _cast(self._l2_t, var), grad, use_locking=self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad, var):
        return Optimizer._apply_sparse_duplicate_indices(self, grad, var)

    def _apply_sparse(self, grad, var):
        rows = array_ops.gather(var, grad.indices)
        lr = _cast(self._learning_rate_t, var)
        prox = rows - lr * grad.values

        l1 = _cast(self._l1_t, var)
        l2 = _cast(self._l2_t, var)
        shrunk = math_ops.sign(prox) * math_ops.maximum(math_ops.abs(prox) - lr * l1, 0.0)
        return state_ops.scatter_update(var, grad.indices, shrunk / (1.0 + lr * l2),
                                        use_locking=self._use_locking).op


class MomentumOptimizer(Optimizer, _HyperParams):
    """accum = momentum * accum + grad; var -= lr * accum (or the Nesterov form)."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate, momentum=self._momentum)

    def _apply_dense(self, grad, var):
        return _update(training_ops.ApplyMomentum, var, self.get_slot(var, "momentum"),
                       _cast(self._learning_rate_t, var), grad, _cast(self._momentum_t, var),
                       use_locking=self._use_locking, use_nesterov=self._use_nesterov)

    def _apply_sparse(self, grad, var):
        return _update(training_ops.SparseApplyMomentum, var, self.get_slot(var, "momentum"),
                       _cast(self._learning_rate_t, var), grad.values, grad.indices,
                       _cast(self._momentum_t, var), use_locking=self._use_locking,
                       use_nesterov=self._use_nesterov)


def _constant_slot(optimizer, var, value, slot_name):
    named = optimizer._slot_dict(slot_name)
    key = _var_key(var)
    if key not in named:
        shape = var.get_shape()
        dtype = var.dtype.base_dtype
        initial = array_ops.fill(shape.as_list(), convert_to_tensor(value, dtype=dtype)) \
            if shape.is_fully_defined() else array_ops.ones_like(var.initialized_value()) * value

        named[key] = _create_slot(var, initial, optimizer._name)
    return named[key]


class AdagradOptimizer(Optimizer, _HyperParams):
    """accum += grad^2; var -= lr * grad / sqrt(accum)."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for var in var_list:
            _constant_slot(self, var, self._initial_accumulator_value, "accumulator")

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate)

    def _apply_dense(self, grad, var):
        return _update(training_ops.ApplyAdagrad, var, self.get_slot(var, "accumulator"),
                       _cast(self._learning_rate_t, var), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return _update(training_ops.SparseApplyAdagrad, var, self.get_slot(var, "accumulator"),
                       _cast(self._learning_rate_t, var), grad.values, grad.indices,
                       use_locking=self._use_locking)


class ProximalAdagradOptimizer(AdagradOptimizer):
    """Adagrad with l1/l2 proximal shrinkage."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        super().__init__(learning_rate, initial_accumulator_value, use_locking, name)
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate, l1=self._l1, l2=self._l2)

    def _apply_dense(self, grad, var):
        return _update(training_ops.ApplyProximalAdagrad, var, self.get_slot(var, "accumulator"),
                       _cast(self._learning_rate_t, var), _cast(self._l1_t, var),
                       _cast(self._l2_t, var), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return _update(training_ops.SparseApplyProximalAdagrad, var,
                       self.get_slot(var, "accumulator"), _cast(self._learning_rate_t, var),
                       _cast(self._l1_t, var), _cast(self._l2_t, var), grad.values, grad.indices,
                       use_locking=self._use_locking)


class AdadeltaOptimizer(Optimizer, _HyperParams):
    """Adadelta (Zeiler 2012)."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "accum", self._name)
            self._zeros_slot(var, "accum_update", self._name)

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate, rho=self._rho, epsilon=self._epsilon)

    def _args(self, var):
        return (var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
                _cast(self._learning_rate_t, var), _cast(self._rho_t, var),
                _cast(self._epsilon_t, var))

    def _apply_dense(self, grad, var):
        return _update(training_ops.ApplyAdadelta, *self._args(var), grad,
                       use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return _update(training_ops.SparseApplyAdadelta, *self._args(var), grad.values,
                       grad.indices, use_locking=self._use_locking)


class RMSPropOptimizer(Optimizer, _HyperParams):
    """RMSProp with optional momentum and centering (Hinton's lecture 6e)."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for var in var_list:
            _constant_slot(self, var, 1.0, "rms")
            if self._centered:
                self._zeros_slot(var, "mg", self._name)
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate, decay=self._decay,
                      momentum=self._momentum, epsilon=self._epsilon)

    def _hyper(self, var):
        return (_cast(self._learning_rate_t, var), _cast(self._decay_t, var),
                _cast(self._momentum_t, var), _cast(self._epsilon_t, var))

    def _apply_dense(self, grad, var):
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return _update(training_ops.ApplyCenteredRMSProp, var, self.get_slot(var, "mg"), rms,
                           mom, *self._hyper(var), grad, use_locking=self._use_locking)
        return _update(training_ops.ApplyRMSProp, var, rms, mom, *self._hyper(var), grad,
                       use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return _update(training_ops.SparseApplyCenteredRMSProp, var, self.get_slot(var, "mg"),
                           rms, mom, *self._hyper(var), grad.values, grad.indices,
                           use_locking=self._use_locking)
        return _update(training_ops.SparseApplyRMSProp, var, rms, mom, *self._hyper(var),
                       grad.values, grad.indices, use_locking=self._use_locking)


class AdamOptimizer(Optimizer, _HyperParams):
    """Adam (Kingma and Ba 2014) with bias-corrected step size."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self):
        return (self._get_non_slot_variable("beta1_power"),
                self._get_non_slot_variable("beta2_power"))

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(float(self._call_if_callable(self._beta1)),
                                       "beta1_power", first)
        self._create_non_slot_variable(float(self._call_if_callable(self._beta2)),
                                       "beta2_power", first)
        for var in var_list:
            self._zeros_slot(var, "m", self._name)
            self._zeros_slot(var, "v", self._name)

    def _prepare(self):
        self._tensors(learning_rate=self._lr, beta1=self._beta1, beta2=self._beta2,
                      epsilon=self._epsilon)

    def _apply_dense(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        return _update(training_ops.ApplyAdam, var, self.get_slot(var, "m"),
                       self.get_slot(var, "v"), _cast(beta1_power, var), _cast(beta2_power, var),
                       _cast(self._learning_rate_t, var), _cast(self._beta1_t, var),
                       _cast(self._beta2_t, var), _cast(self._epsilon_t, var), grad,
                       use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        graph = graph_mod.get_default_graph()
        beta1_power, beta2_power = self._get_beta_accumulators()
        beta1_power = _cast(beta1_power, var)
        beta2_power = _cast(beta2_power, var)
        lr_t = _cast(self._learning_rate_t, var)
        beta1_t = _cast(self._beta1_t, var)
        beta2_t = _cast(self._beta2_t, var)
        epsilon_t = _cast(self._epsilon_t, var)
        lr = lr_t * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        m = self.get_slot(var, "m")
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, grad.indices, grad.values * (1 - beta1_t),
                                        use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with graph.control_dependencies([v_t]):
            v_t = state_ops.scatter_add(v, grad.indices, grad.values * grad.values
                                        * (1 - beta2_t), use_locking=self._use_locking)
        var_update = state_ops.assign_sub(var, lr * m_t / (math_ops.sqrt(v_t) + epsilon_t),
                                          use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _finish(self, update_ops, name_scope):
        graph = graph_mod.get_default_graph()
        with graph.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with graph.colocate_with(beta1_power.op):
                update_beta1 = beta1_power.assign(beta1_power * self._beta1_t,
                                                  use_locking=self._use_locking)
                update_beta2 = beta2_power.assign(beta2_power * self._beta2_t,
                                                  use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)


class FtrlOptimizer(Optimizer, _HyperParams):
    """FTRL-proximal (McMahan et al. 2013), with optional l2 shrinkage."""

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} must be "
                             "non-negative")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} must be non-positive")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _create_slots(self, var_list):
        for var in var_list:
            _constant_slot(self, var, self._initial_accumulator_value, "accum")
            self._zeros_slot(var, "linear", self._linear_name or self._name)

    def _prepare(self):
        self._tensors(learning_rate=self._learning_rate, l1=self._l1, l2=self._l2,
                      l2_shrinkage=self._l2_shrinkage,
                      learning_rate_power=self._learning_rate_power)

    def _apply_dense(self, grad, var):
        slots = (self.get_slot(var, "accum"), self.get_slot(var, "linear"))
        hyper = (_cast(self._learning_rate_t, var), _cast(self._l1_t, var),
                 _cast(self._l2_t, var))
        power = _cast(self._learning_rate_power_t, var)
        if self._l2_shrinkage:
            return _update(training_ops.ApplyFtrlV2, var, *slots, grad, *hyper,
                           _cast(self._l2_shrinkage_t, var), power, use_locking=self._use_locking)
        return _update(training_ops.ApplyFtrl, var, *slots, grad, *hyper, power,
                       use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        slots = (self.get_slot(var, "accum"), self.get_slot(var, "linear"))
        hyper = (_cast(self._learning_rate_t, var), _cast(self._l1_t, var),
                 _cast(self._l2_t, var))
        power = _cast(self._learning_rate_power_t, var)
        if self._l2_shrinkage:
            return _update(training_ops.SparseApplyFtrlV2, var, *slots, grad.values, grad.indices,
                           *hyper, _cast(self._l2_shrinkage_t, var), power,
                           use_locking=self._use_locking)
        return _update(training_ops.SparseApplyFtrl, var, *slots, grad.values, grad.indices, *hyper,
                       power, use_locking=self._use_locking)
