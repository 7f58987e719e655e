"""tf.io.parse_sequence_example (ParseSequenceExample) against parse_single_sequence_example
run on each record, padded with NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

COVERED_OPS = {"ParseSequenceExample"}


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _ints(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _floats(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def _bytes(values):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def _record(label, pairs=None, weights=(), words=None, tags=None):
    lists = {"w": tf.train.FeatureList(feature=[_floats(w) for w in weights])}
    if pairs is not None:
        lists["pair"] = tf.train.FeatureList(feature=[_ints(p) for p in pairs])
    if words is not None:
        lists["word"] = tf.train.FeatureList(feature=[_bytes([w]) for w in words])
    context = {"label": _ints([label])}
    if tags is not None:
        context["tags"] = _bytes(tags)
    return tf.train.SequenceExample(
        context=tf.train.Features(feature=context),
        feature_lists=tf.train.FeatureLists(feature_list=lists)).SerializeToString()


CONTEXT = {"label": tf.FixedLenFeature([], tf.int64), "tags": tf.VarLenFeature(tf.string)}
SEQUENCE = {"pair": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True),
            "w": tf.VarLenFeature(tf.float32),
            "word": tf.FixedLenSequenceFeature([], tf.string, allow_missing=True)}


def _singles(sess, records):
    serialized = tf.placeholder(tf.string, [])
    context, lists = tf.parse_single_sequence_example(serialized, CONTEXT, SEQUENCE)
    return [sess.run((context, lists), {serialized: r}) for r in records]


def _check_against_singles(sess, records):
    context, lists, lengths = tf.io.parse_sequence_example(records, CONTEXT, SEQUENCE)
    assert lists["pair"].op.type == "ParseSequenceExample"
    got_c, got_l, got_n = sess.run((context, lists, lengths))
    singles = _singles(sess, records)
    batch = len(records)
    np.testing.assert_array_equal(got_c["label"], [c["label"] for c, _ in singles])
    for key, shape, pad in (("pair", (2,), 0), ("word", (), b"")):
        steps = [len(s[key]) for _, s in singles]
        np.testing.assert_array_equal(got_n[key], steps)
        want = np.full((batch, max(steps, default=0)) + shape, pad,
                       dtype=object if pad == b"" else np.int64)
        for b, (_, s) in enumerate(singles):
            want[b, :len(s[key])] = s[key]
        assert got_l[key].shape == want.shape
        np.testing.assert_array_equal(got_l[key], want)
    for _key, got, parts in (("tags", got_c["tags"], [c["tags"] for c, _ in singles]),
                            ("w", got_l["w"], [s["w"] for _, s in singles])):
        want_idx = np.concatenate(
            [np.concatenate([np.full((len(p.indices), 1), b), p.indices], axis=1)
             for b, p in enumerate(parts)]) if parts else np.empty((0, 2))
        np.testing.assert_array_equal(got.indices.reshape(want_idx.shape), want_idx)
        np.testing.assert_array_equal(
            got.values, np.concatenate([p.values for p in parts]) if parts else [])
        tail = np.max([p.dense_shape for p in parts], axis=0) if parts else [0] * (
            got.dense_shape.size - 1)
        np.testing.assert_array_equal(got.dense_shape, [batch, *tail])


def test_batch_equals_single_parses(graph):
    records = [_record(7, [[1, 2], [3, 4], [5, 6]], [[1.0], [2.0, 3.0]], [b"a"], [b"x", b"y"]),
               _record(8, None, [[4.0, 5.0, 6.0]], [b"b", b"c", b"d", b"e"]),
               _record(9, [[7, 8]], [], None, [])]
    with tf.Session() as sess:
        _check_against_singles(sess, records)
        # Values also recorded from TF 2.21 tf.compat.v1.io.parse_sequence_example on these
        # records: lengths pair [3 0 1], word [1 4 0]; w dense_shape [3 2 3].
        _, lists, lengths = sess.run(tf.io.parse_sequence_example(records, CONTEXT, SEQUENCE))
        np.testing.assert_array_equal(lengths["pair"], [3, 0, 1])
        np.testing.assert_array_equal(lists["w"].dense_shape, [3, 2, 3])


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5),
                          st.lists(st.lists(st.integers(-9, 9), min_size=2, max_size=2),
                                   max_size=4),
                          st.lists(st.lists(st.floats(-1, 1, width=32), max_size=3),
                                   max_size=3),
                          st.lists(st.binary(max_size=3), max_size=3)), max_size=4))
def test_random_batches_equal_single_parses(rows):
    records = [_record(label, pairs, weights, words, []) for label, pairs, weights, words in rows]
    with tf.Graph().as_default(), tf.Session() as sess:
        _check_against_singles(sess, records)


def test_empty_batch(graph):
    serialized = tf.placeholder(tf.string, [None])
    context, lists, lengths = tf.io.parse_sequence_example(
        serialized, {"label": tf.FixedLenFeature([], tf.int64, default_value=0)},
        {"pair": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True),
         "w": tf.VarLenFeature(tf.float32)})
    assert lists["pair"].get_shape().as_list() == [None, None, 2]
    with tf.Session() as sess:
        c, s, n = sess.run((context, lists, lengths), {serialized: np.array([], object)})
    assert c["label"].shape == (0,) and s["pair"].shape == (0, 0, 2) and n["pair"].shape == (0,)
    assert s["w"].indices.shape == (0, 3)
    np.testing.assert_array_equal(s["w"].dense_shape, [0, 0, 0])


def test_missing_list_without_allow_missing_names_key_and_example(graph):
    records = [_record(1, [[1, 2]]), _record(2, None)]
    required = {"pair": tf.FixedLenSequenceFeature([2], tf.int64)}
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Name: second, Feature list 'pair' is required"):
            sess.run(tf.io.parse_sequence_example(records, sequence_features=required,
                                                  example_names=["first", "second"])[1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Name: <unknown>"):
            sess.run(tf.io.parse_sequence_example(records, sequence_features=required)[1])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Key: pair, Index: 0.  Number of values != expected"):
            sess.run(tf.io.parse_sequence_example(records, sequence_features={
                "pair": tf.FixedLenSequenceFeature([3], tf.int64, allow_missing=True)})[1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="label"):
            sess.run(tf.io.parse_sequence_example(
                [_record(1)], {"label": tf.FixedLenFeature([], tf.float32)})[0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
            sess.run(tf.io.parse_sequence_example([b"\xff\xff"], {"label": CONTEXT["label"]})[0])


def test_python_side_errors(graph):
    with pytest.raises(ValueError, match="Missing features"):
        tf.io.parse_sequence_example(["x"])
    with pytest.raises(ValueError, match=r"dense_defaults\[pair\] must be None"):
        tf.io.parse_sequence_example(["x"], sequence_features={
            "pair": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True,
                                               default_value=0)})
    with pytest.raises(ValueError, match="rank"):
        tf.io.parse_sequence_example(tf.constant("x"), {"label": CONTEXT["label"]})
