"""RE2 patterns with Unicode category classes (`\\pL`, `\\p{Lu}`, `\\P{N}`, `\\p{^Ll}`) on
Python's `re`.

RE2 (the regex engine TensorFlow's string ops use) has these classes: the code points of a
general category (one letter: the union of its two-letter ones; `Any`: all). Python's `re` has
none, so a pattern using them is rewritten with the set spelled out as ranges (from
`unicodedata`, Python's Unicode version, which may differ in new code points from the RE2
build's) and run on the UTF-8 text (any bytes round-trip through surrogate escapes) with
ASCII-only `\\w`, `\\d`, `\\s` as in RE2. Patterns without them stay bytes patterns.
"""

from __future__ import annotations

import functools
import itertools
import re
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


_TEXT = ("utf-8", "surrogateescape")  # bytes <-> str, any bytes round-trip


def _unicode_class(pattern: str, i: int, in_brackets: bool):
    """Translates RE2's `\\pX`, `\\p{Name}`, `\\p{^Name}` or `\\P..` at pattern[i] (the
    backslash); returns (replacement, next index)."""
    negate = pattern[i + 1] == "P"
    if pattern.startswith("{", i + 2):
        close = pattern.find("}", i + 3)
        if close < 0:
            raise ValueError("missing closing } of a \\p class")
        name, end = pattern[i + 3:close], close + 1
        if name.startswith("^"):
            negate, name = not negate, name[1:]
    elif i + 2 < len(pattern):
        name, end = pattern[i + 2], i + 3
    else:
        raise ValueError("a \\p class needs a name")
    body = category_class_body(name)
    if in_brackets:
        if negate:
            raise ValueError("a negated \\P class inside [...] is not supported")
        return body, end
    return ("[^" if negate else "[") + body + "]", end


def _translate_unicode_classes(pattern: str) -> str | None:
    """The pattern with RE2's Unicode category classes spelled out, or None when it has none."""
    out, i, in_brackets, found = [], 0, False, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            if pattern[i + 1] in "pP":
                text, i = _unicode_class(pattern, i, in_brackets)
                out.append(text)
                found = True
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if char == "[" and not in_brackets:
            in_brackets = True
            out.append(char)
            # a "]" right after "[" or "[^" is a literal member
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):
                out.append("]")
                i += 1
            continue
        if char == "]" and in_brackets:
            in_brackets = False
        out.append(char)
        i += 1
    return "".join(out) if found else None


class _TextRegex:
    """A `str` regex (with RE2's ASCII-only \\w, \\d, \\s) used through the bytes interface of
    a compiled bytes pattern: fullmatch, sub and groups."""

    def __init__(self, regex):
        self._regex = regex
        self.groups = regex.groups

    def fullmatch(self, data: bytes):
        return self._regex.fullmatch(data.decode(*_TEXT))

    def sub(self, expand, data: bytes, count: int = 0) -> bytes:
        def repl(match):
            return expand(_BytesMatch(match)).decode(*_TEXT)

        return self._regex.sub(repl, data.decode(*_TEXT), count=count).encode(*_TEXT)


class _BytesMatch:
    """A `str` match whose groups read as bytes."""

    def __init__(self, match):
        self._match = match

    def group(self, index: int):
        value = self._match.group(index)
        return None if value is None else value.encode(*_TEXT)


def compile_re2(pattern: bytes):
    """A compiled pattern for RE2 syntax: `re.compile(pattern)` on bytes, or a text regex
    behind the same interface (fullmatch, sub, groups) when the pattern has `\\p` classes.

    Raises:
        re.error, ValueError: an invalid pattern or an unknown category name.
    """
    text = _translate_unicode_classes(pattern.decode(*_TEXT))
    if text is None:
        return re.compile(pattern)
    return _TextRegex(re.compile(text, re.ASCII))
