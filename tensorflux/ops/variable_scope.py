"""`tf.get_variable` and `tf.variable_scope`: named, shareable variables (TF1 semantics).

Each graph holds one variable store (collection `("__variable_store",)`) mapping full names to
the Variables created through `get_variable`, and one scope store (`("__varscope",)`) with the
current VariableScope. Reuse follows TF1: `reuse=False` (the root default) refuses an existing
name, `reuse=True` refuses a missing one, `tf.AUTO_REUSE` creates or returns; reuse is
inherited by sub-scopes. Variable names depend on variable scopes only, not on name scopes.
`partitioner` is accepted and recorded; partitioned variables belong to the distributed work,
so a partitioner currently yields one unpartitioned variable (with a warning).
"""

from __future__ import annotations

import copy
import enum
import functools
import inspect
import threading

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import init_scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import _infer_numpy
from tensorflux.framework.tensor_shape import as_shape
from tensorflux.ops import init_ops, variables
from tensorflux.platform import tf_logging as logging

__all__ = ["get_variable", "get_local_variable", "variable_scope", "get_variable_scope",
           "VariableScope", "AUTO_REUSE", "no_regularizer", "variable_op_scope"]

_VARSTORE_KEY = ("__variable_store",)
_VARSCOPESTORE_KEY = ("__varscope",)


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
AUTO_REUSE.__doc__ = "Reuse: create variables that do not exist, return those that do."


def no_regularizer(_):
    """A regularizer that adds no loss (use it to switch off a scope's regularizer)."""
    return None


def _format_location(var) -> str:
    location = var.op.traceback[0] if var.op.traceback else ("<unknown>", 0)
    return f'  File "{location[0]}", line {location[1]}\n'


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
        self._warned_partitioner = False

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
            if partitioner is not None:
                if not callable(partitioner):
                    raise ValueError(f"Partitioner must be callable, but received: "
                                     f"{partitioner}")
                if not self._warned_partitioner:
                    self._warned_partitioner = True
                    logging.warning("get_variable(%s): partitioner ignored; partitioned "
                                    "variables are not supported yet, creating one variable.",
                                    name)
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
                             constraint=None, synchronization=None, aggregation=None):
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
                                                     partition_info=None)
                    else:
                        init_val = functools.partial(initializer, shape.as_list(), dtype=dtype)
                    variable_dtype = dtype.base_dtype
                elif _needs_no_arguments(initializer):
                    init_val = initializer
                    variable_dtype = None
                else:
                    raise ValueError(f"Shape of a new variable ({name}) must be fully defined, "
                                     f"but instead was {shape}.")
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


class VariableScope:
    """A variable scope: the name prefix, reuse mode and defaults for `get_variable`.

    Example:
        >>> with tf.variable_scope("layer") as scope:
        ...     w = tf.get_variable("w", [2, 2])
        ...     scope.reuse_variables()
        ...     assert tf.get_variable("w") is w
    """

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name_scope(self) -> str:
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def dtype(self):
        return self._dtype

    @property
    def use_resource(self):
        return self._use_resource

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def caching_device(self):
        return self._caching_device

    @property
    def partitioner(self):
        return self._partitioner

    @property
    def custom_getter(self):
        return self._custom_getter

    @property
    def constraint(self):
        return self._constraint

    def reuse_variables(self) -> None:
        """Makes this scope (and scopes opened in it from now on) reuse variables."""
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self._initializer = initializer

    def set_dtype(self, dtype) -> None:
        self._dtype = dtype

    def set_use_resource(self, use_resource) -> None:
        self._use_resource = use_resource

    def set_regularizer(self, regularizer) -> None:
        self._regularizer = regularizer

    def set_caching_device(self, caching_device) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        self._custom_getter = custom_getter

    def get_collection(self, name) -> list:
        scope = self._name + "/" if self._name else ""
        return graph_mod.get_collection(name, scope)

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=variables.VariableSynchronization.AUTO,
                     aggregation=variables.VariableAggregation.NONE):
        """Gets an existing variable or creates a new one under this scope's name."""
        if regularizer is None:
            regularizer = self._regularizer
        if caching_device is None:
            caching_device = self._caching_device
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if reuse is None:
            reuse = self._reuse
        if use_resource is None:
            use_resource = self._use_resource
        full_name = f"{self.name}/{name}" if self.name else name
        graph = graph_mod.get_default_graph()
        with graph.name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = _value_dtype(initializer)
                if init_dtype != dtypes.as_dtype(dtype).base_dtype:
                    raise ValueError(f"Initializer type '{init_dtype.name}' and explicit dtype "
                                     f"'{dtypes.as_dtype(dtype).name}' don't match.")
            if initializer is None:
                initializer = self._initializer
            if constraint is None:
                constraint = self._constraint
            if dtype is None:
                dtype = self._dtype
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape,
                use_resource=use_resource, custom_getter=custom_getter,
                constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)

    def __repr__(self) -> str:
        return f"<VariableScope name={self._name!r} reuse={self._reuse}>"


def _value_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype.base_dtype
    if hasattr(value, "_as_graph_element") and hasattr(value, "dtype"):
        return dtypes.as_dtype(value.dtype).base_dtype
    return dtypes.as_dtype(_infer_numpy(value, None).dtype)


class _VariableScopeStore(threading.local):
    """The current variable scope and per-name open counts (thread-local, per graph)."""

    def __init__(self):
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name,
                                                                                0) + 1

    def close_variable_subscopes(self, scope_name) -> None:
        for name in list(self.variable_scopes_count):
            if scope_name is None or name.startswith(scope_name + "/"):
                self.variable_scopes_count[name] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def get_variable_scope_store() -> _VariableScopeStore:
    store = graph_mod.get_collection(_VARSCOPESTORE_KEY)
    if store:
        return store[0]
    store = _VariableScopeStore()
    graph_mod.add_to_collection(_VARSCOPESTORE_KEY, store)
    return store


def get_variable_scope() -> VariableScope:
    """The current VariableScope of the default graph."""
    return get_variable_scope_store().current_scope


def _get_default_variable_store() -> _VariableStore:
    store = graph_mod.get_collection(_VARSTORE_KEY)
    if store:
        return store[0]
    store = _VariableStore()
    graph_mod.add_to_collection(_VARSTORE_KEY, store)
    return store


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=variables.VariableSynchronization.AUTO,
                 aggregation=variables.VariableAggregation.NONE):
    """Gets an existing variable with these parameters or creates a new one.

    The full name is the current variable scope's name plus `name`; whether an existing
    variable may be returned, or a new one created, follows the scope's `reuse`.

    Args:
        name: the variable's name within the current variable scope.
        shape: its shape (omit when `initializer` is a value or Tensor).
        dtype: its dtype (default: the scope's, float32).
        initializer: an initializer (`tf.zeros_initializer()`, ...), a Tensor, or a Python/NumPy
            value. Default: the scope's, else glorot_uniform for floats and zeros for ints,
            bools and strings.
        regularizer: `fn(variable) -> loss tensor or None`; losses go to
            REGULARIZATION_LOSSES.
        trainable: add to TRAINABLE_VARIABLES (default True).
        collections: graph collections (default [GLOBAL_VARIABLES]).
        caching_device, partitioner, validate_shape, use_resource, constraint,
        synchronization, aggregation: as for `tf.Variable` (partitioner: see module doc).
        custom_getter: `fn(getter, name, *args, **kwargs)` wrapping the real getter.

    Returns:
        The Variable.

    Raises:
        ValueError: creating an existing variable without reuse, reusing a missing one, or a
            shape/dtype mismatch with the variable being shared.

    Example:
        >>> with tf.variable_scope("dense"):
        ...     w = tf.get_variable("kernel", [3, 4])
        >>> w.name
        'dense/kernel:0'
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections,
        caching_device=caching_device, partitioner=partitioner, validate_shape=validate_shape,
        use_resource=use_resource, custom_getter=custom_getter, constraint=constraint,
        synchronization=synchronization, aggregation=aggregation)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, caching_device=None,
                       partitioner=None, validate_shape=True, use_resource=None,
                       custom_getter=None, constraint=None,
                       synchronization=variables.VariableSynchronization.AUTO,
                       aggregation=variables.VariableAggregation.NONE):
    """`get_variable` into LOCAL_VARIABLES (not trainable, not saved by default)."""
    collections = [GraphKeys.LOCAL_VARIABLES] + list(collections or [])
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, trainable=False, collections=collections,
                        caching_device=caching_device, partitioner=partitioner,
                        validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint,
                        synchronization=synchronization, aggregation=aggregation)


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    """Chains getters: the new getter receives the old one (wrapping the true getter)."""
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped_custom_getter


def _get_unique_variable_scope(prefix: str) -> str:
    store = get_variable_scope_store()
    current = get_variable_scope()
    name = f"{current.name}/{prefix}" if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    index = 1
    while store.variable_scope_count(f"{name}_{index}") > 0:
        index += 1
    return f"{prefix}_{index}"


_SETTERS = ("initializer", "regularizer", "caching_device", "partitioner", "dtype",
            "use_resource")


class _PureVariableScope:
    """Enters a variable scope without touching name scopes."""

    def __init__(self, name_or_scope, reuse=None, old_name_scope=None, constraint=None,
                 **defaults):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._old_name_scope = old_name_scope
        self._constraint = constraint
        self._defaults = defaults
        self._store = get_variable_scope_store()
        self._last = None

    def _configure(self, scope: VariableScope, inherited_getter) -> VariableScope:
        for key in _SETTERS:
            value = self._defaults.get(key)
            if value is not None:
                getattr(scope, f"set_{key}")(value)
        custom_getter = self._defaults.get("custom_getter")
        if custom_getter is not None:
            scope.set_custom_getter(_maybe_wrap_custom_getter(custom_getter, inherited_getter))
        return scope

    def __enter__(self) -> VariableScope:
        self._old = self._store.current_scope
        source = self._name_or_scope
        if isinstance(source, VariableScope):
            self._new_name = source.name
            scope = VariableScope(
                source.reuse if not self._reuse else self._reuse, name=source.name,
                initializer=source.initializer, regularizer=source.regularizer,
                caching_device=source.caching_device, partitioner=source.partitioner,
                dtype=source.dtype, custom_getter=source.custom_getter,
                name_scope=source.original_name_scope, use_resource=source.use_resource,
                constraint=self._constraint)
            self._configure(scope, source.custom_getter)
            self._store.open_variable_scope(self._new_name)
            self._old_counts = copy.copy(self._store.variable_scopes_count)
        else:
            old = self._old
            self._new_name = f"{old.name}/{source}" if old.name else source
            reuse = self._reuse or old.reuse
            scope = VariableScope(
                reuse, name=self._new_name, initializer=old.initializer,
                regularizer=old.regularizer, caching_device=old.caching_device,
                partitioner=old.partitioner, dtype=old.dtype, use_resource=old.use_resource,
                custom_getter=old.custom_getter,
                name_scope=self._old_name_scope if self._old_name_scope is not None else source,
                constraint=self._constraint)
            self._configure(scope, old.custom_getter)
            self._store.open_variable_scope(self._new_name)
        self._store.current_scope = scope
        self._last = scope
        return scope

    def __exit__(self, *exc) -> None:
        if self._store.current_scope is not self._last:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            self._store.variable_scopes_count = self._old_counts
        else:
            self._store.close_variable_subscopes(self._new_name)
        self._store.current_scope = self._old


class variable_scope:  # noqa: N801 - TF1 name
    """A context manager opening a variable scope (and, by default, a name scope).

    `with tf.variable_scope("a"):` names variables "a/..."; reopening "a" later reuses the
    variable scope name but opens name scope "a_1". A VariableScope object jumps back to that
    scope (keeping its name) from anywhere. `default_name` makes a unique scope name
    ("dense", "dense_1", ...) when `name_or_scope` is None.

    Example:
        >>> with tf.variable_scope("foo", reuse=tf.AUTO_REUSE):
        ...     v = tf.get_variable("v", [1])
        >>> v.name
        'foo/v:0'
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                 reuse=None, dtype=None, use_resource=None, constraint=None,
                 auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None  # no non-inheriting scopes: False behaves as None
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(f"The auxiliary_name_scope must be `True` or `False`, while get "
                            f"{auxiliary_name_scope}")
        if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values
        self._reuse = reuse
        self._constraint = constraint
        self._defaults = dict(initializer=initializer, regularizer=regularizer,
                              caching_device=caching_device, partitioner=partitioner,
                              custom_getter=custom_getter, dtype=dtype,
                              use_resource=use_resource)
        self._auxiliary_name_scope = auxiliary_name_scope
        self._graph = _graph_of(values)
        self._name_scope_ctx = None
        self._pure = None

    def __enter__(self) -> VariableScope:
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        try:
            return self._enter()
        except BaseException:
            self._graph_ctx.__exit__(None, None, None)
            raise

    def _enter_name_scope(self, name):
        ctx = self._graph.name_scope(name)
        entered = ctx.__enter__()
        self._name_scope_ctx = ctx
        self._name_scope_arg = name
        return entered

    def _enter(self) -> VariableScope:
        if self._pure is not None:
            # Re-entering the same object: TF1 opens its name scope again (made unique) and
            # the same variable scope.
            if self._name_scope_arg is not None:
                self._enter_name_scope(self._name_scope_arg)
            return self._pure.__enter__()
        self._name_scope_arg = None
        current_name_scope = None
        if not self._auxiliary_name_scope:
            current = self._graph.get_name_scope()
            current_name_scope = current + "/" if current else ""
        source = self._name_or_scope
        if source is not None:
            short = source if isinstance(source, str) else source.name.split("/")[-1]
            if short or current_name_scope is not None:
                entered = self._enter_name_scope(
                    current_name_scope if current_name_scope is not None else short)
                old_name_scope = entered if isinstance(source, str) else \
                    source.original_name_scope
            else:
                old_name_scope = None
            pure = _PureVariableScope(source, reuse=self._reuse, old_name_scope=old_name_scope,
                                      constraint=self._constraint, **self._defaults)
        else:
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            entered = self._enter_name_scope(
                current_name_scope if current_name_scope is not None else self._default_name)
            unique = _get_unique_variable_scope(self._default_name)
            pure = _PureVariableScope(unique, old_name_scope=entered,
                                      constraint=self._constraint, **self._defaults)
        try:
            scope = pure.__enter__()
        except BaseException:
            if self._name_scope_ctx is not None:
                self._name_scope_ctx.__exit__(None, None, None)
                self._name_scope_ctx = None
            raise
        self._pure = pure
        return scope

    def __exit__(self, *exc):
        try:
            self._pure.__exit__(*exc)
        finally:
            try:
                if self._name_scope_ctx is not None:
                    self._name_scope_ctx.__exit__(*exc)
                    self._name_scope_ctx = None
            finally:
                self._graph_ctx.__exit__(*exc)
        return False


def _graph_of(values):
    for value in values or ():
        graph = getattr(value, "graph", None)
        if graph is not None:
            return graph
    return graph_mod.get_default_graph()


def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """Deprecated: `variable_scope(name_or_scope, default_name, values, ...)`."""
    return variable_scope(name_or_scope, default_name=default_name, values=values,
                          initializer=initializer, regularizer=regularizer,
                          caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                          use_resource=use_resource, constraint=constraint)
