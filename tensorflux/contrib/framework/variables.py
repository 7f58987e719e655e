"""contrib.framework variables: model variables, selection by scope/suffix, and restoring.

As in TF 1.15: `model_variable` puts a variable in GLOBAL_VARIABLES and MODEL_VARIABLES;
`get_variables(scope, suffix)` matches the collection by regular expression on the variable
name from its start (`scope + ".*" + suffix`); `assign_from_checkpoint(_fn)` and
`assign_from_values(_fn)` build the ops (or a `fn(session)`) that load values into variables.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux.contrib.framework.arg_scope import add_arg_scope
from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import device as device_scope
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope as vs
from tensorflux.ops.state import variables as variables_mod
from tensorflux.platform import tf_logging as logging
from tensorflux.train import checkpoint_utils
from tensorflux.train import saver as saver_mod

__all__ = ["variable", "model_variable", "local_variable", "global_variable",
           "add_model_variable", "get_variables", "get_model_variables", "get_local_variables",
           "get_trainable_variables", "get_variables_to_restore", "get_variables_by_suffix",
           "get_variables_by_name", "get_unique_variable", "filter_variables",
           "assign_from_values", "assign_from_values_fn", "assign_from_checkpoint",
           "assign_from_checkpoint_fn", "zero_initializer"]


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True,
             collections=None, caching_device=None, device=None, partitioner=None,
             custom_getter=None, use_resource=None,
             synchronization=variables_mod.VariableSynchronization.AUTO,
             aggregation=variables_mod.VariableAggregation.NONE):
    """Gets an existing variable or creates one with `tf.get_variable`, on `device`.

    Args:
        name, shape, dtype, initializer, regularizer, trainable, caching_device, partitioner,
        use_resource, synchronization, aggregation: as for `tf.get_variable`.
        collections: graph collections (default [GLOBAL_VARIABLES]).
        device: a device string or function for the variable.
        custom_getter: `fn(getter, name, **kwargs)` wrapping `tf.get_variable`.

    Returns:
        The variable.
    """
    collections = list(collections if collections is not None
                       else [GraphKeys.GLOBAL_VARIABLES])
    collections = list(dict.fromkeys(collections))
    getter = vs.get_variable
    if custom_getter is not None:
        def getter(**kwargs):
            return custom_getter(vs.get_variable, **kwargs)
    with device_scope(device or ""):
        return getter(name=name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, trainable=trainable, collections=collections,
                      caching_device=caching_device, partitioner=partitioner,
                      use_resource=use_resource, synchronization=synchronization,
                      aggregation=aggregation)


@add_arg_scope
def model_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                   trainable=True, collections=None, caching_device=None, device=None,
                   partitioner=None, custom_getter=None, use_resource=None,
                   synchronization=variables_mod.VariableSynchronization.AUTO,
                   aggregation=variables_mod.VariableAggregation.NONE):
    """`variable` that is also added to MODEL_VARIABLES (dtype default float32).

    Returns:
        The variable.
    """

    collections = list(collections or [])
    collections += [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype or dtypes.float32, initializer=initializer,
                    regularizer=regularizer, trainable=trainable, collections=collections,
                    caching_device=caching_device, device=device, partitioner=partitioner,
                    custom_getter=custom_getter, use_resource=use_resource,
                    synchronization=synchronization, aggregation=aggregation)


def local_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable variable in LOCAL_VARIABLES holding `initial_value`."""
    return variables_mod.Variable(initial_value, trainable=False,
                                  collections=[GraphKeys.LOCAL_VARIABLES],
                                  validate_shape=validate_shape, name=name)


def global_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable variable in GLOBAL_VARIABLES holding `initial_value`."""
    return variables_mod.Variable(initial_value, trainable=False,
                                  collections=[GraphKeys.GLOBAL_VARIABLES],
                                  validate_shape=validate_shape, name=name)


def add_model_variable(var) -> None:
    """Adds `var` to MODEL_VARIABLES (once)."""
    if var not in graph_mod.get_collection(GraphKeys.MODEL_VARIABLES):
        graph_mod.add_to_collection(GraphKeys.MODEL_VARIABLES, var)


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES) -> list:
    """Variables of `collection` whose name matches `scope` (from the start) and `suffix`.

    Args:
        scope: a name prefix regex or VariableScope (None: any).
        suffix: matches the name's end before ':' (e.g. "weights").
        collection: the collection to search.

    Returns:
        The matching variables, in collection order.
    """
    if isinstance(scope, vs.VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return graph_mod.get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None) -> list:
    """`get_variables` over MODEL_VARIABLES."""
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None) -> list:
    """`get_variables` over LOCAL_VARIABLES."""
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None) -> list:
    """`get_variables` over TRAINABLE_VARIABLES."""
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_to_restore(include=None, exclude=None) -> list:
    """Global variables under the `include` scopes minus those under the `exclude` scopes.

    Args:
        include: list/tuple of scope names (None: every global variable).
        exclude: list/tuple of scope names to leave out.

    Returns:
        The variables, in collection order.

    Raises:
        TypeError: `include` or `exclude` is not a list or tuple.
    """
    if include is None:
        to_include = get_variables()
    else:
        if not isinstance(include, (list, tuple)):
            raise TypeError("include is provided but is not a list or a tuple.")
        to_include = []
        for scope in include:
            to_include += get_variables(scope)
    to_exclude = set()
    if exclude is not None:
        if not isinstance(exclude, (list, tuple)):
            raise TypeError("exclude is provided but is not a list or a tuple.")
        for scope in exclude:
            to_exclude |= set(get_variables(scope))
    return [v for v in to_include if v not in to_exclude]


def get_variables_by_suffix(suffix, scope=None) -> list:
    """Global variables whose name ends with `suffix` (before ':')."""
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None) -> list:
    """Global variables whose last name component is `given_name`."""
    suffix = "/" + given_name + ":|^" + given_name + ":"
    return get_variables(scope=scope, suffix=suffix)


def get_unique_variable(var_op_name):
    """The global variable whose op name is exactly `var_op_name`.

    Raises:
        ValueError: none, or no exact match among the prefix matches.
    """
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def filter_variables(var_list, include_patterns=None, exclude_patterns=None,
                     reg_search=True) -> list:
    """Variables of `var_list` whose name matches an include pattern and no exclude pattern.

    Args:
        var_list: variables.
        include_patterns: regexes (None: include all).
        exclude_patterns: regexes (None: exclude none).
        reg_search: `re.search` (any substring) if True, else `re.match` (from the start).

    Returns:
        The filtered list, in order.
    """
    match = re.search if reg_search else re.match

    def matches(var, patterns):
        return any(match(p, var.name) for p in patterns)

    result = [v for v in var_list if include_patterns is None or matches(v, include_patterns)]
    if exclude_patterns is not None:
        result = [v for v in result if not matches(v, exclude_patterns)]
    return result


def _find_global(var_name):
    found = graph_mod.get_collection(GraphKeys.GLOBAL_VARIABLES, var_name)
    if not found:
        raise ValueError(f"Variable {var_name} wasn't found")
    exact = [v for v in found if v.op.name == var_name]
    if len(found) > 1 and not exact:
        raise ValueError(f"Variable {var_name} doesn't uniquely identify a variable")
    return exact[0] if exact else found[0]


def _placeholder_assign(var, value, assign_ops, feed_dict):
    holder = array_ops.placeholder(var.dtype.base_dtype, shape=var.get_shape(),
                                   name="placeholder/" + var.op.name)
    assign_ops.append(state_ops.assign(var, holder))
    shape = var.get_shape()
    value = np.asarray(value)
    feed_dict[holder] = value.reshape(shape.as_list()) if shape.is_fully_defined() else value


def assign_from_values(var_names_to_values):
    """An op assigning values to the named global variables, and the feed it needs.

    Args:
        var_names_to_values: {variable op name: value}.

    Returns:
        (assign_op, feed_dict): run `sess.run(assign_op, feed_dict)`.

    Raises:
        ValueError: a name matches no variable, or several without an exact match.
    """
    assign_ops, feed_dict = [], {}
    for var_name, value in var_names_to_values.items():
        _placeholder_assign(_find_global(var_name), value, assign_ops, feed_dict)
    return control_flow_ops.group(*assign_ops), feed_dict


def assign_from_values_fn(var_names_to_values):
    """`fn(session)` that assigns the values (see assign_from_values)."""
    assign_op, feed_dict = assign_from_values(var_names_to_values)

    def callback(session):
        return session.run(assign_op, feed_dict)

    return callback


def _as_name_map(var_list) -> dict:
    if isinstance(var_list, dict):
        return dict(var_list)
    return {v.op.name: v for v in var_list}


def assign_from_checkpoint(model_path, var_list, ignore_missing_vars=False):
    """Ops assigning checkpoint values to variables, fed through placeholders.

    Args:
        model_path: a checkpoint prefix (or a directory holding a `checkpoint` file).
        var_list: variables (looked up by op name) or {checkpoint name: variable or list of
            partitions}.
        ignore_missing_vars: skip (with a warning) variables missing from the checkpoint.

    Returns:
        (assign_op, feed_dict).

    Raises:
        ValueError: a variable is missing from the checkpoint and not ignored.
    """
    reader = checkpoint_utils.load_checkpoint(model_path)
    assign_ops, feed_dict = [], {}
    for ckpt_name, target in _as_name_map(var_list).items():
        if not reader.has_tensor(ckpt_name):
            if ignore_missing_vars:
                logging.info("Checkpoint is missing variable [%s]", ckpt_name)
                continue
            raise ValueError(f"Checkpoint is missing variable [{ckpt_name}]")
        value = reader.get_tensor(ckpt_name)
        parts = target if isinstance(target, (list, tuple)) else [target]
        for var in parts:
            info = getattr(var, "_save_slice_info", None)
            piece = value
            if info is not None and len(parts) > 1:
                piece = value[tuple(slice(o, o + s)
                                    for o, s in zip(info.var_offset, info.var_shape))]
            _placeholder_assign(var, piece, assign_ops, feed_dict)
    return control_flow_ops.group(*assign_ops), feed_dict


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False,
                              reshape_variables=False):
    """`fn(session)` restoring `var_list` from `model_path` with a Saver.

    Args:
        model_path: the checkpoint prefix.
        var_list: variables, or {checkpoint name: variable}.
        ignore_missing_vars: drop variables absent from the checkpoint (None when none remain).
        reshape_variables: let the Saver restore into a different shape of equal size.

    Returns:
        `fn(session)`, or None when every variable was missing and ignored.

    Raises:
        ValueError: `var_list` is empty.
    """
    if not var_list:
        raise ValueError("var_list cannot be empty")
    if ignore_missing_vars:
        reader = checkpoint_utils.load_checkpoint(model_path)
        names = _as_name_map(var_list)
        kept = {k: v for k, v in names.items() if reader.has_tensor(k)}
        for name in sorted(set(names) - set(kept)):
            logging.warning("Variable %s missing in checkpoint %s", name, model_path)
        var_list = kept if isinstance(var_list, dict) else list(kept.values())
        if not var_list:
            logging.warning("Variable(s) not found in checkpoint %s", model_path)
            return None
    saver = saver_mod.Saver(var_list, reshape=reshape_variables)

    def callback(session):
        saver.restore(session, model_path)

    return callback


def zero_initializer(ref, use_locking=True, name="zero_initializer"):
    """An op setting the (statically shaped) variable `ref` to zeros."""
    shape = ref.get_shape()
    if not shape.is_fully_defined():
        raise ValueError(f"zero_initializer needs a fully defined shape; {ref.name} has "
                         f"{shape}")
    zeros = array_ops.zeros(shape.as_list(), dtype=ref.dtype.base_dtype)
    return state_ops.assign(ref, zeros, use_locking=use_locking, name=name)
