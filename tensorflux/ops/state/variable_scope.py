"""`tf.get_variable` and `tf.variable_scope`: named, shareable variables (TF1 semantics).

Each graph holds one variable store (collection `("__variable_store",)`) mapping full names to
the Variables created through `get_variable`, and one scope store (`("__varscope",)`) with the
current VariableScope. Reuse follows TF1: `reuse=False` (the root default) refuses an existing
name, `reuse=True` refuses a missing one, `tf.AUTO_REUSE` creates or returns; reuse is
inherited by sub-scopes. Variable names depend on variable scopes only, not on name scopes.
A `partitioner` (argument or scope default) makes a `PartitionedVariable` of shards.
"""

from __future__ import annotations

import copy
import enum
import functools
import threading

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import _infer_numpy
from tensorflux.ops.state import variables
from tensorflux.ops.state.variable_store import _VariableStore

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
        synchronization, aggregation: as for `tf.Variable`; with `partitioner`
            (`fn(shape, dtype) -> shards per axis`) the result is a PartitionedVariable.
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
