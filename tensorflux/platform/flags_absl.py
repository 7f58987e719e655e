"""The rest of absl.flags' API that TF 1.15's `tf.flags` / `tf.app.flags` exposes.

Generic definitions (`DEFINE`, `DEFINE_multi`, `DEFINE_flag` with absl-style parser objects),
`DEFINE_multi_enum`, `DEFINE_enum_class`, `DEFINE_spaceseplist`, `DEFINE_alias`; multi-flag
validators and mutual exclusion (checked at parse time and on assignment, failing with
`IllegalFlagValueError`); key flags (`declare_key_flag`, `adopt_module_key_flags`,
`disclaim_key_flags`); `flag_dict_to_args`, `set_default` and `override_value` on FlagHolders.
Re-exported by `tensorflux.platform.flags`, which this module builds on.

Example:
    >>> fv = flags.FlagValues()
    >>> _ = flags.DEFINE_string("a", None, "", flag_values=fv)
    >>> _ = flags.DEFINE_string("b", None, "", flag_values=fv)
    >>> flags.mark_flags_as_mutual_exclusive(["a", "b"], flag_values=fv)
    >>> fv(["prog", "--a=1", "--b=2"])  # IllegalFlagValueError: flags a=1, b=2: At most one ...
"""

from __future__ import annotations

import enum
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tensorflux.platform import flag_defines
from tensorflux.platform import flags as core
from tensorflux.platform.flag_types import (
    Error,
    Flag,
    FlagHolder,
    UnrecognizedFlagError,
    ValidationError,
    _enum_parser,
    _MultiFlag,
    _number_parser,
    _parse_bool,
    _parse_list,
    _to_int,
)

__all__ = ["ArgumentParser", "ArgumentSerializer", "ListSerializer", "BooleanParser",
           "IntegerParser", "FloatParser", "EnumParser", "ListParser",
           "WhitespaceSeparatedListParser", "CsvListSerializer", "DEFINE", "DEFINE_multi",
           "DEFINE_flag", "DEFINE_multi_enum", "DEFINE_enum_class", "DEFINE_spaceseplist",
           "DEFINE_alias", "register_multi_flags_validator", "multi_flags_validator",
           "mark_flags_as_mutual_exclusive", "mark_bool_flags_as_mutual_exclusive",
           "declare_key_flag", "adopt_module_key_flags", "disclaim_key_flags",
           "flag_dict_to_args", "set_default", "override_value"]


# -- absl-style parser and serializer objects --------------------------------------------------


class ArgumentParser:
    """Base of absl parser objects: `parse(argument)` returns the value (here: the string)."""

    syntactic_help = ""

    def parse(self, argument):
        if not isinstance(argument, str):
            raise TypeError(f'flag value must be a string, found "{type(argument)}"')
        return argument

    def flag_type(self) -> str:
        return "string"


class ArgumentSerializer:
    """Turns a value back into its command-line text."""

    def serialize(self, value) -> str:
        return str(value)


class ListSerializer(ArgumentSerializer):
    """Joins a list value with `list_sep`."""

    def __init__(self, list_sep: str):
        self.list_sep = list_sep

    def serialize(self, value) -> str:
        return self.list_sep.join(str(x) for x in value)


class BooleanParser(ArgumentParser):
    """true/false/t/f/1/0 (any case) or a bool."""

    def parse(self, argument):
        return _parse_bool(argument)

    def flag_type(self) -> str:
        return "bool"


class IntegerParser(ArgumentParser):
    """An integer (decimal, 0x, 0o, 0b) within optional bounds."""

    def __init__(self, lower_bound=None, upper_bound=None):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self._parse = _number_parser(_to_int, "an integer", lower_bound, upper_bound)

    def parse(self, argument):
        return self._parse(argument)

    def flag_type(self) -> str:
        return "int"


class FloatParser(ArgumentParser):
    """A float within optional bounds."""

    def __init__(self, lower_bound=None, upper_bound=None):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self._parse = _number_parser(float, "a number", lower_bound, upper_bound)

    def parse(self, argument):
        return self._parse(argument)

    def flag_type(self) -> str:
        return "float"


class EnumParser(ArgumentParser):
    """One of `enum_values` (the canonical spelling when not case sensitive)."""

    def __init__(self, enum_values, case_sensitive: bool = True):
        self.enum_values = list(enum_values)
        if not self.enum_values:
            raise ValueError(f"enum_values cannot be empty, found \"{enum_values}\"")
        self.case_sensitive = case_sensitive
        self._parse = _enum_parser(self.enum_values, case_sensitive)

    def parse(self, argument):
        return self._parse(argument)

    def flag_type(self) -> str:
        return "string enum"


class ListParser(ArgumentParser):
    """A comma-separated list (CSV quoting) or a list."""

    def parse(self, argument):
        return _parse_list(argument)

    def flag_type(self) -> str:
        return "list"


class WhitespaceSeparatedListParser(ArgumentParser):
    """A whitespace-separated list (commas too with `comma_compat`) or a list."""

    def __init__(self, comma_compat: bool = False):
        self._comma_compat = comma_compat

    def parse(self, argument):
        if isinstance(argument, (list, tuple)):
            return list(argument)
        if not isinstance(argument, str):
            raise TypeError(f"expected a string or a list, got {type(argument).__name__}")
        return (argument.replace(",", " ") if self._comma_compat else argument).split()

    def flag_type(self) -> str:
        return "whitespace separated list"


class CsvListSerializer(ListSerializer):
    """Joins a list with `list_sep` (absl quotes items; plain items read back the same)."""


def _parse_with(parser) -> Callable:
    if not callable(getattr(parser, "parse", None)):
        raise TypeError(f"parser must have a parse(argument) method, got {parser!r}")
    return parser.parse


def _type_name(parser) -> str:
    flag_type = getattr(parser, "flag_type", None)
    return flag_type() if callable(flag_type) else ""


def _options(kwargs: dict) -> dict:
    allowed = {"short_name", "allow_override"}
    unexpected = set(kwargs) - allowed
    if unexpected:
        raise TypeError(f"unexpected keyword arguments: {sorted(unexpected)}")
    return kwargs


# -- DEFINE functions --------------------------------------------------------------------------


def DEFINE(  # noqa: N802 - absl name
    parser, name: str, default, help: str | None, flag_values=None, serializer=None,
    module_name: str | None = None, required: bool = False, **kwargs,
) -> FlagHolder:
    """Defines a flag whose values `parser.parse(text)` produces (absl's generic DEFINE)."""
    del serializer
    flag = Flag(_parse_with(parser), name, default, help, type_name=_type_name(parser),
                **_options(kwargs))
    return flag_defines._define(flag, flag_values, required, module_name)


def DEFINE_multi(  # noqa: N802 - absl name
    parser, serializer, name: str, default, help: str | None, flag_values=None,
    module_name: str | None = None, required: bool = False, **kwargs,
) -> FlagHolder:
    """Defines a repeatable flag parsed by `parser`: `--x=a --x=b` gives `[parse(a), parse(b)]`."""
    del serializer
    flag = _MultiFlag(_parse_with(parser), name, default, help,
                      type_name="repeat this option", **_options(kwargs))
    return flag_defines._define(flag, flag_values, required, module_name)


def DEFINE_flag(  # noqa: N802 - absl name
    flag: Flag, flag_values=None, module_name: str | None = None, required: bool = False,
) -> FlagHolder:
    """Registers an already built Flag object."""
    if not isinstance(flag, Flag):
        raise TypeError(f"DEFINE_flag expects a Flag, got {type(flag).__name__}")
    return flag_defines._define(flag, flag_values, required, module_name)


def DEFINE_multi_enum(  # noqa: N802 - absl name
    name: str, default, enum_values: Iterable[str], help: str | None, flag_values=None,
    case_sensitive: bool = True, required: bool = False, **kwargs,
) -> FlagHolder:
    """Defines a repeatable flag whose every value must be one of `enum_values`."""
    module_name = kwargs.pop("module_name", None)
    enum_values = list(enum_values)
    if not enum_values:
        raise ValueError(f"DEFINE_multi_enum('{name}'): enum_values must not be empty")
    flag = _MultiFlag(_enum_parser(enum_values, case_sensitive), name, default, help,
                      type_name=f"repeat this option; one of <{'|'.join(enum_values)}>",
                      **_options(kwargs))
    return flag_defines._define(flag, flag_values, required, module_name)


def DEFINE_enum_class(  # noqa: N802 - absl name
    name: str, default, enum_class: type[enum.Enum], help: str | None, flag_values=None,
    module_name: str | None = None, case_sensitive: bool = False, required: bool = False,
    **kwargs,
) -> FlagHolder:
    """Defines a flag whose value is a member of `enum_class`, given by member name."""
    if not (isinstance(enum_class, type) and issubclass(enum_class, enum.Enum)):
        raise TypeError(f"{enum_class!r} is not a subclass of Enum.")
    if not enum_class.__members__:
        raise ValueError(f"enum_class cannot be empty, but {enum_class!r} is empty.")
    names = list(enum_class.__members__)
    by_name = _enum_parser(names, case_sensitive)

    def parse(argument):
        return argument if isinstance(argument, enum_class) else enum_class[by_name(argument)]

    flag = Flag(parse, name, default, help, type_name=f"<{'|'.join(names)}>",
                **_options(kwargs))
    return flag_defines._define(flag, flag_values, required, module_name)


def DEFINE_spaceseplist(  # noqa: N802 - absl name
    name: str, default, help: str | None, comma_compat: bool = False, flag_values=None,
    required: bool = False, **kwargs,
) -> FlagHolder:
    """Defines a whitespace-separated list flag (commas also separate if `comma_compat`)."""
    module_name = kwargs.pop("module_name", None)

    parse = WhitespaceSeparatedListParser(comma_compat).parse
    kind = "whitespace or comma" if comma_compat else "whitespace"
    flag = Flag(parse, name, default, help, type_name=f"a {kind} separated list",
                **_options(kwargs))
    return flag_defines._define(flag, flag_values, required, module_name)


class _AliasFlag(Flag):
    """`--alias=v` parses into the original flag; reads and writes go to the original."""

    def __init__(self, original: Flag, name: str):  # noqa: D107 - no Flag.__init__: no value
        self._original = original
        self.original_name = original.name
        self._parse_fn = original._parse_fn
        self.name = name
        self.help = f"Alias for --{original.name}."
        self.boolean = original.boolean
        self.short_name = None
        self.type_name = original.type_name
        self.allow_override = False
        self.present = 0
        self.using_default_value = True
        self.defined_at = ""

    @property
    def value(self):
        return self._original.value

    @value.setter
    def value(self, value):
        self._original.value = value
        self._original.using_default_value = False

    @property
    def default(self):
        return self._original.default

    def parse(self, argument, first_in_parse: bool = True) -> None:
        self._original.parse(argument, first_in_parse)
        self.present += 1
        self.using_default_value = False

    def set_default(self, default) -> None:
        self._original.set_default(default)

    def unparse(self) -> None:
        self.present = 0
        self.using_default_value = True


def DEFINE_alias(  # noqa: N802 - absl name
    name: str, original_name: str, flag_values=None, module_name: str | None = None,
) -> FlagHolder:
    """Defines `--name` as another spelling of the defined flag `--original_name`.

    Raises:
      UnrecognizedFlagError: `original_name` is not defined.
    """
    flag_values = core.FLAGS if flag_values is None else flag_values
    if original_name not in flag_values:
        raise UnrecognizedFlagError(original_name)
    return flag_defines._define(_AliasFlag(flag_values[original_name], name), flag_values, False,
                        module_name)


# -- multi-flag validators ---------------------------------------------------------------------


def _resolve(flag_names, flag_values) -> tuple[list[str], Any]:
    names = []
    for item in flag_names:
        if isinstance(item, FlagHolder):
            if flag_values is not None and flag_values is not item._flag_values:
                raise ValueError(f"flag_values must not be customized when operating on a "
                                 f"FlagHolder: {item!r}")
            flag_values = item._flag_values
            names.append(item.name)
        else:
            names.append(item)
    return names, core.FLAGS if flag_values is None else flag_values


def register_multi_flags_validator(
    flag_names: Iterable, multi_flags_checker: Callable[[dict], bool],
    message: str = "Flags validation failed", flag_values=None,
) -> None:
    """Adds a check of several flags together, run after every parse and assignment.

    Args:
      flag_names: names (or FlagHolders) of defined flags.
      multi_flags_checker: takes `{name: value}`; returns False or raises ValidationError.
      message: the reason reported in the IllegalFlagValueError.
      flag_values: the registry; the global FLAGS by default.

    Raises:
      UnrecognizedFlagError: a name is not defined.
    """
    names, flag_values = _resolve(flag_names, flag_values)
    flag_values._add_multi_validator(names, multi_flags_checker, message)


def multi_flags_validator(flag_names: Iterable, message: str = "Flag validation failed",
                          flag_values=None) -> Callable:
    """Decorator form of `register_multi_flags_validator`."""

    def decorate(checker):
        register_multi_flags_validator(flag_names, checker, message, flag_values)
        return checker

    return decorate


def mark_flags_as_mutual_exclusive(flag_names: Iterable, required: bool = False,
                                   flag_values=None) -> None:
    """At most one (exactly one if `required`) of the flags may have a value other than None."""
    names, flag_values = _resolve(flag_names, flag_values)
    for name in names:
        if flag_values[name].default is not None:
            warnings.warn(f"Flag --{name} has a non-None default value. That does not make sense "
                          "with mark_flags_as_mutual_exclusive, which checks whether the listed "
                          "flags have a value other than None.", stacklevel=2)

    def check(values: dict) -> bool:
        count = sum(1 for value in values.values() if value is not None)
        if count == 1 or (not required and count == 0):
            return True
        raise ValidationError(f"{'Exactly' if required else 'At most'} one of "
                              f"({', '.join(names)}) must have a value other than None.")

    flag_values._add_multi_validator(names, check, "")


def mark_bool_flags_as_mutual_exclusive(flag_names: Iterable, required: bool = False,
                                        flag_values=None) -> None:
    """At most one (exactly one if `required`) of the boolean flags may be True.

    Raises:
      ValidationError: a listed flag is not boolean.
    """
    names, flag_values = _resolve(flag_names, flag_values)
    for name in names:
        if not flag_values[name].boolean:
            raise ValidationError(f"Flag --{name} is not Boolean, which is required for flags "
                                  "used in mark_bool_flags_as_mutual_exclusive.")

    def check(values: dict) -> bool:
        count = sum(bool(value) for value in values.values())
        if count == 1 or (not required and count == 0):
            return True
        raise ValidationError(f"{'Exactly' if required else 'At most'} one of "
                              f"({', '.join(names)}) must be True.")

    flag_values._add_multi_validator(names, check, "")


# -- key flags ---------------------------------------------------------------------------------


def declare_key_flag(flag_name, flag_values=None) -> None:
    """Makes a defined flag a key flag of the calling module (listed by its short help).

    Raises:
      ValueError: the flag is not defined.
    """
    names, flag_values = _resolve([flag_name], flag_values)
    if names[0] not in flag_values:
        raise ValueError(f"Flag --{names[0]} is undefined. To set a flag as a key flag first "
                         "define it in Python.")
    flag_values._register_module(flag_defines._caller_module(), names[0], key=True)


def adopt_module_key_flags(module, flag_values=None) -> None:
    """Declares every key flag of `module` a key flag of the calling module.

    Raises:
      Error: `module` is not a module object.
    """
    if not isinstance(module, types.ModuleType):
        raise Error(f"Expected a module object, not {module!r}.")
    flag_values = core.FLAGS if flag_values is None else flag_values
    caller = flag_defines._caller_module()
    for flag in flag_values.get_key_flags_for_module(module.__name__):
        flag_values._register_module(caller, flag.name, key=True)


def disclaim_key_flags() -> None:
    """Flags defined through the calling module count as defined by that module's caller."""
    flag_defines._DISCLAIMED_MODULES.add(sys._getframe(1).f_globals.get("__name__", ""))


# -- values ------------------------------------------------------------------------------------


def flag_dict_to_args(flag_map: dict, multi_flags: set | None = None) -> Iterator[str]:
    """Yields command-line arguments for `{name: value}` (absl's rules).

    None -> `--name`; bools -> `--name` / `--noname`; strings -> `--name=value`; other iterables
    -> one `--name=item` per item for names in `multi_flags`, else `--name=a,b`; anything else
    -> `--name=str(value)`.
    """
    for key, value in flag_map.items():
        if value is None:
            yield f"--{key}"
        elif isinstance(value, bool):
            yield f"--{key}" if value else f"--no{key}"
        elif isinstance(value, (bytes, str)):
            yield f"--{key}={value.decode() if isinstance(value, bytes) else value}"
        else:
            try:
                if multi_flags and key in multi_flags:
                    for item in value:
                        yield f"--{key}={item}"
                else:
                    yield f"--{key}={','.join(str(item) for item in value)}"
            except TypeError:
                yield f"--{key}={value}"


def _holder(flag_holder, what: str) -> FlagHolder:
    if not isinstance(flag_holder, FlagHolder):
        raise TypeError(f"{what}: expected a FlagHolder (what DEFINE_* returns), got "
                        f"{type(flag_holder).__name__}")
    return flag_holder


def set_default(flag_holder: FlagHolder, value) -> None:
    """Changes the default of the flag `flag_holder` refers to (an unset flag follows)."""
    holder = _holder(flag_holder, "set_default")
    holder._flag_values.set_default(holder.name, value)


def override_value(flag_holder: FlagHolder, value) -> None:
    """Sets the flag's value (as `FLAGS.name = value`, validators run); outlives the default."""
    holder = _holder(flag_holder, "override_value")
    setattr(holder._flag_values, holder.name, value)
