"""`arg_scope`: default keyword arguments for a set of functions, scoped by a `with` block.

Contract: a function decorated with `add_arg_scope` reads the innermost scope's defaults for
it on every call; arguments passed explicitly win over scope defaults, an inner scope's values
win over an outer one's, and leaving a scope restores the outer defaults. Scopes are
per-thread.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading

__all__ = ["arg_scope", "add_arg_scope", "current_arg_scope", "has_arg_scope",
           "arg_scoped_arguments", "arg_scope_func_key"]

_state = threading.local()


def _stack() -> list:
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


def arg_scope_func_key(op) -> str:
    """The key under which `op`'s defaults live in a scope (shared by its aliases)."""
    return getattr(op, "_key_op", str(op))


def current_arg_scope() -> dict:
    """The innermost scope: {function key: {argument: default}} (empty outside any scope)."""
    stack = _stack()
    return stack[-1] if stack else {}


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Sets default `kwargs` for every function in `list_ops_or_scope` inside the block.

    Args:
        list_ops_or_scope: a list/tuple of `add_arg_scope`-decorated functions, or a scope dict
            yielded by an earlier `arg_scope` (re-entered as it was; `kwargs` must be empty).
        **kwargs: the defaults.

    Yields:
        The current scope dict (re-enter it later with `with arg_scope(sc):`).

    Raises:
        ValueError: a scope dict with kwargs, or a function not decorated with add_arg_scope.
        TypeError: `list_ops_or_scope` is neither a list/tuple nor a dict.

    Example:
        >>> with slim.arg_scope([slim.conv2d], padding="VALID") as sc:
        ...     net = slim.conv2d(images, 32, [3, 3])  # padding="VALID"
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, "
                             "kwargs must be empty.")
        scope = list_ops_or_scope.copy()
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope "
                            "(i.e. dict)")
        scope = current_arg_scope().copy()
        for op in list_ops_or_scope:
            key = arg_scope_func_key(op)
            if not has_arg_scope(op):
                raise ValueError(f"{key} is not decorated with @add_arg_scope")
            merged = dict(scope.get(key, {}))
            merged.update(kwargs)
            scope[key] = merged
    _stack().append(scope)
    try:
        yield scope
    finally:
        _stack().pop()


def add_arg_scope(func):
    """Decorates `func` so that `arg_scope` can supply defaults for its arguments.

    Returns:
        The wrapped function (same name, docstring and signature).
    """
    key = arg_scope_func_key(func)

    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        scope = current_arg_scope()
        if key in scope:
            current = dict(scope[key])
            current.update(kwargs)
            kwargs = current
        return func(*args, **kwargs)

    func_with_args._key_op = key
    func_with_args._args = _arg_names(func)
    _registered.add(key)
    return func_with_args


_registered: set = set()


def _arg_names(func) -> tuple:
    params = inspect.signature(func).parameters.values()
    return tuple(p.name for p in params
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY, p.POSITIONAL_ONLY))


def has_arg_scope(func) -> bool:
    """True when `func` was decorated with `add_arg_scope`."""
    return arg_scope_func_key(func) in _registered


def arg_scoped_arguments(func) -> tuple:
    """The argument names of an `add_arg_scope`-decorated function.

    Raises:
        ValueError: `func` is not decorated with add_arg_scope.
    """
    if not has_arg_scope(func):
        raise ValueError(f"{arg_scope_func_key(func)} is not decorated with @add_arg_scope")
    return func._args
