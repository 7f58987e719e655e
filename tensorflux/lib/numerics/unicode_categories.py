"""Unicode general categories as regular-expression class bodies, for RE2's `\\p{..}` classes.

RE2 (the regex engine TensorFlow's string ops use) accepts `\\pL`, `\\p{Lu}`, `\\P{N}`, ...: the
code points of a general category (one letter: the union of its two-letter ones; `Any`: all).
Python's `re` has no such class, so the set is spelled out as ranges, from `unicodedata`
(Python's Unicode version, which may differ in new code points from the RE2 build's).
"""

from __future__ import annotations

import functools
import itertools
import sys
import unicodedata

_MAJOR = frozenset("LMNPSZC")


@functools.lru_cache(maxsize=1)
def _category_ranges() -> dict:
    """Two-letter category -> list of (first, last) code point ranges (one pass, cached)."""
    ranges: dict = {}
    categories = [unicodedata.category(chr(code)) for code in range(sys.maxunicode + 1)]
    start = 0
    for category, run in itertools.groupby(categories):
        length = sum(1 for _ in run)
        ranges.setdefault(category, []).append((start, start + length - 1))
        start += length
    return ranges


def _escape(code: int) -> str:
    return f"\\U{code:08x}"


@functools.lru_cache(maxsize=64)
def category_class_body(name: str) -> str:
    """The inside of a `[...]` class matching the code points of category `name`.

    Args:
        name: a general category: one letter (`L`), two letters (`Lu`), or `Any`.

    Returns:
        A string such as `\\U00000041-\\U0000005a...` for use in a `str` pattern.

    Raises:
        ValueError: `name` is not a general category.
    """
    if name == "Any":
        return f"{_escape(0)}-{_escape(sys.maxunicode)}"
    table = _category_ranges()
    if len(name) == 1 and name in _MAJOR:
        spans = sorted(span for key, values in table.items() if key[0] == name
                       for span in values)
    elif name in table:
        spans = table[name]
    else:
        raise ValueError(f"unknown Unicode category {name!r}")
    return "".join(_escape(a) if a == b else f"{_escape(a)}-{_escape(b)}" for a, b in spans)
