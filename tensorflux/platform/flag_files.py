"""absl's `--flagfile`: command-line flags read from files.

`--flagfile=PATH` (or `--flagfile PATH`, one or two dashes) is replaced, in place, by the lines
of PATH: blank lines and comments (`#`, `//`) are skipped, every other line is one argument
(so a flag with a value is written `--name=value`), and a nested `--flagfile=` line is read
recursively (a file already being read is skipped with a warning). Arguments after `--` are
left alone. Paths expand `~`.
"""

from __future__ import annotations

import os
import warnings

from tensorflux.platform.flag_types import Error

__all__ = ["CantOpenFlagFileError", "expand_flagfiles"]

_PREFIXES = ("--flagfile=", "-flagfile=")
_BARE = ("--flagfile", "-flagfile")


class CantOpenFlagFileError(Error):
    """A `--flagfile` could not be read."""


def _lines(path: str, stack: list[str]) -> list[str]:
    path = os.path.expanduser(path)
    if path in stack:
        warnings.warn(f"Hit circular flagfile dependency. Ignoring flagfile: {path}",
                      stacklevel=4)
        return []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise CantOpenFlagFileError(f"ERROR:: Unable to open flagfile: {e}") from None
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "//")):
            continue
        if line.startswith(_PREFIXES):
            out.extend(_lines(line.split("=", 1)[1].strip(), stack + [path]))
        else:
            out.append(line)
    return out


def expand_flagfiles(args: list[str]) -> list[str]:
    """`args` (no program name) with every --flagfile directive replaced by its file's flags.

    Raises:
      CantOpenFlagFileError: a file cannot be read.
      Error: `--flagfile` is the last argument (no file named).
    """
    out: list[str] = []
    stream = iter(args)
    for arg in stream:
        if arg == "--":
            out.append(arg)
            out.extend(stream)
            break
        if arg.startswith(_PREFIXES):
            out.extend(_lines(arg.split("=", 1)[1], []))
        elif arg in _BARE:
            path = next(stream, None)
            if path is None:
                raise Error(f"Missing value for flag {arg}")
            out.extend(_lines(path, []))
        else:
            out.append(arg)
    return out
