"""The per-graph variable store behind `tf.get_variable` (TF1's `_VariableStore`).

It maps full variable names to the Variables created through `get_variable` and applies TF1's
reuse rules, default initializers, custom getters and regularizers. With a `partitioner` it
creates a `PartitionedVariable` (see `tensorflux.ops.state.partitioned`).
"""

from __future__ import annotations

import functools
import inspect

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import init_scope
from tensorflux.framework.tensor_shape import as_shape
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import partitioned as partitioned_variables
from tensorflux.ops.state import variables
from tensorflux.platform import tf_logging as logging


def _format_location(var) -> str:
    filename, lineno, name, line = var.op.traceback[0]
    source = f"\n    {line}" if line else ""
    return f'  File "{filename}", line {lineno}, in {name}{source}\n'


def _accepts_partition_info(initializer) -> bool:
    try:
        params = inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        return False
    return "partition_info" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _needs_no_arguments(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not inspect.Parameter.empty or
               p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
               for p in params)


class _VariableStore:
    """Full variable name -> Variable, for one graph."""

    def __init__(self):
        self._vars: dict = {}
        self._partitioned_vars: dict = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=variables.VariableSynchronization.AUTO,
                     aggregation=variables.VariableAggregation.NONE):
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype).base_dtype

        def _true_getter(name, shape=None, dtype=dtypes.float32, initializer=None,
                         regularizer=None, reuse=None, trainable=None, collections=None,
                         caching_device=None, partitioner=None, validate_shape=True,
                         use_resource=None, constraint=None,
                         synchronization=variables.VariableSynchronization.AUTO,
                         aggregation=variables.VariableAggregation.NONE):
            is_scalar = isinstance(shape, (list, tuple)) and not shape
            single = dict(regularizer=regularizer, trainable=trainable,
                          collections=collections, caching_device=caching_device,
                          validate_shape=validate_shape, use_resource=use_resource,
                          constraint=constraint, synchronization=synchronization,
                          aggregation=aggregation)
            if (partitioner is not None and not is_scalar) or (
                    reuse is True and partitioner is None and name in self._partitioned_vars):
                if partitioner is not None and not callable(partitioner):
                    raise ValueError(f"Partitioner must be callable, but received: "
                                     f"{partitioner}")

                with graph_mod.get_default_graph().name_scope(None):
                    return partitioned_variables.get_partitioned_variable(
                        self, name, partitioner, shape=shape, dtype=dtype,
                        initializer=initializer, reuse=reuse, **single)
            if f"{name}/part_0" in self._vars:
                raise ValueError(f"No partitioner was provided, but a partitioned version of the "
                                 f"variable was found: {name}/part_0. Perhaps a variable of the "
                                 "same name was already created with partitioning?")
            return self._get_single_variable(
                name, shape=shape, dtype=dtype, initializer=initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                validate_shape=validate_shape, use_resource=use_resource,
                constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)

        synchronization, aggregation, trainable = \
            variables.validate_synchronization_aggregation_trainable(
                synchronization, aggregation, trainable, name)
        kwargs = dict(name=name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, reuse=reuse, trainable=trainable,
                      collections=collections, caching_device=caching_device,
                      partitioner=partitioner, validate_shape=validate_shape,
                      use_resource=use_resource, synchronization=synchronization,
                      aggregation=aggregation)
        if custom_getter is not None:
            try:
                params = inspect.signature(custom_getter).parameters
                takes_constraint = "constraint" in params or any(
                    p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
            except (TypeError, ValueError):
                takes_constraint = True
            if takes_constraint:
                kwargs["constraint"] = constraint
            return custom_getter(getter=_true_getter, **kwargs)
        return _true_getter(constraint=constraint, **kwargs)

    def _get_single_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                             regularizer=None, reuse=None, trainable=None, collections=None,
                             caching_device=None, validate_shape=True, use_resource=None,
                             constraint=None, synchronization=None, aggregation=None,
                             partition_info=None):
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape)

        if name in self._vars:
            if reuse is False:
                found = self._vars[name]
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to "
                                 "set reuse=True or reuse=tf.AUTO_REUSE in VarScope? "
                                 f"Originally defined at:\n\n{_format_location(found)}")
            found = self._vars[name]
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                                 f"and found shape {found.get_shape()}.")
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(f"Trying to share variable {name}, but specified dtype "
                                 f"{dtype.name} and found dtype {found.dtype.name}.")
            return found

        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?")

        if initializer is None:
            initializer, initializing_from_value = self._default_initializer(name, dtype)
        with init_scope():
            if initializing_from_value:
                init_val = initializer
                variable_dtype = None
            else:
                if inspect.isclass(initializer):
                    initializer = initializer()
                if shape.is_fully_defined():
                    if _accepts_partition_info(initializer):
                        init_val = functools.partial(initializer, shape.as_list(), dtype=dtype,
                                                     partition_info=partition_info)
                    else:
                        init_val = functools.partial(initializer, shape.as_list(), dtype=dtype)
                    variable_dtype = dtype.base_dtype
                elif _needs_no_arguments(initializer):
                    init_val = initializer
                    variable_dtype = None
                else:
                    raise ValueError(
                        "The initializer passed is not valid. It should be a callable with no "
                        "arguments and the shape should not be provided or an instance of "
                        "`tf.keras.initializers.*' and `shape` should be fully defined. (Shape "
                        f"of a new variable ({name}) must be fully defined, but instead was "
                        f"{shape}.)")
        var = variables.Variable(
            initial_value=init_val, name=name, trainable=trainable, collections=collections,
            caching_device=caching_device, dtype=variable_dtype, validate_shape=validate_shape,
            constraint=constraint, use_resource=use_resource, synchronization=synchronization,
            aggregation=aggregation)
        self._vars[name] = var
        logging.vlog(1, "Created variable %s with shape %s and init %s", var.name, shape,
                     initializer)
        if regularizer:
            graph = graph_mod.get_default_graph()
            with graph.colocate_with(var.op), graph.name_scope(f"{name}/Regularizer/"):
                with init_scope():
                    loss = regularizer(var)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return var

    @staticmethod
    def _default_initializer(name, dtype):
        if dtype.is_floating:
            return init_ops.glorot_uniform_initializer(), False
        if dtype.is_integer or dtype.is_bool or dtype.base_dtype == dtypes.string:
            return init_ops.zeros_initializer(), False
        raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype.name} is "
                         "required")
