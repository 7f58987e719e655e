"""`tf.flags` DEFINE_* functions and single-flag validators (absl semantics).

Each `DEFINE_*` builds a Flag, registers it in a FlagValues (the global `FLAGS` by default),
records the defining module (for key flags) and returns a FlagHolder. Re-exported by
`tensorflux.platform.flags`, which holds FlagValues.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from tensorflux.platform import flags as core
from tensorflux.platform.flag_types import (
    Flag,
    FlagHolder,
    _enum_parser,
    _MultiFlag,
    _number_parser,
    _parse_bool,
    _parse_list,
    _parse_string,
    _to_int,
)

# -- DEFINE functions ------------------------------------------------------------------------

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accepts_tf1_names(define: Callable) -> Callable:
    """TF 1.x accepted (flag_name, default_value, docstring) as keyword names."""

    @functools.wraps(define)
    def wrapper(*args, **kwargs):
        for old, new in _RENAMED_ARGUMENTS.items():
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
        return define(*args, **kwargs)

    return wrapper


def _caller_location() -> str:
    frame = sys._getframe(1)
    while frame is not None and _in_flags_modules(frame):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


# Modules that called `disclaim_key_flags()`: flags defined through them belong to their caller.
_DISCLAIMED_MODULES: set[str] = set()


def _in_flags_modules(frame) -> bool:
    name = frame.f_globals.get("__name__", "")
    return name.startswith("tensorflux.platform.flag") or name in _DISCLAIMED_MODULES


def _caller_module() -> str:
    """The calling module's name outside the flags modules (absl: argv[0] for __main__)."""
    frame = sys._getframe(1)
    while frame is not None and _in_flags_modules(frame):
        frame = frame.f_back
    name = "<unknown>" if frame is None else frame.f_globals.get("__name__", "<unknown>")
    return sys.argv[0] if name == "__main__" and sys.argv and sys.argv[0] else name


def _define(flag: Flag, flag_values: core.FlagValues | None, required: bool,
            module_name: str | None = None) -> FlagHolder:
    flag_values = core.FLAGS if flag_values is None else flag_values
    flag_values._register(flag, _caller_location())
    flag_values._register_module(module_name or _caller_module(), flag.name)
    if required:
        mark_flag_as_required(flag.name, flag_values)
    return FlagHolder(flag_values, flag)


def _common(kwargs: dict) -> dict:
    allowed = {"short_name", "allow_override"}
    unexpected = set(kwargs) - allowed - {"module_name"}
    if unexpected:
        raise TypeError(f"unexpected keyword arguments: {sorted(unexpected)}")
    return {key: value for key, value in kwargs.items() if key in allowed}


@_accepts_tf1_names
def DEFINE_string(  # noqa: N802 - TF1 name
    name: str,
    default: str | None,
    help: str | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a string flag. Example: `DEFINE_string("data_dir", "/tmp", "Input data.")`."""
    flag = Flag(_parse_string, name, default, help, type_name="a string", **_common(kwargs))
    return _define(flag, flag_values, required, kwargs.get("module_name"))


@_accepts_tf1_names
def DEFINE_boolean(  # noqa: N802 - TF1 name
    name: str,
    default: bool | None,
    help: str | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a boolean flag, set by `--name`, `--noname` or `--name=true|false|1|0`."""
    flag = Flag(
        _parse_bool, name, default, help, boolean=True, type_name="a boolean", **_common(kwargs)
    )
    return _define(flag, flag_values, required, kwargs.get("module_name"))


DEFINE_bool = DEFINE_boolean


@_accepts_tf1_names
def DEFINE_integer(  # noqa: N802 - TF1 name
    name: str,
    default: int | None,
    help: str | None = None,
    lower_bound: int | None = None,
    upper_bound: int | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines an integer flag (decimal, `0x` hex or `0o` octal) with optional bounds."""
    parse = _number_parser(_to_int, "an integer", lower_bound, upper_bound)
    flag = Flag(parse, name, default, help, type_name="an integer", **_common(kwargs))
    return _define(flag, flag_values, required, kwargs.get("module_name"))


@_accepts_tf1_names
def DEFINE_float(  # noqa: N802 - TF1 name
    name: str,
    default: float | None,
    help: str | None = None,
    lower_bound: float | None = None,
    upper_bound: float | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a float flag with optional bounds."""
    parse = _number_parser(float, "a number", lower_bound, upper_bound)
    flag = Flag(parse, name, default, help, type_name="a number", **_common(kwargs))
    return _define(flag, flag_values, required, kwargs.get("module_name"))


@_accepts_tf1_names
def DEFINE_enum(  # noqa: N802 - TF1 name
    name: str,
    default: str | None,
    enum_values: Iterable[str],
    help: str | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    case_sensitive: bool = True,
    **kwargs,
) -> FlagHolder:
    """Defines a string flag restricted to `enum_values`; any other value is an error."""
    enum_values = list(enum_values)
    if not enum_values:
        raise ValueError(f"DEFINE_enum('{name}'): enum_values must not be empty")
    flag = Flag(
        _enum_parser(enum_values, case_sensitive),
        name,
        default,
        help,
        type_name=f"one of <{'|'.join(enum_values)}>",
        **_common(kwargs),
    )
    return _define(flag, flag_values, required, kwargs.get("module_name"))


@_accepts_tf1_names
def DEFINE_list(  # noqa: N802 - TF1 name
    name: str,
    default: str | list[str] | None,
    help: str | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a comma-separated list flag: `--names=a,b` gives `["a", "b"]`."""
    flag = Flag(
        _parse_list, name, default, help, type_name="a comma separated list", **_common(kwargs)
    )
    return _define(flag, flag_values, required, kwargs.get("module_name"))


@_accepts_tf1_names
def DEFINE_multi_string(  # noqa: N802 - TF1 name
    name: str,
    default,
    help: str | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a repeatable string flag: `--x=a --x=b` gives `["a", "b"]`."""
    flag = _MultiFlag(
        _parse_string, name, default, help, type_name="repeat this option", **_common(kwargs)
    )
    return _define(flag, flag_values, required, kwargs.get("module_name"))


@_accepts_tf1_names
def DEFINE_multi_integer(  # noqa: N802 - TF1 name
    name: str,
    default,
    help: str | None = None,
    lower_bound: int | None = None,
    upper_bound: int | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a repeatable integer flag: `--x=1 --x=2` gives `[1, 2]`."""
    parse = _number_parser(_to_int, "an integer", lower_bound, upper_bound)
    flag = _MultiFlag(
        parse, name, default, help, type_name="repeat this option; integers", **_common(kwargs)
    )
    return _define(flag, flag_values, required, kwargs.get("module_name"))


@_accepts_tf1_names
def DEFINE_multi_float(  # noqa: N802 - TF1 name
    name: str,
    default,
    help: str | None = None,
    lower_bound: float | None = None,
    upper_bound: float | None = None,
    flag_values: core.FlagValues | None = None,
    required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a repeatable float flag."""
    parse = _number_parser(float, "a number", lower_bound, upper_bound)
    flag = _MultiFlag(
        parse, name, default, help, type_name="repeat this option; numbers", **_common(kwargs)
    )
    return _define(flag, flag_values, required, kwargs.get("module_name"))


# -- validators --------------------------------------------------------------------------------


def register_validator(
    flag_name: str,
    checker: Callable[[Any], bool],
    message: str = "Flag validation failed",
    flag_values: core.FlagValues | None = None,
) -> None:
    """Adds a check run after every parse and assignment of the flag.

    Args:
      flag_name: a defined flag.
      checker: takes the value; returns False or raises ValidationError to reject it.
      message: the reason reported in the IllegalFlagValueError.
      flag_values: the registry; the global FLAGS by default.

    Raises:
      UnrecognizedFlagError: no flag is named `flag_name`.
    """
    flag_values = core.FLAGS if flag_values is None else flag_values
    flag_values._add_validator(flag_name, checker, message)


def validator(
    flag_name: str,
    message: str = "Flag validation failed",
    flag_values: core.FlagValues | None = None,
) -> Callable:
    """Decorator form of `register_validator`."""

    def decorate(checker):
        register_validator(flag_name, checker, message, flag_values)
        return checker

    return decorate


def mark_flag_as_required(flag_name: str, flag_values: core.FlagValues | None = None) -> None:
    """Makes a parse fail unless the flag has a value other than None.

    Raises:
      UnrecognizedFlagError: no flag is named `flag_name`.
    """
    flag_values = core.FLAGS if flag_values is None else flag_values
    if flag_values[flag_name].default is not None:
        warnings.warn(
            f"Flag --{flag_name} has a non-None default value; therefore, "
            "mark_flag_as_required will pass even if flag is not specified in the "
            "command line!",
            stacklevel=2,
        )
    register_validator(
        flag_name,
        lambda value: value is not None,
        f"Flag --{flag_name} must have a value other than None.",
        flag_values,
    )


def mark_flags_as_required(
    flag_names: Iterable[str], flag_values: core.FlagValues | None = None
) -> None:
    """`mark_flag_as_required` for each name."""
    for name in flag_names:
        mark_flag_as_required(name, flag_values)
