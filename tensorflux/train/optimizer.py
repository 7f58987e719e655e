"""`tf.train.Optimizer`: gradients plus update ops, all in the graph (user-level, extensible).

An optimizer computes gradients with `tf.gradients`, creates its slot variables (one per
trainable variable and slot name, colocated with the variable) and builds one update op per
variable: `_apply_dense` for Tensor gradients, `_apply_sparse` for IndexedSlices (rows
deduplicated first, so only touched rows change). Subclasses override `_create_slots`,
`_prepare`, `_apply_dense`, `_apply_sparse` and `_finish`, as in TensorFlow.
"""

from __future__ import annotations

from tensorflux.distribute import distribute_lib
from tensorflux.distribute import values as values_lib
from tensorflux.distribute.reduce_util import ReduceOp
from tensorflux.framework import dtypes, nest
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.scopes import init_scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.autodiff.gradients import gradients
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state.variables import Variable
from tensorflux.train import slot_creator


def _var_key(var):
    """Slots are per variable *and graph* (TF1's `(var.op.graph, var.op.name)`): an optimizer
    object reused across graphs, as estimators do on every `train()` call, gets fresh slots in
    each graph."""
    var = getattr(var, "_distributed_container", var)  # a component: its variable's slots
    if isinstance(var, values_lib.DistributedVariable):
        var = var.primary
    return (var.op.graph, var.op.name)


def _is_variable(value) -> bool:
    return hasattr(value, "_as_graph_element") and hasattr(value, "initializer")


class Optimizer:
    """Base class of the optimizers (see the module docstring)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict = {}
        self._non_slot_dict: dict = {}

    def get_name(self) -> str:
        return self._name

    # -- public API ------------------------------------------------------------------------

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """Adds ops that compute gradients of `loss` and apply them; returns the train op.

        Raises:
            ValueError: no variable to optimize, or no gradient for any of them.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        missing = [v for g, v in grads_and_vars if g is None]
        if len(missing) == len(grads_and_vars):
            names = [v.op.name for _, v in grads_and_vars]
            raise ValueError(f"No gradients provided for any variable, check your graph for "
                             f"ops that do not support gradients, between variables {names} "
                             f"and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """Returns [(gradient or None, variable)] for `var_list` (default: trainables)."""

        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        loss = _scaled_for_replicas(loss)
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP,
                                  Optimizer.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH. Not {gate_gradients}")
        graph = graph_mod.get_default_graph()
        if var_list is None:
            var_list = (graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
                        + graph.get_collection(GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
        else:
            var_list = list(var_list)
        var_list += graph.get_collection(GraphKeys._STREAMING_MODEL_PORTS)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, var_list, grad_ys=grad_loss,
                          gate_gradients=gate_gradients == Optimizer.GATE_OP,
                          colocate_gradients_with_ops=colocate_gradients_with_ops,
                          aggregation_method=aggregation_method)
        if gate_gradients == Optimizer.GATE_GRAPH:
            present = [g for g in grads if g is not None and isinstance(g, Tensor)]
            gated = iter(control_flow_ops.tuple(present))
            grads = [next(gated) if g is not None and isinstance(g, Tensor) else g
                     for g in grads]
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Builds the update ops; with `global_step`, increments it after them."""

        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        if distribute_lib.has_strategy():
            if distribute_lib.in_cross_replica_context():
                raise RuntimeError("Use `_distributed_apply()` instead of `apply_gradients()` "
                                   "in a cross-replica context.")
            present = tuple((g, v) for g, v in grads_and_vars if g is not None)
            if not present:
                names = [str(v.op.name) for _, v in grads_and_vars]
                raise ValueError(f"No gradients provided for any variable: {names}.")
            return distribute_lib.get_replica_context().merge_call(
                self._distributed_apply, args=(present, global_step, name))
        converted = []
        for grad, var in grads_and_vars:
            if grad is not None and not isinstance(grad, (Tensor, IndexedSlices)):
                grad = convert_to_tensor(grad)
            converted.append((grad, var))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            names = [str(v.op.name) for _, v in converted]
            raise ValueError(f"No gradients provided for any variable: {names}.")
        graph = graph_mod.get_default_graph()
        with init_scope():
            self._create_slots(var_list)
        update_ops = []
        with graph.name_scope(name or self._name) as scope:
            self._prepare()
            for grad, var in converted:
                if grad is None:
                    continue
                with graph.name_scope("update_" + var.op.name), graph.colocate_with(var.op):
                    update_ops.append(self._update_op(grad, var))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with graph.control_dependencies([self._finish(update_ops, "update")]):
                    with graph.colocate_with(global_step.op):
                        apply_updates = state_ops.assign_add(global_step, 1, name=scope).op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    def _distributed_apply(self, distribution, grads_and_vars, global_step=None, name=None):
        """`apply_gradients` under a distribution strategy, run once for all replicas: the
        replicas' gradients are summed onto each variable's devices and every component of
        the variable gets the same update."""
        reduced = distribution.extended.batch_reduce_to(
            ReduceOp.SUM, [(g, v) for g, v in grads_and_vars])
        var_list = [v for _, v in grads_and_vars]
        with init_scope():
            self._create_slots(var_list)
        graph = graph_mod.get_default_graph()

        def update(component, grad):
            if not isinstance(grad, (Tensor, IndexedSlices)):
                grad = convert_to_tensor(grad)
            with graph.name_scope("update_" + component.op.name), \
                    graph.colocate_with(component.op):
                return self._update_op(grad, component)

        with graph.name_scope(name or self._name) as scope:
            self._prepare()
            update_ops = [op for grad, var in zip(reduced, var_list)
                          for op in distribution.extended.update(var, update, args=(grad,),
                                                                 group=False)]

            def finish(ops):
                return self._finish(ops, "update")

            finished = distribution.extended.update_non_slot(
                distribution.extended.non_slot_devices(var_list), finish, args=(update_ops,),
                group=False)
            if global_step is None:
                apply_updates = distribution.group(finished, name=scope)
            else:
                names = [scope]  # the first component's increment is named as without a strategy

                def increment(step):
                    return state_ops.assign_add(step, 1, name=names.pop() if names else None)

                with graph.control_dependencies(nest.flatten(finished)):
                    apply_updates = distribution.extended.update(global_step, increment)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    def get_slot(self, var, name):
        named = self._slots.get(name)
        if not named:
            return None
        slot = named.get(_var_key(var))
        if isinstance(slot, values_lib.DistributedVariable) and \
                not isinstance(var, values_lib.DistributedVariable):
            return slot._get()  # the slot's component beside the component `var`
        return slot

    def get_slot_names(self) -> list:
        return sorted(self._slots)

    def variables(self) -> list:
        graph = graph_mod.get_default_graph()
        result = [v for slots in self._slots.values() for v in slots.values()
                  if v.graph is graph]
        result += [v for (key, g), v in self._non_slot_dict.items() if g is graph]
        return sorted(result, key=lambda v: v.name)

    def _update_op(self, grad, var):
        """The update of `var` by `grad`, followed by `var.assign(var.constraint(var))` when the
        variable has a constraint (dense gradients only, as in TF1).

        Raises:
          NotImplementedError: `var` is a plain Tensor (only its gradient can be computed).
          RuntimeError: a sparse gradient for a variable with a constraint.
        """
        if isinstance(var, Tensor):
            raise NotImplementedError("Trying to update a Tensor ", var)
        constraint = getattr(var, "constraint", None)
        if constraint is not None and isinstance(grad, IndexedSlices):
            raise RuntimeError("Cannot use a constraint function on a sparse variable.")
        update = self._dispatch_update(grad, var)
        if constraint is None:
            return update
        graph = graph_mod.get_default_graph()
        with graph.control_dependencies([update]):
            return var.assign(constraint(var))

    def _dispatch_update(self, grad, var):
        """TF1's dispatch: resource variables go through the `_resource_apply_*` hooks (which
        default to the `_apply_*` ones), ref variables through `_apply_*`."""
        if not _is_resource(var):
            if isinstance(grad, IndexedSlices):
                return self._apply_sparse_duplicate_indices(grad, var)
            return self._apply_dense(grad, var)
        if not isinstance(grad, IndexedSlices):
            return self._resource_apply_dense(grad, var)
        if _overrides(self, "_resource_apply_sparse") or _overrides(
                self, "_resource_apply_sparse_duplicate_indices"):
            return self._resource_apply_sparse_duplicate_indices(grad.values, var, grad.indices)
        return self._apply_sparse_duplicate_indices(grad, var)

    # -- hooks for subclasses --------------------------------------------------------------

    def _create_slots(self, var_list) -> None:
        pass

    def _prepare(self) -> None:
        pass

    def _apply_dense(self, grad, var):
        raise TypeError(f"{type(self).__name__} does not implement _apply_dense")

    def _apply_sparse(self, grad, var):
        raise TypeError(f"{type(self).__name__} does not implement sparse updates")

    def _apply_sparse_duplicate_indices(self, grad, var):
        summed, unique = _deduplicate(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed, unique, grad.dense_shape), var)

    def _resource_apply_dense(self, grad, var):
        """The update of resource variable `var` by a dense `grad` (default: `_apply_dense`)."""
        return self._apply_dense(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        """The update of rows `indices` (unique) of resource variable `var` by `grad`."""
        return self._apply_sparse(IndexedSlices(grad, indices, array_ops.shape(var)), var)

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices):
        summed, unique = _deduplicate(grad, indices)
        return self._resource_apply_sparse(summed, var, unique)

    def _finish(self, update_ops, name_scope):
        return control_flow_ops.group(*update_ops, name=name_scope)

    def _valid_dtypes(self) -> set:
        """The variable dtypes this optimizer updates."""
        return {dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64}

    # -- slots -----------------------------------------------------------------------------

    def _slot_dict(self, slot_name) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = _create_slot(var, val, op_name)
        return named[key]

    def _zeros_slot(self, var, slot_name, op_name):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            shape = var.get_shape()
            dtype = var.dtype.base_dtype
            if shape.is_fully_defined():
                initial = array_ops.zeros(shape.as_list(), dtype=dtype)
            else:
                initial = array_ops.zeros_like(var.initialized_value())
            named[key] = _create_slot(var, initial, op_name)
        return named[key]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        """The `slot_name` slot of `var`, created from `initializer(shape, dtype)`."""
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            shape = TensorShape(shape)
            dims = shape.as_list() if shape.is_fully_defined() else array_ops.shape(var)
            with graph_mod.get_default_graph().colocate_with(var.op):
                initial = initializer(dims, dtype=dtypes.as_dtype(dtype))
            named[key] = _create_slot(var, initial, op_name)
        return named[key]

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        graph = graph_mod.get_default_graph()
        key = (name, graph)
        found = self._non_slot_dict.get(key)
        if found is None:
            with graph.name_scope(None), slot_creator.colocated_with(colocate_with):
                found = Variable(initial_value, name=name, trainable=False,
                                 use_resource=_is_resource(colocate_with))
            self._non_slot_dict[key] = found
        return found

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph or graph_mod.get_default_graph()))

    def _call_if_callable(self, param):
        return param() if callable(param) else param


def _scaled_for_replicas(loss):
    """Under a strategy with several replicas and a MEAN loss reduction, each replica's loss
    counts 1 / replicas, so the summed gradients are those of the mean (TF 1.15)."""
    if not distribute_lib.has_strategy() or distribute_lib.in_cross_replica_context():
        return loss
    replicas = distribute_lib.get_strategy().num_replicas_in_sync
    if replicas > 1 and distribute_lib.get_loss_reduction() == ReduceOp.MEAN:
        return loss * (1.0 / replicas)
    return loss


def _create_slot(primary, initial_value, op_name):
    """A non-trainable slot variable named '<primary op>/<op_name>', colocated with it."""

    graph = graph_mod.get_default_graph()
    with graph.name_scope(None), slot_creator.colocated_with(primary):
        return Variable(initial_value, name=f"{primary.op.name}/{op_name}", trainable=False,
                        validate_shape=primary.get_shape().is_fully_defined(),
                        use_resource=_is_resource(primary))


def _overrides(optimizer, method: str) -> bool:
    return getattr(type(optimizer), method) is not getattr(Optimizer, method)


def _is_resource(var) -> bool:
    """Slots of a resource variable are resource variables (TF's slot_creator)."""
    return bool(getattr(var, "_is_resource_variable", False))


def _deduplicate(values, indices):
    """Sums the rows of `values` that share an index; returns (summed values, unique indices)."""

    unique, positions = array_ops.unique(indices)
    summed = math_ops.unsorted_segment_sum(values, positions, array_ops.shape(unique)[0])
    return summed, unique
