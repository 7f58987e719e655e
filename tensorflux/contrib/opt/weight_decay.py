"""Decoupled weight decay (Loshchilov and Hutter 2017): AdamWOptimizer, MomentumWOptimizer,
`extend_with_decoupled_weight_decay`.

Before each variable's update, `var -= weight_decay * var` (not scaled by the learning rate,
as in TF 1.15); only the variables of `decay_var_list` when one is given to minimize /
apply_gradients.
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.train.optimizer import Optimizer
from tensorflux.train.optimizers import AdamOptimizer, MomentumOptimizer

__all__ = ["DecoupledWeightDecayExtension", "extend_with_decoupled_weight_decay",
           "AdamWOptimizer", "MomentumWOptimizer"]


class DecoupledWeightDecayExtension:
    """Mixin (listed before an Optimizer class) adding decoupled weight decay."""

    def __init__(self, weight_decay, **kwargs):
        self._decay_var_list = None
        self._weight_decay = weight_decay
        self._weight_decay_tensor = None
        super().__init__(**kwargs)

    def minimize(self, loss, global_step=None, var_list=None,
                 gate_gradients=Optimizer.GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None,
                 decay_var_list=None):
        """As Optimizer.minimize; `decay_var_list` limits the decay to those variables."""
        self._decay_var_list = set(decay_var_list) if decay_var_list else None
        return super().minimize(loss, global_step=global_step, var_list=var_list,
                                gate_gradients=gate_gradients,
                                aggregation_method=aggregation_method,
                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                name=name, grad_loss=grad_loss)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None,
                        decay_var_list=None):
        """As Optimizer.apply_gradients; `decay_var_list` limits the decay."""
        if decay_var_list:
            self._decay_var_list = set(decay_var_list)
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self):
        decay = self._weight_decay() if callable(self._weight_decay) else self._weight_decay
        self._weight_decay_tensor = convert_to_tensor(decay, name="weight_decay")
        super()._prepare()

    def _decays(self, var) -> bool:
        return not self._decay_var_list or var in self._decay_var_list

    def _apply_dense(self, grad, var):
        if not self._decays(var):
            return super()._apply_dense(grad, var)
        decay = math_ops.cast(self._weight_decay_tensor, var.dtype.base_dtype)
        decay_op = state_ops.assign_sub(var, decay * var, use_locking=self._use_locking)
        with graph_mod.get_default_graph().control_dependencies([decay_op]):
            return super()._apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        if not self._decays(var):
            return super()._apply_sparse(grad, var)
        decay = math_ops.cast(self._weight_decay_tensor, var.dtype.base_dtype)
        decay_op = state_ops.scatter_add(var, grad.indices,
                                         -decay * array_ops.gather(var, grad.indices),
                                         use_locking=self._use_locking)
        with graph_mod.get_default_graph().control_dependencies([decay_op]):
            return control_flow_ops.group(super()._apply_sparse(grad, var))


def extend_with_decoupled_weight_decay(base_optimizer):
    """A subclass of `base_optimizer` taking `weight_decay` as its first argument.

    Example:
        >>> MyAdamW = extend_with_decoupled_weight_decay(tf.train.AdamOptimizer)
        >>> opt = MyAdamW(weight_decay=1e-4, learning_rate=1e-3)
    """
    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecayExtension, base_optimizer):
        def __init__(self, weight_decay, *args, **kwargs):
            if args:
                kwargs.update(zip(_positional_names(base_optimizer), args))
            super().__init__(weight_decay, **kwargs)

    OptimizerWithDecoupledWeightDecay.__name__ = base_optimizer.__name__ + "WithDecay"
    return OptimizerWithDecoupledWeightDecay


def _positional_names(cls):
    import inspect

    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


class AdamWOptimizer(DecoupledWeightDecayExtension, AdamOptimizer):
    """Adam with decoupled weight decay."""

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, use_locking=False, name="AdamW"):
        super().__init__(weight_decay, learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)


class MomentumWOptimizer(DecoupledWeightDecayExtension, MomentumOptimizer):
    """Momentum with decoupled weight decay."""

    def __init__(self, weight_decay, learning_rate, momentum, use_locking=False,
                 name="MomentumW", use_nesterov=False):
        super().__init__(weight_decay, learning_rate=learning_rate, momentum=momentum,
                         use_locking=use_locking, name=name, use_nesterov=use_nesterov)
