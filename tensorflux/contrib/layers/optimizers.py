"""`optimize_loss`: the contrib.layers one-call training op (TF 1.15 semantics).

Order of work: UPDATE_OPS run before the loss; the learning rate (float -> non-trainable
variable `OptimizeLoss/learning_rate`, or a 0-d tensor) is decayed by
`learning_rate_decay_fn(lr, global_step)`; gradients get noise, multipliers and clipping (by
global norm for a float, or a function of the (grad, var) list); summaries are added; the
result is the loss tensor depending on the apply op.
"""

from __future__ import annotations

from tensorflux import summary
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.math import clip as clip_ops
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.state import variable_scope as vs
from tensorflux.ops.state import variables as variables_mod
from tensorflux.ops.state.initializers import constant_initializer
from tensorflux.train import optimizers as optimizers_mod
from tensorflux.train import training_util
from tensorflux.train.optimizer import Optimizer

__all__ = ["optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES"]

OPTIMIZER_CLS_NAMES = {
    "Adagrad": optimizers_mod.AdagradOptimizer,
    "Adam": optimizers_mod.AdamOptimizer,
    "Ftrl": optimizers_mod.FtrlOptimizer,
    "Momentum": lambda learning_rate: optimizers_mod.MomentumOptimizer(learning_rate,
                                                                       momentum=0.9),
    "RMSProp": optimizers_mod.RMSPropOptimizer,
    "SGD": optimizers_mod.GradientDescentOptimizer,
}

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm",
                       "global_gradient_norm"]


def _learning_rate(learning_rate):
    if learning_rate is None:
        return None
    if isinstance(learning_rate, Tensor) and learning_rate.get_shape().ndims == 0:
        return learning_rate
    if isinstance(learning_rate, float):
        if learning_rate < 0.0:
            raise ValueError(f"Invalid learning_rate {learning_rate}.")
        return vs.get_variable("learning_rate", [], trainable=False,
                               initializer=constant_initializer(learning_rate))
    raise ValueError(f"Learning rate should be 0d Tensor or float. Got {learning_rate} of type "
                     f"{type(learning_rate)}")


def _make_optimizer(optimizer, lr, learning_rate):
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is "
                             f"string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}"
                             f"], you provided {optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is "
                             f"class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of "
                             f"Optimizer. Got {opt}.")
        return opt
    raise ValueError(f"Unrecognized optimizer: should be string, subclass of Optimizer, instance "
                     f"of subclass of Optimizer or function with one argument. Got {optimizer}.")


def _values(grad):
    return grad.values if isinstance(grad, IndexedSlices) else grad


def _add_noise(grads_and_vars, scale):
    noisy = []
    for grad, var in grads_and_vars:
        if grad is None:
            noisy.append((None, var))
            continue
        shape = grad.dense_shape if isinstance(grad, IndexedSlices) else array_ops.shape(grad)
        noisy.append((grad + random_ops.truncated_normal(shape) * scale, var))
    return noisy


def _multiply(grads_and_vars, multipliers):
    result = []
    for grad, var in grads_and_vars:
        key = var if var in multipliers else var.name if var.name in multipliers else None
        if grad is not None and key is not None:
            factor = multipliers[key]
            if isinstance(grad, IndexedSlices):
                grad = IndexedSlices(grad.values * factor, grad.indices, grad.dense_shape)
            else:
                grad = grad * convert_to_tensor(factor, dtype=grad.dtype)
        result.append((grad, var))
    return result


def _global_norm(grads_and_vars):
    return clip_ops.global_norm([g for g, _ in grads_and_vars if g is not None])


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None, learning_rate_decay_fn=None,
                  update_ops=None, variables=None, name=None, summaries=None,
                  colocate_gradients_with_ops=False, increment_global_step=True):
    """Builds the ops that train `loss`; returns the loss computed after the update.

    Args:
        loss: a scalar tensor.
        global_step: the global step (None: `tf.train.get_global_step()`).
        learning_rate: a float or 0-d tensor (None when `optimizer` needs none).
        optimizer: "SGD", "Adam", "Adagrad", "Ftrl", "Momentum", "RMSProp"; an Optimizer
            subclass (built with `learning_rate=`); an instance; or `fn(lr) -> Optimizer`.
        gradient_noise_scale: adds truncated-normal noise times this to every gradient.
        gradient_multipliers: {variable or variable name: factor}.
        clip_gradients: a float (clip by global norm) or `fn(grads_and_vars)`.
        learning_rate_decay_fn: `fn(learning_rate, global_step) -> decayed rate`.
        update_ops: ops run before the loss (default: the UPDATE_OPS collection).
        variables: variables to train (default: trainable variables).
        name: the variable scope (default "OptimizeLoss").
        summaries: subset of OPTIMIZER_SUMMARIES (default loss, learning_rate,
            global_gradient_norm).
        colocate_gradients_with_ops: passed to compute_gradients.
        increment_global_step: increment `global_step` with the update.

    Returns:
        The train tensor (the loss value, after the update has run).

    Raises:
        ValueError: a non-scalar loss, bad learning rate, optimizer, summary name,
            clip_gradients, or missing global step for a decay function.
    """
    loss = convert_to_tensor(loss)
    if loss.get_shape().ndims not in (None, 0):
        raise ValueError(f"Expected scalar shape for {loss.name}, saw shape: "
                         f"{loss.get_shape()}.")
    if global_step is None:
        global_step = training_util.get_global_step()
    else:
        training_util.assert_global_step(global_step)
    with vs.variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = list(dict.fromkeys(graph_mod.get_collection(GraphKeys.UPDATE_OPS)))
        if update_ops:
            loss = control_flow_ops.with_dependencies(list(update_ops), loss)
        lr = _learning_rate(learning_rate)
        if summaries is None:
            summaries = ["loss", "learning_rate", "global_gradient_norm"]
        for summ in summaries:
            if summ not in OPTIMIZER_SUMMARIES:
                raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}"
                                 f"], you provided {summ}.")
        if lr is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
        if lr is not None and "learning_rate" in summaries:
            summary.scalar("learning_rate", lr)
        opt = _make_optimizer(optimizer, lr, learning_rate)
        if variables is None:
            variables = variables_mod.trainable_variables()
        gradients = opt.compute_gradients(
            loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gradient_noise_scale is not None:
            gradients = _add_noise(gradients, gradient_noise_scale)
        if gradient_multipliers is not None:
            gradients = _multiply(gradients, gradient_multipliers)
            if not gradients:
                raise ValueError("Empty list of (gradient, var) pairs encountered. This is most "
                                 "likely to be caused by an improper value of "
                                 "gradient_multipliers.")
        norms_wanted = "global_gradient_norm" in summaries or "gradient_norm" in summaries
        if norms_wanted:
            summary.scalar("global_norm/gradient_norm", _global_norm(gradients))
        if isinstance(clip_gradients, float):
            present = [(g, v) for g, v in gradients if g is not None]
            clipped, _ = clip_ops.clip_by_global_norm([g for g, _ in present], clip_gradients)
            gradients = list(zip(clipped, [v for _, v in present]))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")
        if "loss" in summaries:
            summary.scalar("loss", loss)
        for grad, var in gradients:
            values = _values(grad)
            if values is None:
                continue
            var_name = var.name.replace(":", "_")
            if "gradients" in summaries:
                summary.histogram(f"gradients/{var_name}", values)
            if "gradient_norm" in summaries:
                summary.scalar(f"gradient_norm/{var_name}", clip_ops.global_norm([values]))
        if clip_gradients is not None and norms_wanted:
            summary.scalar("global_norm/clipped_gradient_norm", _global_norm(gradients))
        grad_updates = opt.apply_gradients(
            gradients, global_step=global_step if increment_global_step else None,
            name="train")
        return control_flow_ops.with_dependencies([grad_updates], loss)
