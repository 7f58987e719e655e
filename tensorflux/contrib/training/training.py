"""contrib.training.create_train_op: the slim-style train op (TF 1.15 semantics).

The op returned is the total loss, computed after UPDATE_OPS (a barrier before the loss) and
evaluated after the gradient update has run; it is checked for inf/NaN and added to TRAIN_OP.
"""

from __future__ import annotations

from tensorflux import summary
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.scopes import name_scope
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.debug import logging as logging_ops
from tensorflux.ops.math import clip as clip_ops
from tensorflux.ops.state import variables as variables_mod
from tensorflux.platform import tf_logging as logging
from tensorflux.train import training_util
from tensorflux.train.optimizer import Optimizer

__all__ = ["create_train_op", "add_gradients_summaries", "clip_gradient_norms",
           "clip_gradient_norms_fn", "multiply_gradients"]

_USE_GLOBAL_STEP = 0


def add_gradients_summaries(grads_and_vars) -> list:
    """Histogram and norm summaries of each gradient; returns the summary ops."""
    summaries = []
    for grad, var in grads_and_vars:
        if grad is None:
            logging.info("Var %s has no gradient", var.op.name)
            continue
        values = grad.values if isinstance(grad, IndexedSlices) else grad
        summaries.append(summary.histogram(var.op.name + "_gradient", values))
        summaries.append(summary.scalar(var.op.name + "_gradient_norm",
                                        clip_ops.global_norm([values])))
    return summaries


def clip_gradient_norms(gradients_to_variables, max_norm) -> list:
    """Clips each gradient to norm `max_norm` separately (tf.clip_by_norm)."""
    clipped = []
    for grad, var in gradients_to_variables:
        if grad is not None:
            if isinstance(grad, IndexedSlices):
                values = clip_ops.clip_by_norm(grad.values, max_norm)
                grad = IndexedSlices(values, grad.indices, grad.dense_shape)
            else:
                grad = clip_ops.clip_by_norm(grad, max_norm)
        clipped.append((grad, var))
    return clipped


def clip_gradient_norms_fn(max_norm):
    """`fn(grads_and_vars)` clipping each gradient to `max_norm`."""
    return lambda grads_and_vars: clip_gradient_norms(grads_and_vars, max_norm)


def multiply_gradients(grads_and_vars, gradient_multipliers) -> list:
    """Multiplies the gradients of the variables in `gradient_multipliers` (var or name keys).

    Raises:
        ValueError: `gradient_multipliers` is empty or not a dict.
    """
    if not isinstance(gradient_multipliers, dict) or not gradient_multipliers:
        raise ValueError(f"`gradient_multipliers` is empty or not a dict: "
                         f"{gradient_multipliers!r}")
    result = []
    for grad, var in grads_and_vars:
        key = var if var in gradient_multipliers else var.op.name
        if grad is not None and key in gradient_multipliers:
            factor = gradient_multipliers[key]
            if isinstance(grad, IndexedSlices):
                grad = IndexedSlices(grad.values * factor, grad.indices, grad.dense_shape)
            else:
                grad = grad * factor
        result.append((grad, var))
    return result


def create_train_op(total_loss, optimizer, global_step=_USE_GLOBAL_STEP, update_ops=None,
                    variables_to_train=None, transform_grads_fn=None, summarize_gradients=False,
                    gate_gradients=Optimizer.GATE_OP, aggregation_method=None,
                    colocate_gradients_with_ops=False, check_numerics=True):
    """A tensor that runs one training step and returns the total loss.

    Args:
        total_loss: the scalar loss.
        optimizer: a tf.train.Optimizer.
        global_step: incremented per step (default: get_or_create_global_step(); None: none).
        update_ops: ops to run before the loss (default: UPDATE_OPS).
        variables_to_train: default: trainable variables.
        transform_grads_fn: `fn(grads_and_vars) -> grads_and_vars` (clipping, scaling).
        summarize_gradients: add gradient histograms and norms.
        gate_gradients, aggregation_method, colocate_gradients_with_ops: for
            compute_gradients.
        check_numerics: fail the step when the loss is inf or NaN.

    Returns:
        The train op (a tensor holding the loss).

    Raises:
        ValueError: no variables to train.
    """
    if global_step is _USE_GLOBAL_STEP:
        global_step = training_util.get_or_create_global_step()
    graph = graph_mod.get_default_graph()
    global_update_ops = set(graph.get_collection(GraphKeys.UPDATE_OPS))
    update_ops = global_update_ops if update_ops is None else set(update_ops)
    if not global_update_ops.issubset(update_ops):
        logging.warning("update_ops in create_train_op does not contain all the update_ops in "
                        "GraphKeys.UPDATE_OPS")
    if update_ops:
        with graph.control_dependencies(sorted(update_ops, key=lambda t: t.name)):
            barrier = control_flow_ops.no_op(name="update_barrier")
        total_loss = control_flow_ops.with_dependencies([barrier], total_loss)
    if variables_to_train is None:
        variables_to_train = variables_mod.trainable_variables()
    if not variables_to_train:
        raise ValueError("create_train_op: no variables to train.")
    grads = optimizer.compute_gradients(total_loss, variables_to_train,
                                        gate_gradients=gate_gradients,
                                        aggregation_method=aggregation_method,
                                        colocate_gradients_with_ops=colocate_gradients_with_ops)
    if transform_grads_fn:
        grads = transform_grads_fn(grads)
    if summarize_gradients:
        with name_scope("summarize_grads"):
            add_gradients_summaries(grads)
    with name_scope("train_op"):
        grad_updates = optimizer.apply_gradients(grads, global_step=global_step)
        with graph.control_dependencies([grad_updates]):
            train_op = array_ops.identity(total_loss)
        if check_numerics:
            train_op = logging_ops.check_numerics(train_op, "LossTensor is inf or nan")
    train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
    if train_op not in train_ops:
        train_ops.append(train_op)
    return train_op
