"""Shared pieces of the `tf.metrics` families: metric variables, collections, shape alignment.

A metric variable is a non-trainable zero-initialised variable in LOCAL_VARIABLES and
METRIC_VARIABLES, so `tf.local_variables_initializer()` resets every streaming metric.

Under a `tf.distribute` strategy with several replicas (TF 1.15's scheme) a metric variable is
synchronised on read with SUM aggregation: each replica's update op adds its own batch to its
own component, and the metric's *value* is built once, in cross-replica context inside
`merge_call` (`aggregate_across_replicas`), where reading the variable sums the components.
Without a strategy both are plain: the same graph as ever.
"""

from __future__ import annotations

from tensorflux.distribute import distribute_lib
from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.framework.graph import GraphKeys, Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.state import variables


def metric_variable(shape, dtype, name):
    """A zero-initialised local metric variable of `shape` and `dtype` named `name`
    (ON_READ / SUM: one component per replica under a strategy, read as their sum)."""
    context = distribute_lib.get_replica_context()
    if name and name.endswith("/") and context is not None and \
            context.replica_id_in_sync_group:
        # An absolute name (a name scope, as the @k metrics give) made inside replica i's
        # "replica_i/" scope: ask for replica 0's name, so the variable replica 0 created
        # under it is the one shared.
        name = name.replace(f"replica_{context.replica_id_in_sync_group}/", "", 1)
    return variables.Variable(array_ops.zeros(shape, dtype=dtype), trainable=False, name=name,
                              collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                              synchronization=variables.VariableSynchronization.ON_READ,
                              aggregation=variables.VariableAggregation.SUM)


def aggregate_across_replicas(metrics_collections, value_fn, *args):
    """`value_fn(*args)`, built once for all replicas and added to `metrics_collections`.

    In a replica context of a strategy the function runs inside `merge_call` (cross-replica
    context), so the metric variables it reads are the sums of all replicas' components and
    every replica gets the same value tensor. Otherwise (no strategy, or already in
    cross-replica context) it runs right here.
    """
    def merged(_strategy, *merged_args):
        value = value_fn(*merged_args)
        graph = graph_mod.get_default_graph()
        for name in metrics_collections or ():
            graph.add_to_collection(name, value)
        return value

    context = distribute_lib.get_replica_context()
    if context is None or not distribute_lib.has_strategy():
        return merged(None, *args)

    def merged_and_noted(strategy, *merged_args):
        value = merged(strategy, *merged_args)
        graph = graph_mod.get_default_graph()
        graph.__dict__.setdefault(_ACROSS_REPLICAS, set()).update(
            t.name for t in nest.flatten(value) if isinstance(t, Tensor))
        return value

    return context.merge_call(merged_and_noted, args=args)


_ACROSS_REPLICAS = "_metric_values_across_replicas"
_WALK_LIMIT = 10000


def computed_from_across_replica_values(tensor) -> bool:
    """True when `tensor` (built in one replica) is a function of metric values built across
    replicas and constants only (TF heads' `accuracy_baseline` = max(mean, 1 - mean)): every
    replica's copy then has the same value. False if it reads anything else (inputs,
    variables), runs a stateful op (a random draw), or its graph is too large to walk."""
    graph = tensor.graph
    merged = graph.__dict__.get(_ACROSS_REPLICAS, set())
    if not merged:
        return False
    pending, seen = [tensor], set()
    while pending:
        current = pending.pop()
        if current.name in merged or current.name in seen:
            continue
        seen.add(current.name)
        if len(seen) > _WALK_LIMIT:
            return False
        op = current.op
        inputs = list(op.inputs)
        if op.op_def.is_stateful or (not inputs and op.type != "Const"):
            return False  # a random draw, a read, an input: may differ per replica
        pending.extend(inputs)
    return True


def add_to_collections(metrics_collections, updates_collections, value, update):
    """Adds `value` to each of `metrics_collections` and `update` to `updates_collections`."""
    graph = graph_mod.get_default_graph()
    for name in metrics_collections or ():
        graph.add_to_collection(name, value)
    for name in updates_collections or ():
        graph.add_to_collection(name, update)


def squeeze_last_if_one_extra(labels, predictions):
    """Drops a trailing size-1 dimension of whichever of the two has rank one larger."""
    labels_rank = labels.shape.ndims
    predictions_rank = predictions.shape.ndims
    if labels_rank is None or predictions_rank is None:
        return labels, predictions
    if predictions_rank - labels_rank == 1 and predictions.shape.as_list()[-1] in (1, None):
        predictions = array_ops.squeeze(predictions, [-1])
    elif labels_rank - predictions_rank == 1 and labels.shape.as_list()[-1] in (1, None):
        labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def remove_squeezable_dimensions(predictions, labels, weights):
    """Aligns ranks as TF1 metrics do: labels vs predictions, then weights vs predictions.

    Returns `(predictions, labels, weights)`; a weights tensor of rank one more than
    `predictions` loses its last dimension, one of rank one less gains one.
    """
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        labels, predictions = squeeze_last_if_one_extra(labels, predictions)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible: "
                             "predictions and labels must have the same shape")
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    weights_rank = weights.shape.ndims
    predictions_rank = predictions.shape.ndims
    if weights_rank in (0, None) or predictions_rank is None:
        return predictions, labels, weights
    if weights_rank - predictions_rank == 1:
        weights = array_ops.squeeze(weights, [-1])
    elif predictions_rank - weights_rank == 1:
        weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def broadcast_weights(weights, values):
    """`weights` broadcast to the shape of `values` (rank 0, or same rank with dims 1 or equal).

    Raises:
        ValueError: the static shapes show `weights` cannot be broadcast to `values`.
    """
    weights = convert_to_tensor(weights)
    w_shape, v_shape = weights.shape, values.shape
    if w_shape.ndims not in (0, None) and v_shape.ndims is not None:
        ok = w_shape.ndims == v_shape.ndims and all(
            w in (None, 1) or v is None or w == v
            for w, v in zip(w_shape.as_list(), v_shape.as_list()))
        if not ok:
            raise ValueError(f"weights can not be broadcast to values. values.rank="
                             f"{v_shape.ndims}. weights.rank={w_shape.ndims}. values.shape="
                             f"{v_shape}. weights.shape={w_shape}.")
    if w_shape.is_fully_defined() and v_shape.is_fully_defined() and w_shape == v_shape:
        return weights
    return weights * array_ops.ones_like(values)


def at_k_name(name, k=None, class_id=None):
    """TF1's default scope name of an @k metric: `recall_at_5`, `precision_at_k_class3`."""
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return name if class_id is None else f"{name}_class{class_id}"
