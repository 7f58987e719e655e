"""tf.data record sources over files written by TensorFlow and by the tests."""

import gzip
import json
import os
import zlib

import numpy as np
import pytest

import tensorflux as tf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
with open(os.path.join(FIXTURES, "examples.json")) as _handle:
    EXPECTED = json.load(_handle)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _drain(dataset, feed=None):
    iterator = dataset.make_initializable_iterator()
    element = iterator.get_next()
    out = []
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed)
        while True:
            try:
                out.append(sess.run(element))
            except tf.errors.OutOfRangeError:
                return out


def _parse(record):
    return tf.parse_single_example(record, {
        "id": tf.FixedLenFeature([2], tf.int64),
        "weights": tf.VarLenFeature(tf.float32),
        "name": tf.FixedLenFeature([2], tf.string),
    })


@pytest.mark.parametrize("suffix, compression", [("", None), (".gz", "GZIP"),
                                                 (".zlib", "ZLIB")])
def test_tfrecord_fixtures_parsed_in_map(suffix, compression):
    path = os.path.join(FIXTURES, "examples.tfrecord" + suffix)
    ds = tf.data.TFRecordDataset(path, compression_type=compression)
    assert ds.output_types == tf.string and ds.output_shapes.as_list() == []
    ds = ds.map(lambda r: (lambda f: (f["id"], f["name"], f["weights"].values))(_parse(r)))
    got = _drain(ds)
    assert len(got) == len(EXPECTED)
    for (ids, names, weights), want in zip(got, EXPECTED):
        np.testing.assert_array_equal(ids, want["id"])
        assert [n.hex() for n in names] == want["name_hex"]
        np.testing.assert_array_equal(weights, np.array(want["weights"], np.float32))


def test_tfrecord_batches_parsed_with_parse_example_and_fed_filenames():
    names = tf.placeholder(tf.string, [None])
    ds = tf.data.TFRecordDataset(names).batch(2).map(
        lambda rs: tf.parse_example(rs, {"id": tf.FixedLenFeature([2], tf.int64)})["id"])
    path = os.path.join(FIXTURES, "examples.tfrecord")
    got = _drain(ds, {names: [path, path]})
    ids = np.concatenate(got)
    want = np.array([e["id"] for e in EXPECTED] * 2)
    np.testing.assert_array_equal(ids, want)
    assert [len(b) for b in got] == [2, 2, 2, 2, 2]


def test_tfrecord_written_by_tensorflux_and_errors(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(4):
            writer.write(b"record-%d" % i)
    got = _drain(tf.data.TFRecordDataset([path]).skip(1))
    assert got == [b"record-1", b"record-2", b"record-3"]
    data = bytearray(open(path, "rb").read())
    data[14] ^= 0xFF
    bad = str(tmp_path / "bad.tfrecord")
    open(bad, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        _drain(tf.data.TFRecordDataset(bad))
    with pytest.raises(tf.errors.NotFoundError):
        _drain(tf.data.TFRecordDataset(str(tmp_path / "missing.tfrecord")))
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TFRecordDataset(path, compression_type="LZ4")


def test_text_line_dataset(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_bytes(b"first\r\nsecond\n\nlast")
    packed = tmp_path / "b.txt.gz"
    packed.write_bytes(gzip.compress(b"g1\ng2\n"))
    got = _drain(tf.data.TextLineDataset([str(plain)]))
    assert got == [b"first", b"second", b"", b"last"]
    got = _drain(tf.data.TextLineDataset(str(packed), compression_type="GZIP"))
    assert got == [b"g1", b"g2"]
    files = tf.data.Dataset.from_tensor_slices([str(plain), str(plain)])
    ds = files.interleave(lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=2)
    assert _drain(ds) == [b"second", b"second", b"", b"", b"last", b"last"]
    words = tf.data.TextLineDataset(str(plain)).map(lambda line: tf.string_split([line]).values)
    assert [list(w) for w in _drain(words)][:2] == [[b"first"], [b"second"]]


def test_fixed_length_record_dataset(tmp_path):
    body = bytes(range(12))
    path = tmp_path / "fixed.bin"
    path.write_bytes(b"HD" + body + b"F")
    ds = tf.data.FixedLengthRecordDataset(str(path), record_bytes=4, header_bytes=2,
                                          footer_bytes=1)
    assert _drain(ds) == [body[0:4], body[4:8], body[8:12]]
    zipped = tmp_path / "fixed.z"
    zipped.write_bytes(zlib.compress(body))
    ds = tf.data.FixedLengthRecordDataset(str(zipped), 6, compression_type="ZLIB").map(
        lambda r: tf.decode_raw(r, tf.uint8))
    np.testing.assert_array_equal(np.stack(_drain(ds)), np.arange(12).reshape(2, 6))


def test_list_files_and_dataset_of_filenames(tmp_path):
    for name in ("b.txt", "a.txt"):
        (tmp_path / name).write_bytes(name.encode() + b"\n")
    files = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert _drain(files) == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]
    assert _drain(tf.data.TextLineDataset(files)) == [b"a.txt", b"b.txt"]
    shuffled = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), seed=2)
    assert sorted(_drain(shuffled)) == _drain(files)
    with pytest.raises(tf.errors.InvalidArgumentError, match="no files"):
        tf.data.Dataset.list_files(str(tmp_path / "*.none"))


def test_num_parallel_reads_interleaves_files_in_tf_order(tmp_path):
    paths = []
    for name, count in (("a", 3), ("b", 1), ("c", 4)):
        path = str(tmp_path / f"{name}.tfrecord")
        with tf.python_io.TFRecordWriter(path) as writer:
            for i in range(count):
                writer.write(f"{name}{i}".encode())
        paths.append(path)
    got = _drain(tf.data.TFRecordDataset(paths, num_parallel_reads=2))
    # the order TensorFlow produces for these files
    assert [r.decode() for r in got] == ["a0", "b0", "a1", "a2", "c0", "c1", "c2", "c3"]
    assert [r.decode() for r in _drain(tf.data.TFRecordDataset(paths))] == [
        "a0", "a1", "a2", "b0", "c0", "c1", "c2", "c3"]


def test_parse_example_dataset_on_tfrecord_batches():
    ds = tf.data.TFRecordDataset(os.path.join(FIXTURES, "examples.tfrecord")).batch(5).apply(
        tf.data.experimental.parse_example_dataset({"id": tf.FixedLenFeature([2], tf.int64)}))
    (parsed,) = _drain(ds)
    np.testing.assert_array_equal(parsed["id"], [e["id"] for e in EXPECTED])


def test_csv_dataset_matches_tensorflow(tmp_path):
    path = tmp_path / "table.csv"
    path.write_bytes(b'a,b,c\n1,2.5,x\n3,,"y,z"\n')
    ds = tf.data.experimental.CsvDataset(str(path), [tf.int32, [0.5], [""]], header=True)
    assert ds.output_types == (tf.int32, tf.float32, tf.string)
    # the rows TensorFlow produces for this file
    assert _drain(ds) == [(1, 2.5, b"x"), (3, 0.5, b"y,z")]
    picked = tf.data.experimental.CsvDataset(str(path), [tf.int32, [""]], header=True,
                                             select_cols=[0, 2])
    assert _drain(picked) == [(1, b"x"), (3, b"y,z")]
    missing = tf.data.experimental.CsvDataset(str(path), [tf.int32, tf.float32, [""]],
                                              header=True)
    with pytest.raises(tf.errors.InvalidArgumentError):
        _drain(missing)
