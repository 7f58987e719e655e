"""tf.io codecs (SerializeTensor, ParseTensor, DecodeCompressed, DecodeJSONExample) and the
tf.io aliases; serialized bytes were produced by TensorFlow."""

import gzip
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.protos.example_pb2 import Example

COVERED_OPS = {"SerializeTensor", "ParseTensor", "DecodeCompressed", "DecodeJSONExample"}

# (value, TensorFlow's tf.io.serialize_tensor bytes)
TF_BYTES = [
    (np.arange(6, dtype=np.float32).reshape(2, 3),
     b'\x08\x01\x12\x08\x12\x02\x08\x02\x12\x02\x08\x03"\x18\x00\x00\x00\x00\x00\x00\x80?\x00'
     b'\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\xa0@'),
    (np.array([b"ab", b"c"], dtype=object), b"\x08\x07\x12\x04\x12\x02\x08\x02B\x02abB\x01c"),
    (np.int64(5), b'\x08\t\x12\x00"\x08\x05\x00\x00\x00\x00\x00\x00\x00'),
    (np.array([True, False]), b'\x08\n\x12\x04\x12\x02\x08\x02"\x02\x01\x00'),
    (np.array([1 + 2j], np.complex64), b'\x08\x08\x12\x04\x12\x02\x08\x01"\x08\x00\x00\x80?\x00'
                                       b'\x00\x00@'),
    (np.zeros((0, 2), np.int32), b"\x08\x03\x12\x06\x12\x00\x12\x02\x08\x02"),
    (np.array([1.5], np.float16), b'\x08\x13\x12\x04\x12\x02\x08\x01"\x02\x00>'),
]


def _run(x, feed=None):
    with tf.Session() as sess:
        return sess.run(x, feed)


@pytest.mark.parametrize("value,expected", TF_BYTES, ids=[str(v.dtype) for v, _ in TF_BYTES])
def test_serialize_matches_tensorflow_and_parses_back(value, expected):
    serialized = tf.io.serialize_tensor(value)
    assert serialized.shape.as_list() == [] and serialized.dtype is tf.string
    dtype = tf.as_dtype(value.dtype) if value.dtype != object else tf.string
    parsed = tf.io.parse_tensor(serialized, dtype)
    got, back = _run([serialized, parsed])
    assert got == expected
    assert back.dtype == value.dtype and back.shape == value.shape
    np.testing.assert_array_equal(back, value)
    np.testing.assert_array_equal(_run(tf.io.parse_tensor(expected, dtype)), value)


def test_parse_tensor_errors():
    serialized = tf.io.serialize_tensor([1.0, 2.0])
    with pytest.raises(errors.InvalidArgumentError, match=r"Type mismatch.*\(float32\).*int32"):
        _run(tf.io.parse_tensor(serialized, tf.int32))
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse"):
        _run(tf.io.parse_tensor(b"garbage\xff", tf.int32))
    with pytest.raises(ValueError, match="rank"):
        tf.io.parse_tensor([b"a", b"b"], tf.int32)
    p = tf.placeholder(tf.string)
    with pytest.raises(errors.InvalidArgumentError, match="scalar"):
        _run(tf.io.parse_tensor(p, tf.float32), {p: [b"", b""]})


def test_decode_compressed():
    out = tf.io.decode_compressed([zlib.compress(b"hello"), zlib.compress(b"")], "ZLIB")
    assert out.shape.as_list() == [2] and out.op.name == "DecodeCompressed"
    np.testing.assert_array_equal(_run(out), [b"hello", b""])
    assert _run(tf.io.decode_compressed(gzip.compress(b"hi"), compression_type="GZIP")) == b"hi"
    assert _run(tf.io.decode_compressed(b"raw")) == b"raw"
    with pytest.raises(errors.DataLossError, match="ZLIB data is corrupt"):
        _run(tf.io.decode_compressed(b"raw", "ZLIB"))
    with pytest.raises(ValueError, match="compression_type"):
        tf.io.decode_compressed(b"raw", "BZ2")


@settings(max_examples=20, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=4), st.sampled_from(["ZLIB", "GZIP"]))
def test_decompress_round_trip(blobs, kind):
    packed = [zlib.compress(b) if kind == "ZLIB" else gzip.compress(b) for b in blobs]
    with tf.Graph().as_default():
        assert list(_run(tf.io.decode_compressed(packed, kind))) == blobs


def test_decode_json_example():
    text = ('{"features": {"feature": {"a": {"int64List": {"value": [1, 2]}}, '
            '"b": {"bytesList": {"value": ["aGk="]}}}}}')
    out = tf.io.decode_json_example([text, '{}'])
    assert out.shape.as_list() == [2] and out.op.name == "DecodeJSONExample"
    binary = _run(out)
    # TensorFlow writes the int64 list unpacked; parsers read both encodings the same way.
    tf_bytes = (b"\n\x1a\n\x0b\n\x01a\x12\x06\x1a\x04\x08\x01\x08\x02\n\x0b\n\x01b\x12\x06\n"
                b"\x04\n\x02hi")
    assert Example.FromString(binary[0]) == Example.FromString(tf_bytes)
    assert binary[1] == b""
    parsed = tf.io.parse_single_example(binary[0], {"a": tf.io.FixedLenFeature([2], tf.int64)})
    np.testing.assert_array_equal(_run(parsed["a"]), [1, 2])
    with pytest.raises(errors.InvalidArgumentError, match="bogus"):
        _run(tf.io.decode_json_example('{"bogus": 1}'))


def test_io_aliases(tmp_path):
    for name in ("PaddingFIFOQueue", "PriorityQueue", "RandomShuffleQueue", "QueueBase",
                 "FIFOQueue"):
        assert getattr(tf.io, name) is getattr(tf, name)
    assert tf.io.write_graph is tf.train.write_graph
    assert tf.io.match_filenames_once is tf.train.match_filenames_once
    assert _run(tf.io.encode_base64(b"\xff\xfe>", pad=True)) == b"__4-"  # TF's answer
    assert _run(tf.io.decode_base64(b"__4-")) == b"\xff\xfe>"
    tf.constant(1.0, name="c")
    path = tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "g.pbtxt")
    assert 'name: "c"' in open(path).read()
