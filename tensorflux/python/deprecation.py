"""`tensorflow.python.util.deprecation`: the decorators TF1 code marks its own deprecated
functions with, and the switch programs of that era flip to silence deprecation warnings
(`deprecation._PRINT_DEPRECATION_WARNINGS = False`).

A decorated function logs one warning through `tf.logging` (once per function when
`warn_once`), naming the function, the date it goes away and what to use instead, and then
runs unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

from tensorflux.platform import tf_logging

_PRINT_DEPRECATION_WARNINGS = True
_WARNED = set()


@contextlib.contextmanager
def silence():
    """Within this block no deprecation warning is printed."""
    global _PRINT_DEPRECATION_WARNINGS
    saved = _PRINT_DEPRECATION_WARNINGS
    _PRINT_DEPRECATION_WARNINGS = False
    try:
        yield
    finally:
        _PRINT_DEPRECATION_WARNINGS = saved


def _validate(date, instructions):
    if date is not None and (not isinstance(date, str) or len(date) != 10
                             or date[4] != "-" or date[7] != "-"):
        raise ValueError(f"Date must be YYYY-MM-DD, got {date!r}.")
    if not instructions:
        raise ValueError("Don't deprecate things without conversion instructions!")


def _warn(key, warn_once, message):
    if not _PRINT_DEPRECATION_WARNINGS or (warn_once and key in _WARNED):
        return
    _WARNED.add(key)
    tf_logging.warning(message)


def _when(date):
    return "in a future version" if date is None else f"after {date}"


def deprecated(date, instructions, warn_once=True):
    """Marks a function or class as deprecated: calling it logs a warning, then runs it.

    Args:
        date: "YYYY-MM-DD" when it is removed, or None for "in a future version".
        instructions: what to use instead (non-empty).
        warn_once: warn on the first call only.

    Raises:
        ValueError: on a malformed date or empty instructions.
    """
    _validate(date, instructions)

    def decorate(func):
        name = getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))
        message = (f"From {func.__module__}: {name} is deprecated and will be removed "
                   f"{_when(date)}.\nInstructions for updating:\n{instructions}")
        if inspect.isclass(func):
            init = func.__init__

            @functools.wraps(init)
            def new_init(*args, **kwargs):
                _warn(func, warn_once, message)
                return init(*args, **kwargs)

            func.__init__ = new_init
            return func

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            _warn(func, warn_once, message)
            return func(*args, **kwargs)

        return wrapper

    return decorate


def deprecated_args(date, instructions, *deprecated_arg_names_or_tuples, **kwargs):
    """Marks arguments of a function as deprecated: passing one (or, for a `(name, value)`
    tuple, passing that value) logs a warning naming it.

    Raises:
        ValueError: on a malformed date, empty instructions or no argument named.
    """
    _validate(date, instructions)
    warn_once = kwargs.pop("warn_once", True)
    if kwargs:
        raise ValueError(f"Illegal argument to deprecated_args: {sorted(kwargs)}")
    if not deprecated_arg_names_or_tuples:
        raise ValueError("Specify which argument is deprecated.")
    specs = {}
    for spec in deprecated_arg_names_or_tuples:
        if isinstance(spec, tuple):
            specs[spec[0]] = (True, spec[1])
        else:
            specs[spec] = (False, None)

    def decorate(func):
        signature = inspect.signature(func)
        missing = set(specs) - set(signature.parameters)
        if missing:
            raise ValueError(f"The following deprecated arguments are not present in the "
                             f"function signature: {sorted(missing)}.")

        @functools.wraps(func)
        def wrapper(*args, **kw):
            bound = signature.bind_partial(*args, **kw).arguments
            for arg, (by_value, value) in specs.items():
                if arg in bound and (not by_value or bound[arg] == value):
                    _warn((func, arg), warn_once,
                          f"From {func.__module__}: calling {func.__qualname__} (from "
                          f"{func.__module__}) with {arg} is deprecated and will be removed "
                          f"{_when(date)}.\nInstructions for updating:\n{instructions}")
            return func(*args, **kw)

        return wrapper

    return decorate


def deprecated_arg_values(date, instructions, warn_once=True, **deprecated_kwargs):
    """Marks argument values as deprecated: calling with `name=value` logs a warning."""
    if not deprecated_kwargs:
        raise ValueError("Specify which argument values are deprecated.")
    return deprecated_args(date, instructions, *deprecated_kwargs.items(),
                           warn_once=warn_once)


def deprecated_alias(deprecated_name, name, func_or_class, warn_once=True):
    """`func_or_class` under an old name: using it logs a warning naming the new one."""
    return deprecated(None, f"Please use {name} instead of {deprecated_name}.",
                      warn_once)(func_or_class)


def deprecated_endpoints(*args):
    """Records the deprecated API names of a function (`_tf_deprecated_api_names`)."""
    def decorate(func):
        if "_tf_deprecated_api_names" in func.__dict__:
            raise ValueError(f"Function {func.__name__} already has deprecated endpoints.")
        func._tf_deprecated_api_names = args
        return func
    return decorate
