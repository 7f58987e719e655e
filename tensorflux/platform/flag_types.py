"""Flag objects and value parsers for `tf.app.flags` (see flags.py for the semantics)."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable


class Error(Exception):
    """Base class of every flags error."""


class DuplicateFlagError(Error):
    """A flag name was defined twice."""


class UnrecognizedFlagError(Error):
    """An argument or attribute names no defined flag."""

    def __init__(self, flagname: str, flagvalue: str = "", suggestions: Iterable[str] = ()):
        self.flagname = flagname
        self.flagvalue = flagvalue
        suggestions = list(suggestions)
        hint = f". Did you mean: {', '.join(suggestions)} ?" if suggestions else ""
        super().__init__(f"Unknown command line flag '{flagname}'{hint}")


class IllegalFlagValueError(Error):
    """A flag was given a value its parser or a validator refuses."""


class ValidationError(Error):
    """Raised by a validator's checker to reject a value with its own message."""


class UnparsedFlagAccessError(Error):
    """Kept for absl compatibility; reading before parsing parses lazily here instead."""


# -- parsers: str (or default) -> value; raise ValueError/TypeError with the reason ----------

_TRUE = ("true", "t", "1")
_FALSE = ("false", "f", "0")


def _parse_string(argument):
    return argument


def _parse_bool(argument):
    if isinstance(argument, bool):
        return argument
    if isinstance(argument, str):
        if argument.lower() in _TRUE:
            return True
        if argument.lower() in _FALSE:
            return False
    elif isinstance(argument, int) and argument in (0, 1):
        return bool(argument)
    raise ValueError(f"Non-boolean argument to boolean flag: {argument!r}")


def _number_parser(convert: Callable, kind: str, lower, upper) -> Callable:
    def parse(argument):
        if isinstance(argument, bool) or not isinstance(argument, (str, int, float)):
            raise TypeError(f"expected a string or {kind}, got {type(argument).__name__}")
        value = convert(argument)
        if lower is not None and value < lower:
            raise ValueError(f"{value} is not {kind} >= {lower}")
        if upper is not None and value > upper:
            raise ValueError(f"{value} is not {kind} <= {upper}")
        return value

    return parse


def _to_int(argument) -> int:
    if isinstance(argument, float):
        if not argument.is_integer():
            raise ValueError(f"{argument} is not an integer")
        return int(argument)
    if isinstance(argument, int):
        return argument
    text = argument.strip()
    base = 10
    if len(text) > 2 and text[0] == "0" and text[1] in "xXoObB":
        base = {"x": 16, "o": 8, "b": 2}[text[1].lower()]
    return int(text, base)


def _enum_parser(enum_values: list[str], case_sensitive: bool) -> Callable:
    def parse(argument):
        for value in enum_values:
            if argument == value or (not case_sensitive and str(argument).upper() == value.upper()):
                return value
        raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")

    return parse


def _parse_list(argument):
    if isinstance(argument, (list, tuple)):
        return list(argument)
    if not argument:
        return []
    return [item.strip() for item in next(csv.reader([argument], strict=True))]


# -- flags -------------------------------------------------------------------------------------


class Flag:
    """One defined flag: its parser, default, current value and how often the user set it.

    `value` is always the parsed value (or None); `present` counts command-line occurrences and
    `using_default_value` is False once the command line or an assignment has set the flag.
    """

    def __init__(
        self,
        parse: Callable,
        name: str,
        default,
        help: str | None,
        *,
        boolean: bool = False,
        short_name: str | None = None,
        type_name: str = "",
        allow_override: bool = False,
    ):
        self._parse_fn = parse
        self.name = name
        self.help = help or "(no help available)"
        self.boolean = boolean
        self.short_name = short_name
        self.type_name = type_name
        self.allow_override = allow_override
        self.present = 0
        self.using_default_value = True
        self.defined_at = ""
        self.default = self._convert_default(default)
        self.value = self.default

    def _convert(self, argument):
        try:
            return self._parse_fn(argument)
        except (TypeError, ValueError) as e:
            raise IllegalFlagValueError(f"flag --{self.name}={argument}: {e}") from e

    def _convert_default(self, default):
        return None if default is None else self._convert(default)

    def parse(self, argument, first_in_parse: bool = True) -> None:
        """Sets the value from a command-line string; raises IllegalFlagValueError."""
        self.value = self._convert(argument)
        self.present += 1
        self.using_default_value = False

    def set_default(self, default) -> None:
        self.default = self._convert_default(default)
        if self.using_default_value:
            self.value = self.default

    def unparse(self) -> None:
        self.value = self.default
        self.present = 0
        self.using_default_value = True

    def __str__(self) -> str:
        # TF <= 1.4 kept values in `FLAGS.__flags`; programs print its items.
        return str(self.value)

    def __repr__(self) -> str:
        return f"Flag(--{self.name}={self.value!r}, default={self.default!r})"


class _MultiFlag(Flag):
    """A flag that may repeat: its value is a list of every occurrence, in order."""

    def _convert_default(self, default):
        if default is None:
            return None
        items = default if isinstance(default, (list, tuple)) else [default]
        return [self._convert(item) for item in items]

    def parse(self, argument, first_in_parse: bool = True) -> None:
        items = argument if isinstance(argument, (list, tuple)) else [argument]
        values = [self._convert(item) for item in items]
        # NOTE: the first occurrence in each parse replaces the default (or the result of an
        # earlier parse, e.g. the lazy one) rather than extending it.
        self.value = values if first_in_parse or self.value is None else self.value + values
        self.present += len(values)
        self.using_default_value = False


class FlagHolder:
    """What `DEFINE_*` returns (as absl does): a typed handle on one flag of a FlagValues."""

    def __init__(self, flag_values, flag: Flag):
        self._flag_values = flag_values
        self.name = flag.name

    @property
    def value(self):
        return getattr(self._flag_values, self.name)

    @property
    def default(self):
        return self._flag_values[self.name].default

    @property
    def present(self) -> bool:
        return bool(self._flag_values[self.name].present)

    def __repr__(self) -> str:
        return f"FlagHolder(--{self.name})"
