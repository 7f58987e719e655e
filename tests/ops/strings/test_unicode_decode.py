"""UnicodeDecode(WithOffsets) and the ragged tf.strings wrappers, against Python's codecs."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf
from tensorflux.ops.strings.unicode_decode import UnicodeDecode

COVERED_OPS = {"UnicodeDecode", "UnicodeDecodeWithOffsets"}


def _values(x):
    value = run(x)
    return value.to_list() if hasattr(value, "to_list") else value.tolist()


def test_decode_matches_python_code_points():
    words = ["héllo", "", "a€😀", "日本語"]
    ragged = tf.strings.unicode_decode(words, "UTF-8")
    assert ragged.ragged_rank == 1
    assert _values(ragged) == [[ord(c) for c in w] for w in words]
    scalar = tf.strings.unicode_decode("héllo", "UTF-8")
    assert scalar.get_shape().as_list() == [None] and _values(scalar) == [ord(c) for c in "héllo"]
    nested = tf.strings.unicode_decode([["a", "bc"], ["d", "é"]], "UTF-8")
    assert _values(nested) == [[[97], [98, 99]], [[100], [233]]]
    utf16 = "aé😀".encode("utf-16-be")
    assert _values(tf.strings.unicode_decode([utf16], "UTF-16-BE")) == [[97, 233, 0x1F600]]


def test_offsets_are_byte_starts():
    words = ["aé€😀", "xyz"]
    points, offsets = tf.strings.unicode_decode_with_offsets(words, "UTF-8")
    want = [np.cumsum([0] + [len(c.encode()) for c in w])[:-1].tolist() for w in words]
    assert _values(offsets) == want
    assert _values(points) == [[ord(c) for c in w] for w in words]
    chars, char_offsets = tf.strings.unicode_split_with_offsets(words, "UTF-8")
    assert _values(chars) == [[c.encode() for c in w] for w in words]
    assert _values(char_offsets) == want


def test_invalid_bytes_replace_ignore_strict():
    bad = [b"ab\xffc\xe2\x82", b"\xf0\x9f\x98\x80x"]
    # Each maximal invalid subsequence is one replacement character.
    assert _values(tf.strings.unicode_decode(bad, "UTF-8")) == [
        [97, 98, 0xFFFD, 99, 0xFFFD], [0x1F600, 120]]
    assert _values(tf.strings.unicode_decode(bad, "UTF-8", replacement_char=63)) == [
        [97, 98, 63, 99, 63], [0x1F600, 120]]
    points, offsets = tf.strings.unicode_decode_with_offsets(bad, "UTF-8", errors="ignore")
    assert _values(points) == [[97, 98, 99], [0x1F600, 120]]
    assert _values(offsets) == [[0, 1, 3], [0, 4]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.strings.unicode_decode(bad, "UTF-8", errors="strict"))
    controls = tf.strings.unicode_decode(["a\x01b"], "UTF-8", replace_control_characters=True)
    assert _values(controls) == [[97, 0xFFFD, 98]]


def test_split_and_bytes_split():
    assert _values(tf.strings.unicode_split(["hé", "€"], "UTF-8")) == [[b"h", "é".encode()],
                                                                      ["€".encode()]]
    assert _values(tf.strings.bytes_split(["hé", "12"])) == [[b"h", b"\xc3", b"\xa9"],
                                                           [b"1", b"2"]]
    assert _values(tf.strings.bytes_split("abc")) == [b"a", b"b", b"c"]


def test_op_shapes_splits_type_and_errors():
    out = tf.strings.unicode_decode([["a", "b", "c"]], "UTF-8")
    assert out.shape.ndims == 3 and out.ragged_rank == 2
    splits, values = UnicodeDecode(["ab", "c"], input_encoding="UTF-8", Tsplits=tf.int32)
    assert splits.get_shape().as_list() == [3]
    s, v = run([splits, values])
    assert s.dtype == np.int32 and s.tolist() == [0, 2, 3] and v.tolist() == [97, 98, 99]
    with pytest.raises(ValueError, match="statically known"):
        tf.strings.unicode_decode(tf.placeholder(tf.string), "UTF-8")
    with pytest.raises(tf.errors.InvalidArgumentError, match="encoding"):
        run(tf.strings.unicode_decode(["a"], "KOI8-R"))
