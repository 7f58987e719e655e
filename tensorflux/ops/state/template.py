"""`tf.make_template`: wrap a function so that all its calls share one set of variables.

Contract (TF1): the first call opens a fresh variable scope (`name_`, made unique: `tmpl`,
`tmpl_1`, ...) and creates the variables the function gets with `tf.get_variable`; every later
call re-enters that scope with `reuse=True`, under a new name scope for its ops (`tmpl_1/...`).
Creating a trainable variable on a later call is a `ValueError` (it is almost always a
`tf.Variable` that should have been `tf.get_variable`).
"""

from __future__ import annotations

import functools
import sys
import traceback

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops.state import variable_scope as vs
from tensorflux.platform import tf_logging as logging

__all__ = ["make_template"]


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None,
                  **kwargs):
    """Returns a `Template` calling `func_(*args, **kwargs)` with shared variables.

    Args:
        name_: the variable scope's base name (made unique on first use).
        func_: the function to wrap; it must create variables with `tf.get_variable`.
        create_scope_now_: open the variable scope now (in the current scope) rather than at
            the first call.
        unique_name_: an exact scope name to use instead of a unique one from `name_`.
        custom_getter_: a custom getter for the template's variable scope.
        **kwargs: keyword arguments bound to `func_`.

    Returns:
        A `Template` (callable like `func_`).

    Raises:
        ValueError: `name_` is None.

    Example:
        >>> scale = tf.make_template("scale", lambda x: x * tf.get_variable("w", []))
        >>> a, b = scale(x1), scale(x2)   # both use "scale/w"
    """
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)


def _skip_common_stack_elements(stacktrace, base_case):
    """The frames of `stacktrace` after the ones it shares with `base_case` (at least its last
    frame): where a template was defined, relative to where it is being called."""
    for i, (frame, base) in enumerate(zip(stacktrace, base_case)):
        if frame != base:
            return stacktrace[i:]
    return stacktrace[-1:]


class Template:
    """A function wrapped so that its variables are created once and shared by every call.

    An exception from the wrapped function gets the template's definition site appended to
    its message ("originally defined at: ..."), as in TF.
    """

    def __init__(self, name, func, create_scope_now=False, unique_name=None,
                 custom_getter=None, create_graph_function=False):
        if name is None:
            raise ValueError("name cannot be None.")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variables_created = False
        self._variable_scope = None
        self._stacktrace = traceback.format_stack()[:-2]
        if create_scope_now:
            scope_name = unique_name or vs._get_unique_variable_scope(name)
            with vs._PureVariableScope(scope_name, custom_getter=custom_getter) as scope:
                self._variable_scope = scope

    def _call_func(self, args, kwargs):
        graph = graph_mod.get_default_graph()
        vars_at_start = len(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
        trainable_at_start = len(graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        if not self._variables_created:
            self._variables_created = True
            return result
        trainable = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        if len(trainable) != trainable_at_start:
            raise ValueError(f"Trainable variable created when calling a template after the "
                             f"first time, perhaps you used tf.Variable when you meant "
                             f"tf.get_variable: {trainable[trainable_at_start:]}")
        global_vars = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
        if len(global_vars) != vars_at_start:
            logging.info("New variables created when calling a template after the first time, "
                         "perhaps you used tf.Variable when you meant tf.get_variable: %s",
                         global_vars[vars_at_start:])
        return result

    def __call__(self, *args, **kwargs):
        try:
            if self._variable_scope is not None:
                with vs.variable_scope(self._variable_scope,
                                       reuse=True if self._variables_created else None):
                    return self._call_func(args, kwargs)
            with vs.variable_scope(self._unique_name, self._name,
                                   custom_getter=self._custom_getter) as scope:
                self._variable_scope = scope
                return self._call_func(args, kwargs)
        except Exception:
            err = sys.exc_info()[1]
            if err.args and isinstance(err.args[0], str):
                defined = "".join(_skip_common_stack_elements(self._stacktrace,
                                                              traceback.format_stack()))
                err.args = (f"{err.args[0]}\n\noriginally defined at:\n{defined}",
                            *err.args[1:])
            raise

    @property
    def name(self) -> str:
        """The name given to the template."""
        return self._name

    @property
    def func(self):
        """The wrapped function (with the bound keyword arguments)."""
        return self._func

    @property
    def variable_scope(self):
        """The template's VariableScope (None before the first call unless created now)."""
        return self._variable_scope

    var_scope = variable_scope

    @property
    def variable_scope_name(self):
        """The scope name with a trailing "/" (the prefix of the template's variables)."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _collection(self, key) -> list:
        if self._variable_scope is None:
            return []
        return graph_mod.get_default_graph().get_collection(key, self.variable_scope_name)

    @property
    def variables(self) -> list:
        """The global variables under the template's scope."""
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    global_variables = variables

    @property
    def trainable_variables(self) -> list:
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        trainable = set(self.trainable_variables)
        return [v for v in self.variables if v not in trainable]

    non_trainable_weights = non_trainable_variables

    @property
    def local_variables(self) -> list:
        return self._collection(GraphKeys.LOCAL_VARIABLES)

    weights = variables
