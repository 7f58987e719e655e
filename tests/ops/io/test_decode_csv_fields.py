"""DecodeCSV's record splitting (RFC 4180 quoting as TF's kernel applies it), its error words,
select_cols, and the wrapper's argument checks."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def _decode(records, defaults, **kwargs):
    return run(tf.decode_csv(records, defaults, **kwargs))


def test_quoted_fields_keep_delimiters_newlines_and_doubled_quotes():
    (col,) = _decode(['"x, y"', '"two\nlines"', '"say ""hi"""', "  spaced  ", '""'], [["d"]])
    assert col.tolist() == [b"x, y", b"two\nlines", b'say "hi"', b"  spaced  ", b"d"]


def test_trailing_delimiter_is_an_empty_last_field():
    a, b, c = _decode(["1,,", ",2,"], [[7], [8], [9]])
    assert (a.tolist(), b.tolist(), c.tolist()) == ([1, 7], [8, 2], [9, 9])


def test_without_quote_delim_quotes_are_ordinary_characters():
    a, b = _decode(['"a,"b', 'x"y,z'], [[""], [""]], use_quote_delim=False)
    assert a.tolist() == [b'"a', b'x"y'] and b.tolist() == [b'"b', b"z"]


@pytest.mark.parametrize("record,words", [
    ('ab"c', "Unquoted fields cannot have quotes/CRLFs inside"),
    ("a\rb", "Unquoted fields cannot have quotes/CRLFs inside"),
    ('"abc', "Quoted field has to end with quote followed by delim or end"),
    ('"ab"c', "Quoted field has to end with quote followed by delim or end"),
])
def test_malformed_records(record, words):
    with pytest.raises(tf.errors.InvalidArgumentError, match=words):
        _decode([record], [[""]])


def test_type_names_in_conversion_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 0 in record 1 is not a valid float: 2x"):
        _decode(["1", "2x"], [[0.0]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 0 in record 0 is not a valid double: nope"):
        _decode(["nope"], [np.array([1.0])])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 0 in record 0 is not a valid int64: 1.5"):
        _decode(["1.5"], [np.array([1], np.int64)])


def test_select_cols_keep_the_chosen_columns_and_count_the_found_ones():
    a, b = _decode(["10,20,30,40", "1,,3,"], [[0], [-1]], select_cols=[1, 3])
    assert a.tolist() == [20, 0] and b.tolist() == [40, -1]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Expect 2 fields but have 1 in record 0"):
        _decode(["1,2"], [[0], [0]], select_cols=[1, 4])


@pytest.mark.parametrize("cols,words", [([2, 1], "not strictly increasing"),
                                        ([-1, 0], "contains negative values"),
                                        ([0], "Length of select_cols and record_defaults do not")])
def test_select_cols_argument_checks(cols, words):
    with pytest.raises(ValueError, match=words):
        tf.decode_csv(["1,2"], [[0], [0]], select_cols=cols)
