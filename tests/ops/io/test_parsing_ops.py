"""Parsing: tf.train.Example protos (TensorFlow's fixtures included) and CSV records."""

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

COVERED_OPS = {"ParseExample", "ParseSingleExample", "ParseSingleSequenceExample", "DecodeCSV"}
GRADIENT_CASES = []  # parsing ops are not differentiable

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures")


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _example(**features):
    feature = {}
    for key, values in features.items():
        if isinstance(values[0], float):
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif isinstance(values[0], int):
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        else:
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


@pytest.mark.parametrize("suffix,compression", [("", ""), (".gz", "GZIP"), (".zlib", "ZLIB")])
def test_tensorflow_fixtures_parse_to_the_recorded_values(graph, suffix, compression):
    with open(os.path.join(FIXTURES, "examples.json")) as handle:
        expected = json.load(handle)
    options = tf.python_io.TFRecordOptions(compression_type=compression) if compression else None
    records = list(tf.python_io.tf_record_iterator(
        os.path.join(FIXTURES, "examples.tfrecord" + suffix), options))
    serialized = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(serialized, {
        "id": tf.FixedLenFeature([2], tf.int64),
        "weights": tf.VarLenFeature(tf.float32),
        "name": tf.FixedLenFeature([2], tf.string),
    })
    assert parsed["id"].shape.as_list() == [2]
    assert isinstance(parsed["weights"], tf.SparseTensor)
    with tf.Session() as sess:
        for record, want in zip(records, expected):
            got = sess.run(parsed, {serialized: record})
            assert got["id"].dtype == np.int64 and got["id"].tolist() == want["id"]
            weights = got["weights"]
            assert weights.values.dtype == np.float32
            np.testing.assert_array_equal(weights.values, np.float32(want["weights"]))
            np.testing.assert_array_equal(weights.indices, [[0], [1], [2]])
            np.testing.assert_array_equal(weights.dense_shape, [3])
            assert [v.hex() for v in got["name"]] == want["name_hex"]
    assert len(records) == len(expected) == 5


def test_parse_example_batch_with_defaults_and_var_len(graph):
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(serialized, {
        "a": tf.FixedLenFeature([2], tf.float32, default_value=[5.0, 6.0]),
        "v": tf.VarLenFeature(tf.int64),
        "s": tf.FixedLenFeature([], tf.string, default_value="zz"),
    })
    assert parsed["a"].shape.as_list() == [None, 2]
    assert parsed["a"].op.type == "ParseExample" and parsed["a"].op.name == \
        "ParseExample/ParseExample"
    data = [_example(a=[1.0, 2.0], v=[1, 2, 3], s=[b"q"]), _example(b=[1]), _example(v=[7])]
    with tf.Session() as sess:
        out = sess.run(parsed, {serialized: data})
    np.testing.assert_array_equal(out["a"], [[1, 2], [5, 6], [5, 6]])
    assert out["s"].tolist() == [b"q", b"zz", b"zz"]
    np.testing.assert_array_equal(out["v"].indices, [[0, 0], [0, 1], [0, 2], [2, 0]])
    np.testing.assert_array_equal(out["v"].values, [1, 2, 3, 7])
    np.testing.assert_array_equal(out["v"].dense_shape, [3, 3])


def test_parse_single_example_scalar_string_feeds_decode_raw(graph):
    # A 0-d string output must stay an ndarray for the kernels that consume it (as in the
    # TFRecord -> parse_single_example -> decode_raw input pipelines).
    record = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(record, {"raw": tf.FixedLenFeature([], tf.string),
                                              "n": tf.FixedLenFeature([], tf.int64)})
    decoded = tf.decode_raw(parsed["raw"], tf.uint8)
    joined = tf.strings.join([parsed["raw"], "!"])
    data = _example(raw=[bytes([1, 2, 250])], n=[4])
    with tf.Session() as sess:
        got, text, n = sess.run([decoded, joined, parsed["n"]], {record: data})
    np.testing.assert_array_equal(got, [1, 2, 250])
    assert got.dtype == np.uint8 and text == bytes([1, 2, 250]) + b"!" and n == 4
    ds = tf.data.Dataset.from_tensor_slices([data, _example(raw=[b"\x07"], n=[1])])
    ds = ds.map(lambda s: tf.decode_raw(
        tf.parse_single_example(s, {"raw": tf.FixedLenFeature([], tf.string)})["raw"], tf.uint8))
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt).tolist() == [1, 2, 250]
        assert sess.run(nxt).tolist() == [7]
    seq = tf.train.SequenceExample()
    seq.context.feature["raw"].bytes_list.value.append(bytes([3, 4]))
    context, _ = tf.parse_single_sequence_example(
        record, context_features={"raw": tf.FixedLenFeature([], tf.string)})
    with tf.Session() as sess:
        got = sess.run(tf.decode_raw(context["raw"], tf.uint8),
                       {record: seq.SerializeToString()})
    assert got.tolist() == [3, 4]


def test_fixed_len_sequence_feature(graph):
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(serialized, {
        "q": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True),
        "p": tf.FixedLenSequenceFeature([], tf.float32, allow_missing=True, default_value=-1.0),
    })
    assert parsed["q"].shape.as_list() == [None, None, 2]
    data = [_example(q=[1, 2, 3, 4], p=[1.0]), _example(b=[1]), _example(q=[5, 6],
                                                                       p=[2.0, 3.0])]
    with tf.Session() as sess:
        out = sess.run(parsed, {serialized: data})
        np.testing.assert_array_equal(out["q"], [[[1, 2], [3, 4]], [[0, 0], [0, 0]],
                                                 [[5, 6], [0, 0]]])
        np.testing.assert_array_equal(out["p"], [[1, -1], [-1, -1], [2, 3]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="multiple of stride"):
            sess.run(parsed, {serialized: [_example(q=[1, 2, 3])]})
        empty = sess.run(parsed, {serialized: []})
        assert empty["q"].shape == (0, 0, 2)
    with pytest.raises(ValueError, match="allow_missing"):
        tf.parse_example(serialized, {"q": tf.FixedLenSequenceFeature([], tf.int64)})


def test_parse_errors(graph):
    serialized = tf.placeholder(tf.string, [None])
    fixed = tf.parse_example(serialized, {"a": tf.FixedLenFeature([2], tf.float32)})
    one = tf.placeholder(tf.string, [])
    var = tf.parse_single_example(one, {"v": tf.VarLenFeature(tf.float32)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Feature: a \\(data type: float\\) is required"):
            sess.run(fixed, {serialized: [_example(a=[1.0, 2.0]), _example(b=[1])]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Values size: 3 but output "
                                                                 "shape: \\[2\\]"):
            sess.run(fixed, {serialized: [_example(a=[1.0, 2.0, 3.0])]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
            sess.run(fixed, {serialized: [_example(a=[1, 2])]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example"):
            sess.run(var, {one: b"\xff garbage"})
        assert sess.run(fixed, {serialized: []})["a"].shape == (0, 2)
    with pytest.raises(ValueError, match="Cannot reshape"):
        tf.parse_example(serialized, {"a": tf.FixedLenFeature([2], tf.float32,
                                                              default_value=0.0)})
    with pytest.raises(ValueError, match="Missing: features was empty"):
        tf.parse_example(serialized, {})
    with pytest.raises(ValueError, match="unsupported dtype"):
        tf.parse_example(serialized, {"a": tf.FixedLenFeature([], tf.int32)})


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(-2**40, 2**40), max_size=4),
                          st.floats(-1e6, 1e6, width=32)), min_size=1, max_size=5))
def test_parse_example_round_trips_random_examples(rows):
    data = [_example(ids=ids, x=[x]) if ids else _example(x=[x]) for ids, x in rows]
    with tf.Graph().as_default():
        parsed = tf.parse_example(tf.constant(data), {
            "ids": tf.VarLenFeature(tf.int64), "x": tf.FixedLenFeature([], tf.float32)})
        with tf.Session() as sess:
            out = sess.run(parsed)
    np.testing.assert_array_equal(out["x"], np.float32([x for _, x in rows]))
    np.testing.assert_array_equal(out["ids"].values, [v for ids, _ in rows for v in ids])
    rows_of = [i for i, (ids, _) in enumerate(rows) for _ in ids]
    np.testing.assert_array_equal(out["ids"].indices[:, 0], rows_of)
    assert out["ids"].dense_shape.tolist() == [len(rows), max(len(i) for i, _ in rows)]


def _sequence_example():
    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    def floats(values):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))

    return tf.train.SequenceExample(
        context=tf.train.Features(feature={"len": ints([3])}),
        feature_lists=tf.train.FeatureLists(feature_list={
            "tok": tf.train.FeatureList(feature=[ints([i]) for i in range(3)]),
            "pair": tf.train.FeatureList(feature=[ints([i, -i]) for i in range(3)]),
            "v": tf.train.FeatureList(feature=[floats([1.0] * i) for i in range(3)]),
        })).SerializeToString()


def test_parse_single_sequence_example(graph):
    serialized = tf.placeholder(tf.string, [])
    context, sequence = tf.parse_single_sequence_example(
        serialized, context_features={"len": tf.FixedLenFeature([], tf.int64),
                                      "opt": tf.FixedLenFeature([], tf.int64, default_value=7)},
        sequence_features={"tok": tf.FixedLenSequenceFeature([], tf.int64),
                           "pair": tf.FixedLenSequenceFeature([2], tf.int64),
                           "v": tf.VarLenFeature(tf.float32),
                           "m": tf.FixedLenSequenceFeature([2], tf.float32,
                                                           allow_missing=True)})
    assert sequence["pair"].shape.as_list() == [None, 2]
    assert sequence["tok"].op.type == "ParseSingleSequenceExample"
    with tf.Session() as sess:
        c, q = sess.run([context, sequence], {serialized: _sequence_example()})
        assert c == {"len": 3, "opt": 7}
        np.testing.assert_array_equal(q["tok"], [0, 1, 2])
        np.testing.assert_array_equal(q["pair"], [[0, 0], [1, -1], [2, -2]])
        np.testing.assert_array_equal(q["v"].indices, [[1, 0], [2, 0], [2, 1]])
        np.testing.assert_array_equal(q["v"].dense_shape, [3, 2])
        assert q["m"].shape == (0, 2) and q["m"].dtype == np.float32
        bare = tf.train.SequenceExample(context=tf.train.Features(feature={
            "len": tf.train.Feature(int64_list=tf.train.Int64List(value=[0]))}))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Feature list '(pair|tok)' is required"):
            sess.run(sequence, {serialized: bare.SerializeToString()})


# -- DecodeCSV -----------------------------------------------------------------------------------

def test_decode_csv_types_defaults_and_quotes(graph):
    records = tf.constant([["1,2.5,\"a,b\",7", ",,x,"], ["3,-1e3,\"q\"\"t\",8", "4,0,,9"]])
    a, b, c, d = tf.decode_csv(records, record_defaults=[[0], [0.5], [""],
                                                        tf.constant([6], tf.int64)])
    assert a.shape.as_list() == [2, 2] and a.op.type == "DecodeCSV"
    assert [t.dtype for t in (a, b, c, d)] == [tf.int32, tf.float32, tf.string, tf.int64]
    with tf.Session() as sess:
        va, vb, vc, vd = sess.run([a, b, c, d])
    np.testing.assert_array_equal(va, [[1, 0], [3, 4]])
    np.testing.assert_allclose(vb, [[2.5, 0.5], [-1000.0, 0.0]])
    assert vc.tolist() == [[b"a,b", b"x"], [b'q"t', b""]]
    np.testing.assert_array_equal(vd, [[7, 6], [8, 9]])


def test_decode_csv_options_and_errors(graph):
    with tf.Session() as sess:
        x, y = tf.decode_csv(["1|NA", "NA|2"], [[0.0], [-1.0]], field_delim="|",
                             na_value="NA")
        np.testing.assert_allclose(sess.run([x, y]), [[1.0, 0.0], [-1.0, 2.0]])
        (quoted,) = tf.decode_csv(['"a"'], [[""]], use_quote_delim=False)
        assert sess.run(quoted).tolist() == [b'"a"']
        picked = tf.decode_csv(["1,2,3,4"], [[0], [0]], select_cols=[1, 3])
        assert [v.tolist() for v in sess.run(picked)] == [[2], [4]]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 3 "
                                                                 "in record 0"):
            sess.run(tf.decode_csv(["1,2,3"], [[0], [0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 is required but "
                                                                 "missing in record 1"):
            sess.run(tf.decode_csv(["1,2", "3,"], [[0], tf.constant([], tf.int32)]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 in record 0 is not "
                                                                 "a valid int32: 1.5"):
            sess.run(tf.decode_csv(["1.5"], [[0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32"):
            sess.run(tf.decode_csv(["9999999999"], [[0]]))
    with pytest.raises(ValueError, match="strictly increasing"):
        tf.decode_csv(["1"], [[0], [0]], select_cols=[1, 0])


FIELDS = ["1_000", " 1.5 ", "inf", "-nan", "1e400", "1.5e-320", "+3", "3.4028236e38", ".5",
          "NaN", "-0", "7", "2147483648", "-2147483649", "9223372036854775808", "0x10", "x",
          "\u0663", "NA", ""]


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.int64, tf.string])
def test_decode_csv_one_record_equals_the_batch_path(graph, dtype):
    # A tf.data map decodes one record at a time (a fast path); each value and each error
    # must be those of the same field decoded in a batch of records.
    default = {tf.string: b"d"}.get(dtype, 5)
    record = tf.placeholder(tf.string, [None])
    (column,) = tf.decode_csv(record, [tf.constant([default], dtype)], na_value="NA")
    with tf.Session() as sess:
        for text in FIELDS:
            batch = [text, "7"]
            try:
                expected = sess.run(column, {record: batch})[:1]
            except tf.errors.InvalidArgumentError as err:
                expected = err.message
            try:
                got = sess.run(column, {record: [text]})
            except tf.errors.InvalidArgumentError as err:
                got = err.message
            if isinstance(expected, str):
                assert got == expected, text
            else:
                assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes() \
                    if dtype != tf.string else got.tolist() == expected.tolist(), text


def test_decode_csv_number_syntax_is_tfs(graph):
    # TF parses with strtod/strto64: hexadecimal floats are numbers, digit separators are not
    # (Python's float() and NumPy's casts would take "1_000").
    rec = tf.placeholder(tf.string, [None])
    (f32,) = tf.decode_csv(rec, [[0.0]])
    (i64,) = tf.decode_csv(rec, [tf.constant([0], tf.int64)])
    with tf.Session() as sess:
        for batch in (["0x10"], ["0x10", "-0x1p3", " 2.5 "]):
            np.testing.assert_array_equal(sess.run(f32, {rec: batch}),
                                          [16.0, -8.0, 2.5][:len(batch)])
        np.testing.assert_array_equal(sess.run(i64, {rec: ["+5", " 7 "]}), [5, 7])
        for bad, column in (("1_000", f32), ("1_000", i64), ("0x10", i64), ("1e", f32)):
            for batch in ([bad], ["1", bad]):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=f"record {len(batch) - 1} is not a valid"):
                    sess.run(column, {rec: batch})
