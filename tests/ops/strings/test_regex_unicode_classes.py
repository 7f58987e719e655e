"""RE2's Unicode category classes (`\\p{Ll}`, `\\pN`, `\\P{L}`, `\\p{^Lu}`) in the regex ops,
against Python's `unicodedata`, on UTF-8 text and on bytes that are not UTF-8."""

import unicodedata

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.lib.numerics.unicode_regex import category_class_body

TEXT = ["AbÇdé Ωμ 12٣", "xY_z", ""]


def _by_category(text, keep, mark="."):
    return "".join(mark if keep(unicodedata.category(c), c) else c for c in text)


@pytest.mark.parametrize("pattern,keep", [
    (r"\p{Ll}", lambda cat, ch: cat == "Ll"),
    (r"\pL", lambda cat, ch: cat.startswith("L")),
    (r"\p{N}", lambda cat, ch: cat.startswith("N")),
    (r"\P{L}", lambda cat, ch: not cat.startswith("L")),
    (r"\p{^Lu}", lambda cat, ch: cat != "Lu"),
    # \d is ASCII-only in RE2: the Arabic-Indic digit is left alone
    (r"[\p{Lu}\d]", lambda cat, ch: cat == "Lu" or ch in "0123456789"),
])
def test_category_classes_match_unicodedata(pattern, keep):
    got = run(tf.strings.regex_replace(TEXT, pattern, "."))
    expected = [_by_category(t, keep) for t in TEXT]
    assert [g.decode("utf-8") for g in got] == expected


def test_full_match_and_group_rewrites():
    match = run(tf.strings.regex_full_match(["Über", "über", "1x"], r"\p{Lu}\p{Ll}+"))
    np.testing.assert_array_equal(match, [True, False, False])
    swapped = run(tf.strings.regex_replace(["éa", "Ωb"], r"(\p{L})(\p{L})", r"\2\1"))
    assert [s.decode() for s in swapped] == ["aé", "bΩ"]


def test_bytes_that_are_not_utf8_round_trip():
    data = [b"\xffA\xfeb"]
    got = run(tf.strings.regex_replace(data, r"\p{Lu}", "_"))
    assert got.tolist() == [b"\xff_\xfeb"]


def test_bad_class_names_are_invalid_patterns():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
        run(tf.strings.regex_replace(["a"], r"\p{Nope}", "x"))
    with pytest.raises(ValueError, match="unknown Unicode category"):
        category_class_body("Qq")
