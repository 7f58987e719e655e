"""UnicodeTranscode, UnicodeEncode, UnicodeScript, UnsortedSegmentJoin (tf.strings).

Values marked TF were produced by TensorFlow (tf.compat.v1) on the same inputs.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.strings.unicode import StringNGrams

COVERED_OPS = {"UnicodeTranscode", "UnicodeEncode", "UnicodeScript", "UnsortedSegmentJoin",
               "StringNGrams"}

MIXED = [b"abc", b"a\xffb", b"\xe2\x82", b"\xe2\x82x", b"\xed\xa0\x80z", b"\x01\x7f\xc2\x85 ok",
         "\u20ac\U0001d11e".encode(), b"\xf0\x9f\x98", b"\xc0\xaf\xf8\x88\x80\x80\x80",
         b"\xf4\x90\x80\x80!"]
R = b"\xef\xbf\xbd"


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_transcode_utf8_error_modes_match_tensorflow():
    replace, ignore, marked, dropped = _run([
        tf.strings.unicode_transcode(MIXED, "UTF-8", "UTF-8"),
        tf.strings.unicode_transcode(MIXED, "UTF-8", "UTF-8", errors="ignore"),
        tf.strings.unicode_transcode(MIXED, "UTF-8", "UTF-8", replacement_char=63,
                                     replace_control_characters=True),
        tf.strings.unicode_transcode(MIXED, "UTF-8", "UTF-8", errors="ignore",
                                     replace_control_characters=True)])
    assert replace.tolist() == [  # TF
        b"abc", b"a" + R + b"b", R, R + b"x", R * 3 + b"z", b"\x01\x7f\xc2\x85 ok",
        b"\xe2\x82\xac\xf0\x9d\x84\x9e", R, R * 7, R * 4 + b"!"]
    assert ignore.tolist() == [  # TF
        b"abc", b"ab", b"", b"x", b"z", b"\x01\x7f\xc2\x85 ok", b"\xe2\x82\xac\xf0\x9d\x84\x9e",
        b"", b"", b"!"]
    assert marked.tolist() == [  # TF
        b"abc", b"a?b", b"?", b"?x", b"???z", b"?\x7f\xc2\x85 ok",
        b"\xe2\x82\xac\xf0\x9d\x84\x9e", b"?", b"???????", b"????!"]
    assert dropped.tolist()[5] == b"\x7f\xc2\x85 ok"  # TF: ignore drops C0 controls


def test_transcode_input_and_output_encodings_match_tensorflow():
    u16 = [b"\x00a\xd8\x00\x00b", b"\xfe\xff\x00c", b"\xff\xfec\x00", b"\x00",
           b"\xdc\x00\xd8\x3d\xde\x00"]
    names = ["UTF-16-BE", "UTF-16", "UTF-16-LE", "UTF-32-BE", "ISO-8859-1", "US-ASCII", "latin1"]
    values = _run([tf.strings.unicode_transcode(u16, n, "UTF-8") for n in names] + [
        tf.strings.unicode_transcode(MIXED[:7], "UTF-8", "UTF-16-BE"),
        tf.strings.unicode_transcode(MIXED[6:7], "UTF-8", "UTF-32-BE")])
    be = [b"a" + R + b"b", b"\xef\xbb\xbfc", b"\xef\xbf\xbe\xe6\x8c\x80", R,
          R + b"\xf0\x9f\x98\x80"]
    assert values[0].tolist() == be  # TF
    # plain UTF-16: a leading byte order mark picks the order and is dropped (TF 2.x)
    assert values[1].tolist() == [be[0], b"c", b"c", R, be[4]]
    assert values[2].tolist() == [b"\xe6\x84\x80\xc3\x98\xe6\x88\x80", b"\xef\xbf\xbe\xe6\x8c\x80",
                                  b"\xef\xbb\xbfc", R, b"\xc3\x9c\xe3\xb7\x98\xc3\x9e"]
    assert values[3].tolist() == [R * 2, R, R, R, R * 2]
    latin = [b"\x00a\xc3\x98\x00\x00b", b"\xc3\xbe\xc3\xbf\x00c", b"\xc3\xbf\xc3\xbec\x00",
             b"\x00", b"\xc3\x9c\x00\xc3\x98=\xc3\x9e\x00"]
    assert values[4].tolist() == latin and values[6].tolist() == latin
    assert values[5].tolist() == [b"\x00a" + R + b"\x00\x00b", R * 2 + b"\x00c",
                                  R * 2 + b"c\x00", b"\x00", R + b"\x00" + R + b"=" + R + b"\x00"]
    assert values[7].tolist()[:2] == [b"\x00a\x00b\x00c", b"\x00a\xff\xfd\x00b"]
    assert values[7].tolist()[6] == b" \xac\xd84\xdd\x1e"
    assert values[8].tolist() == [b"\x00\x00 \xac\x00\x01\xd1\x1e"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=4),
       st.sampled_from(["UTF-8", "UTF-16-BE", "UTF-32-BE"]),
       st.sampled_from(["UTF-8", "UTF-16-BE", "UTF-32-BE"]))
def test_transcode_valid_text_matches_python_codecs(texts, source, target):
    texts = [t.encode("utf-16", "surrogatepass").decode("utf-16", "replace") for t in texts]
    data = [t.encode(source.lower()) for t in texts]
    with tf.Graph().as_default():
        out = _run(tf.strings.unicode_transcode(np.array(data, object).reshape(-1, 1), source,
                                                target))
    assert out.shape == (len(texts), 1)
    assert out[:, 0].tolist() == [t.encode(target.lower()) for t in texts]


def test_transcode_plain_utf16_utf32_take_a_leading_byte_order_mark():
    rows = [b"\xfe\xff\x00h\x00i", b"\xff\xfeh\x00i\x00", b"\x00h\x00i",
            b"\x00[\xfe\xff\x00]", b"\xff\xfe\xff\xfe"]
    out = _run(tf.strings.unicode_transcode(rows, "UTF-16", "UTF-8"))
    # the first mark picks the byte order and goes; later ones (and no mark: big-endian) stay
    assert list(out) == [b"hi", b"hi", b"hi", "[\ufeff]".encode(), "\ufeff".encode()]
    out = _run(tf.strings.unicode_transcode([b"\xff\xfe\x00\x00A\x00\x00\x00",
                                             b"\x00\x00\xfe\xff\x00\x00\x00B"],
                                            "UTF-32", "UTF-8"))
    assert list(out) == [b"A", b"B"]
    # an explicit byte order keeps the mark as U+FEFF
    out = _run(tf.strings.unicode_transcode([b"\xfe\xff\x00h"], "UTF-16-BE", "UTF-8"))
    assert list(out) == ["\ufeffh".encode()]


def test_transcode_errors():
    with pytest.raises(errors.InvalidArgumentError, match="Invalid formatting"):
        _run(tf.strings.unicode_transcode(MIXED, "UTF-8", "UTF-8", errors="strict"))
    with pytest.raises(errors.InvalidArgumentError, match="converter for input encoding"):
        _run(tf.strings.unicode_transcode(["a"], "bogus", "UTF-8"))
    with pytest.raises(ValueError, match="Attr 'output_encoding' Op passed string 'UTF-16' "
                                         "not in: \"UTF-8\", \"UTF-16-BE\", \"UTF-32-BE\"."):
        tf.strings.unicode_transcode(["a"], "UTF-8", "UTF-16")
    with pytest.raises(ValueError, match="'lenient' not in: \"strict\", \"replace\""):
        tf.strings.unicode_transcode(["a"], "UTF-8", "UTF-8", errors="lenient")
    p = tf.placeholder(tf.string, [None, 3])
    assert tf.strings.unicode_transcode(p, "UTF-8", "UTF-8").shape.as_list() == [None, 3]


def test_unicode_encode_matches_tensorflow():
    values = _run([
        tf.strings.unicode_encode([[72, 105, 0], [0x20AC, -1, 0x110000]], "UTF-8"),
        tf.strings.unicode_encode([[72, 105, 0], [0x20AC, -1, 0x110000]], "UTF-16-BE",
                                  replacement_char=63),
        tf.strings.unicode_encode([[[72, 0xD800, 105]], [[0x1F600, 0xDFFF, 33]]], "UTF-32-BE",
                                  errors="ignore"),
        tf.strings.unicode_encode([72, 0xD800, 105], "UTF-8"),
        tf.strings.unicode_encode(tf.zeros([2, 0], tf.int32), "UTF-8")])
    assert values[0].tolist() == [b"Hi\x00", b"\xe2\x82\xac" + R * 2]
    assert values[1].tolist() == [b"\x00H\x00i\x00\x00", b" \xac\x00?\x00?"]
    assert values[2].tolist() == [[b"\x00\x00\x00H\x00\x00\x00i"],
                                  [b"\x00\x01\xf6\x00\x00\x00\x00!"]]
    assert values[3] == b"H" + R + b"i"
    assert values[4].tolist() == [b"", b""]
    with pytest.raises(errors.InvalidArgumentError, match="out of range for Unicode"):
        _run(tf.strings.unicode_encode([72, -5], "UTF-8", errors="strict"))
    with pytest.raises(ValueError, match="rank"):
        tf.strings.unicode_encode(65, "UTF-8")
    p = tf.placeholder(tf.int32, [4, None, 7])
    assert tf.strings.unicode_encode(p, "UTF-8").shape.as_list() == [4, None]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 0x10FFFF).filter(lambda c: not 0xD800 <= c <= 0xDFFF),
                         min_size=3, max_size=3), min_size=1, max_size=4))
def test_unicode_encode_matches_python(rows):
    with tf.Graph().as_default():
        out = _run(tf.strings.unicode_encode(np.array(rows, np.int32), "UTF-8"))
    assert out.tolist() == ["".join(map(chr, r)).encode("utf-8") for r in rows]


def test_unicode_script_matches_tensorflow():
    points = [72, 0x416, 0x4E00, 0x3042, 0x30A2, 0x5D0, 0x627, 0x915, 0x3B1, 48, 0x300, -1,
              0x110000, 0xE000, 0x0378, 0xD800, 0x0E01, 0xAC00, 0x10A0]
    out = tf.strings.unicode_script(np.array(points, np.int32).reshape(1, -1))
    assert out.dtype == tf.int32 and out.shape.as_list() == [1, len(points)]
    np.testing.assert_array_equal(_run(out)[0], [  # TF (ICU UScriptCode)
        25, 8, 17, 20, 22, 19, 2, 10, 14, 0, 1, -1, -1, 103, 103, 103, 38, 18, 12])


def test_unsorted_segment_join():
    values = _run([
        tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"], ["e", "f"]], [0, 2, 0], 4,
                                         separator=":"),
        tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [[0, 1], [1, 0]], 2,
                                         separator="-"),
        tf.strings.unsorted_segment_join(tf.zeros([0], tf.string), tf.zeros([0], tf.int64),
                                         tf.constant(2, tf.int64))])
    assert values[0].tolist() == [[b"a:e", b"b:f"], [b"", b""], [b"c", b"d"], [b"", b""]]
    assert values[1].tolist() == [b"a-d", b"b-c"]
    assert values[2].tolist() == [b"", b""]
    out = tf.strings.unsorted_segment_join(tf.placeholder(tf.string, [None, 5]), [0, 1, 1], 3)
    assert out.shape.as_list() == [3, 5]
    with pytest.raises(errors.InvalidArgumentError, match="not allowed to exceed"):
        _run(tf.strings.unsorted_segment_join(["a", "b"], [0, 2], 2))
    with pytest.raises(errors.InvalidArgumentError, match="not allowed to exceed"):
        _run(tf.strings.unsorted_segment_join(["a", "b"], [0, -1], 2))
    with pytest.raises(ValueError, match="prefix"):
        tf.strings.unsorted_segment_join([["a"]], [0, 1], 2)


def test_ngrams_match_tensorflow():
    d = [["a", "b", "c", "d"], ["e", "f", "g", "h"]]
    values = _run([
        tf.strings.ngrams(d, 2),
        tf.strings.ngrams(d, [1, 3], separator="-"),
        tf.strings.ngrams(d, 3, pad_values=("<s>", "</s>")),
        tf.strings.ngrams(d, 3, pad_values="P", padding_width=1),
        tf.strings.ngrams(d, 5),
        tf.strings.ngrams(d, 5, preserve_short_sequences=True),
        tf.strings.ngrams(["a", "b", "c"], 2),
        tf.strings.ngrams([["a", "b"]], 3, pad_values="P", padding_width=5),
        tf.strings.ngrams(tf.zeros([2, 0], tf.string), 2, preserve_short_sequences=True),
        tf.strings.ngrams([[["a", "b", "c"]], [["d", "e", "f"]]], [2, 2])])
    assert values[0].tolist() == [[b"a b", b"b c", b"c d"], [b"e f", b"f g", b"g h"]]
    assert values[1].tolist()[0] == [b"a", b"b", b"c", b"d", b"a-b-c", b"b-c-d"]
    assert values[2].tolist()[1] == [b"<s> <s> e", b"<s> e f", b"e f g", b"f g h",
                                     b"g h </s>", b"h </s> </s>"]
    assert values[3].tolist()[0] == [b"P a b", b"a b c", b"b c d", b"c d P"]
    assert values[4].shape == (2, 0)
    assert values[5].tolist() == [[b"a b c d"], [b"e f g h"]]
    assert values[6].tolist() == [b"a b", b"b c"]
    assert values[7].tolist() == [[b"P P a", b"P a b", b"a b P", b"b P P"]]
    assert values[8].shape == (2, 0)
    assert values[9].tolist() == [[[b"a b", b"b c", b"a b", b"b c"]],
                                  [[b"d e", b"e f", b"d e", b"e f"]]]
    with pytest.raises(ValueError, match="greater than 0"):
        tf.strings.ngrams(d, 0)
    with pytest.raises(ValueError, match="pad_values must be provided"):
        tf.strings.ngrams(d, 2, padding_width=1)
    assert tf.strings.ngrams(tf.placeholder(tf.string, [3, None]), 2).shape.as_list() == \
        [3, None]


@pytest.mark.parametrize("attrs,ngrams,splits", [  # TF, on rows [a b c d], [], [e], [f]
    (dict(ngram_widths=[2, 5], pad_width=0, preserve_short_sequences=True),
     [b"a|b", b"b|c", b"c|d", b"e", b"f"], [0, 3, 3, 4, 5]),
    (dict(ngram_widths=[3], pad_width=-1, preserve_short_sequences=False),
     [b"L|L|a", b"L|a|b", b"a|b|c", b"b|c|d", b"c|d|R", b"d|R|R", b"L|L|R", b"L|R|R", b"L|L|e",
      b"L|e|R", b"e|R|R", b"L|L|f", b"L|f|R", b"f|R|R"], [0, 6, 8, 11, 14]),
    (dict(ngram_widths=[4], pad_width=1, preserve_short_sequences=True),
     [b"L|a|b|c", b"a|b|c|d", b"b|c|d|R", b"L|e|R", b"L|f|R"], [0, 3, 3, 4, 5]),
])
def test_string_ngrams_op_on_ragged_rows(attrs, ngrams, splits):
    out = StringNGrams(["a", "b", "c", "d", "e", "f"], np.int64([0, 4, 4, 5, 6]), separator="|",
                       left_pad="L", right_pad="R", **attrs)
    got, got_splits = _run(list(out))
    assert got.tolist() == ngrams
    np.testing.assert_array_equal(got_splits, splits)
    assert got_splits.dtype == np.int64
    with pytest.raises(errors.InvalidArgumentError, match="data_splits"):
        _run(StringNGrams(["a"], np.int64([0, 2]), separator="|", left_pad="L",
                          right_pad="R", **attrs)[0])
