"""Loud registries: a duplicate names where the first entry came from; a miss suggests names."""

from __future__ import annotations

import difflib
import sys


def caller_location(depth: int = 2) -> str:
    """Returns 'file:line' of the frame `depth` levels up."""
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class Registry:
    """A name -> value table that refuses duplicates and explains failed lookups."""

    def __init__(self, what: str):
        self._what = what
        self._entries: dict[str, object] = {}
        self._where: dict[str, str] = {}

    def register(self, name: str, value, where: str | None = None) -> None:
        if name in self._entries:
            raise KeyError(
                f"{self._what} '{name}' is already registered (first at {self._where[name]}).")
        self._entries[name] = value
        self._where[name] = where or caller_location(3)

    def replace(self, name: str, value, where: str | None = None) -> None:
        self._entries[name] = value
        self._where[name] = where or caller_location(3)

    def lookup(self, name: str):
        try:
            return self._entries[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._entries), n=3)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise LookupError(f"No {self._what} named '{name}' is registered.{hint}") from None

    def get(self, name: str, default=None):
        return self._entries.get(name, default)

    def where(self, name: str) -> str | None:
        return self._where.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def keys(self):
        return list(self._entries)

    def items(self):
        return list(self._entries.items())
