"""`tf.app.flags` / `tf.flags`: command-line flags with TensorFlow 1.x (absl) semantics.

A flag is defined once with `DEFINE_*(name, default, help)` and read as `FLAGS.name`. Parsing
follows absl, which TF 1.x wrapped:

* `--name=value`, `--name value` and single-dash `-name=value`; `--` ends the flags.
* booleans: `--name`, `--noname`, `--name=true|false|t|f|1|0` (any case); a boolean never takes
  the next argument as its value.
* `FLAGS(argv)` parses and returns `[argv[0]] + positional arguments`; an unknown flag raises
  `UnrecognizedFlagError`, unless `known_only=True`, which leaves it (and a `--`) in the result.
* a bad value raises `IllegalFlagValueError` naming the flag: `flag --n=abc: invalid literal...`.
* reading a flag before any parse parses `sys.argv` lazily, as TF 1.x's wrapper did. That lazy
  parse is lenient so that it works under test runners: unknown flags are skipped, a bad value
  keeps the default with a warning, and validators are not run. `FLAGS(argv)` is strict.

Example:
    >>> fv = FlagValues()
    >>> _ = DEFINE_integer("batch_size", 32, "Examples per step.", flag_values=fv)
    >>> fv(["prog", "--batch_size=64", "data.txt"])
    ['prog', 'data.txt']
    >>> fv.batch_size
    64
"""

from __future__ import annotations

import difflib
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from tensorflux.platform.flag_files import (  # noqa: F401 - re-exported
    CantOpenFlagFileError,
    expand_flagfiles,
)
from tensorflux.platform.flag_types import (  # noqa: F401 - re-exported
    _FALSE,
    _TRUE,
    DuplicateFlagError,
    Error,
    Flag,
    FlagHolder,
    IllegalFlagValueError,
    UnparsedFlagAccessError,
    UnrecognizedFlagError,
    ValidationError,
    _enum_parser,
    _MultiFlag,
    _number_parser,
    _parse_bool,
    _parse_list,
    _parse_string,
    _to_int,
)


class FlagValues:
    """A registry of flags and their parsed values.

    Names are unique: defining one twice raises `DuplicateFlagError` naming where the first
    definition was. Attribute reads return values (parsing `sys.argv` leniently on the first read
    if nothing was parsed yet); attribute writes set values without conversion and run the
    flag's validators.
    """

    def __init__(self):
        # Internals live in __dict__ under names no flag attribute access can reach.
        self.__dict__["__flags"] = {}
        self.__dict__["__short"] = {}
        self.__dict__["__validators"] = {}
        self.__dict__["__multi_validators"] = []  # (names, checker, message)
        self.__dict__["__modules"] = {}  # module name -> flag names it defined
        self.__dict__["__key_flags"] = {}  # module name -> flag names it declared key flags
        self.__dict__["__parsed"] = False

    # -- registry --

    @property
    def _flags(self) -> dict[str, Flag]:
        return self.__dict__["__flags"]

    def _register(self, flag: Flag, defined_at: str) -> None:
        flags = self._flags
        old = flags.get(flag.name)
        if old is not None and not (flag.allow_override and old.allow_override):
            raise DuplicateFlagError(
                f"The flag '{flag.name}' is defined twice. First at {old.defined_at}, "
                f"second at {defined_at}. Description from first occurrence: {old.help}"
            )
        flag.defined_at = defined_at
        flags[flag.name] = flag
        if flag.short_name:
            self.__dict__["__short"][flag.short_name] = flag.name

    def _unknown(self, name: str, value: str = "") -> UnrecognizedFlagError:
        close = difflib.get_close_matches(name, list(self._flags), n=3)
        return UnrecognizedFlagError(name, value, close)

    def __getitem__(self, name: str) -> Flag:
        try:
            return self._flags[name]
        except KeyError:
            raise self._unknown(name) from None

    def __contains__(self, name: object) -> bool:
        return name in self._flags

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._flags))

    def __len__(self) -> int:
        return len(self._flags)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._flags))

    # -- attribute access --

    def __getattr__(self, name: str):
        flags = self.__dict__.get("__flags", {})
        if name not in flags:
            raise AttributeError(name)
        if not self.__dict__["__parsed"]:
            self._lazy_parse()
        return flags[name].value

    def __setattr__(self, name: str, value) -> None:
        flag = self[name]
        flag.value = value
        flag.using_default_value = False
        self._validate(getattr(flag, "original_name", name))  # an alias checks its original

    def __delattr__(self, name: str) -> None:
        flag = self[name]
        del self._flags[name]
        self.__dict__["__validators"].pop(name, None)
        if flag.short_name:
            self.__dict__["__short"].pop(flag.short_name, None)

    # -- parsing --

    def __call__(self, argv: list[str], known_only: bool = False) -> list[str]:
        """Parses flags from `argv` (program name first).

        Args:
          argv: the command line, e.g. `sys.argv`.
          known_only: leave unknown flags in the result instead of raising.

        Returns:
          `[argv[0]]` followed by the arguments that are not flags (in order).

        Raises:
          UnrecognizedFlagError: an unknown flag, when not `known_only`.
          IllegalFlagValueError: a value the flag's parser or a validator refuses.
          Error: a non-boolean flag at the end of `argv` with no value.
        """
        if isinstance(argv, (str, bytes)):
            raise TypeError("argv should be a tuple/list of strings, not bytes or string.")
        if not argv:
            raise ValueError(
                "argv cannot be an empty list, and must contain the program name "
                "as the first element."
            )
        unknown, rest = self._parse_args(expand_flagfiles(list(argv[1:])), known_only,
                                         lenient=False)
        if unknown and not known_only:
            raise self._unknown(*unknown[0])
        self.mark_as_parsed()
        self.validate_all_flags()
        return [argv[0], *rest]

    def _parse_flags(self, args: list[str] | None = None) -> list[str]:
        """TF <= 1.4's explicit parse: reads the flags of `args` (default `sys.argv[1:]`),
        leaving unknown arguments alone, and returns those."""
        _, rest = self._parse_args(list(sys.argv[1:] if args is None else args),
                                   known_only=True, lenient=True)
        self.mark_as_parsed()
        return rest

    def read_flags_from_files(self, argv: list[str], force_gnu: bool = True) -> list[str]:
        """`argv` with its `--flagfile=PATH` arguments replaced by the files' flags.

        Raises:
          CantOpenFlagFileError: a file cannot be read.
        """
        del force_gnu
        return [argv[0], *expand_flagfiles(list(argv[1:]))] if argv else []

    def _lazy_parse(self) -> None:
        try:
            args = expand_flagfiles(list(sys.argv[1:]))
        except Error as e:
            self._fail(True, e)
            args = list(sys.argv[1:])
        self._parse_args(args, known_only=True, lenient=True)
        self.mark_as_parsed()

    def _lookup(self, name: str) -> Flag | None:
        flags = self._flags
        if name in flags:
            return flags[name]
        long_name = self.__dict__["__short"].get(name)
        return flags.get(long_name) if long_name else None

    def _parse_args(self, args: list[str], known_only: bool, lenient: bool):
        unknown: list[tuple[str, str]] = []
        rest: list[str] = []
        seen: set[str] = set()
        stream = iter(args)
        for arg in stream:
            if arg == "--":
                if known_only:
                    rest.append(arg)
                rest.extend(stream)
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            body = arg[2:] if arg.startswith("--") else arg[1:]
            name, eq, value = body.partition("=")
            value = value if eq else None
            flag = self._lookup(name)
            if flag is None:
                negated = self._lookup(name[2:]) if name.startswith("no") else None
                if negated is None or not negated.boolean:
                    unknown.append((name, arg))
                    if known_only:
                        rest.append(arg)
                    continue
                if value is not None:
                    self._fail(
                        lenient,
                        IllegalFlagValueError(
                            f"flag {arg}: --no{negated.name} does not take an argument"
                        ),
                    )
                    continue
                flag, value = negated, "false"
            elif value is None:
                if flag.boolean:
                    value = "true"
                else:
                    value = next(stream, None)
                    if value is None:
                        self._fail(lenient, Error(f"Missing value for flag {arg}"))
                        continue
            try:
                flag.parse(value, first_in_parse=flag.name not in seen)
            except IllegalFlagValueError as e:
                self._fail(lenient, e)
            seen.add(flag.name)
        return unknown, rest

    @staticmethod
    def _fail(lenient: bool, error: Error) -> None:
        if not lenient:
            raise error
        warnings.warn(
            f"ignoring a command-line flag while reading flags lazily: {error}", stacklevel=4
        )

    def is_parsed(self) -> bool:
        return self.__dict__["__parsed"]

    def mark_as_parsed(self) -> None:
        """Treats the flags as parsed so reads no longer parse `sys.argv`."""
        self.__dict__["__parsed"] = True

    def unparse_flags(self) -> None:
        """Resets every flag to its default and marks the flags as not parsed."""
        for flag in self._flags.values():
            flag.unparse()
        self.__dict__["__parsed"] = False

    # -- values and defaults --

    def set_default(self, name: str, value) -> None:
        """Changes a flag's default (parsed like a command-line value); an unset flag follows."""
        self[name].set_default(value)
        self._validate(name)

    def flag_values_dict(self) -> dict[str, Any]:
        """Returns `{name: value}` for every flag."""
        if not self.is_parsed():
            self._lazy_parse()
        return {name: flag.value for name, flag in self._flags.items()}

    def get_flag_value(self, name: str, default):
        flag = self._flags.get(name)
        return default if flag is None else flag.value

    # -- validators --

    def _add_validator(self, name: str, checker: Callable, message: str) -> None:
        self[name]  # noqa: B018 - raises UnrecognizedFlagError for an unknown name
        self.__dict__["__validators"].setdefault(name, []).append((checker, message))

    def _add_multi_validator(self, names: list[str], checker: Callable, message: str) -> None:
        for name in names:
            self[name]  # noqa: B018 - raises UnrecognizedFlagError for an unknown name
        self.__dict__["__multi_validators"].append((tuple(names), checker, message))

    def _validate(self, name: str) -> None:
        value = self._flags[name].value
        for checker, message in self.__dict__["__validators"].get(name, ()):
            try:
                ok = checker(value)
            except ValidationError as e:
                ok, message = False, str(e)
            if not ok:
                raise IllegalFlagValueError(f"flag --{name}={value}: {message}")
        for names, checker, message in self.__dict__["__multi_validators"]:
            if name in names:
                self._validate_multi(names, checker, message)

    def _validate_multi(self, names: tuple, checker: Callable, message: str) -> None:
        """absl's multi-flag check: `checker({name: value})`; the error lists every flag."""
        values = {n: self._flags[n].value for n in names}
        try:
            ok = checker(values)
        except ValidationError as e:
            ok, message = False, str(e)
        if not ok:
            shown = ", ".join(f"{n}={v}" for n, v in values.items())
            raise IllegalFlagValueError(f"flags {shown}: {message}")

    def validate_all_flags(self) -> None:
        """Runs every validator; raises IllegalFlagValueError for the first that fails."""
        for name in list(self.__dict__["__validators"]):
            self._validate(name)
        for names, checker, message in self.__dict__["__multi_validators"]:
            self._validate_multi(names, checker, message)

    # -- modules and key flags (what --helpshort lists) --

    def _register_module(self, module: str, name: str, key: bool = False) -> None:
        registry = self.__dict__["__key_flags" if key else "__modules"]
        names = registry.setdefault(module, [])
        if name not in names:
            names.append(name)

    def flags_by_module_dict(self) -> dict[str, list[Flag]]:
        """Returns `{module name: [flags it defined]}`."""
        return {m: [self._flags[n] for n in names if n in self._flags]
                for m, names in self.__dict__["__modules"].items()}

    def key_flags_by_module_dict(self) -> dict[str, list[Flag]]:
        """Returns `{module name: [flags it declared key flags]}`."""
        return {m: [self._flags[n] for n in names if n in self._flags]
                for m, names in self.__dict__["__key_flags"].items()}

    def get_flags_for_module(self, module) -> list[Flag]:
        """The flags a module (object or name) defined."""
        name = module if isinstance(module, str) else module.__name__
        return self.flags_by_module_dict().get(name, [])

    def get_key_flags_for_module(self, module) -> list[Flag]:
        """A module's key flags: those it defined, then those it declared (no repeats)."""
        name = module if isinstance(module, str) else module.__name__
        flags = list(self.get_flags_for_module(name))
        for flag in self.key_flags_by_module_dict().get(name, []):
            if flag not in flags:
                flags.append(flag)
        return flags

    def find_module_defining_flag(self, flagname: str, default=None):
        """The name of the module that defined `flagname`, else `default`."""
        for module, names in self.__dict__["__modules"].items():
            if flagname in names:
                return module
        return default

    # -- help --

    def get_help(self) -> str:
        """Returns one block per flag: name, help, default and type."""
        blocks = []
        for name in sorted(self._flags):
            flag = self._flags[name]
            short = f"-{flag.short_name},--" if flag.short_name else "--"
            lines = [
                f"  {short}{'[no]' if flag.boolean else ''}{name}: {flag.help}",
                f"    (default: {flag.default!r})",
            ]
            if flag.type_name:
                lines.append(f"    ({flag.type_name})")
            blocks.append("\n".join(lines))
        return "\n".join(blocks)

    def __str__(self) -> str:
        return self.get_help()


FLAGS = FlagValues()


# The DEFINE_* functions and validators, then the rest of absl.flags' API (DEFINE_alias,
# mark_flags_as_mutual_exclusive, ...). Both modules build on FlagValues and FLAGS above.
from tensorflux.platform.flag_defines import *  # noqa: E402, F403
from tensorflux.platform.flag_defines import _define  # noqa: E402, F401 - absl-private name
from tensorflux.platform.flags_absl import *  # noqa: E402, F403
