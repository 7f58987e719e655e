"""Readers and file ops: keys and values as TensorFlow produces them, counters, blocking reads."""

import gzip
import os
import threading

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.lib.formats import tfrecord

COVERED_OPS = {"TextLineReaderV2", "FixedLengthRecordReaderV2", "TFRecordReaderV2",
               "WholeFileReaderV2", "IdentityReaderV2", "ReaderReadV2", "ReaderReadUpToV2",
               "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2",
               "ReadFile", "WriteFile", "MatchingFiles"}
GRADIENT_CASES = []  # file ops are not differentiable

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures")


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.fixture
def files(tmp_path):
    text = tmp_path / "a.txt"
    text.write_bytes(b"h1\nl1\nl2\r\n\nl4")
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"0123456789abcdefghijXY")
    return str(text), str(binary)


def _read_all(reader, filenames, limit=20, up_to=None):
    """Runs reader.read (or read_up_to) until the closed filename queue is exhausted."""
    queue = tf.FIFOQueue(10, [tf.string], shapes=[[]])
    key, value = reader.read_up_to(queue, up_to) if up_to else reader.read(queue)
    out = []
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([filenames]))
        sess.run(queue.close())
        for _ in range(limit):
            try:
                k, v = sess.run([key, value])
            except tf.errors.OutOfRangeError as err:
                assert "is closed and has insufficient elements" in err.message
                break
            out.append((k.tolist() if up_to else k, v.tolist() if up_to else v))
        counts = sess.run([reader.num_records_produced(), reader.num_work_units_completed()])
    return out, counts


def test_text_line_reader(graph, files):
    text, _ = files
    reader = tf.TextLineReader(skip_header_lines=1)
    assert reader.reader_ref.op.type == "TextLineReaderV2"
    out, counts = _read_all(reader, [text, text])
    lines = [(f"{text}:{i}".encode(), v) for i, v in [(2, b"l1"), (3, b"l2"), (4, b""),
                                                      (5, b"l4")]]
    assert out == lines * 2
    assert counts == [8, 2]


def test_read_up_to_stops_at_the_end_of_each_file(graph, files):
    text, _ = files
    out, counts = _read_all(tf.TextLineReader(), [text, text], up_to=3)
    keys = [[f"{text}:{i}".encode() for i in r] for r in ([1, 2, 3], [4, 5])] * 2
    assert [k for k, _ in out] == keys
    assert out[0][1] == [b"h1", b"l1", b"l2"] and out[1][1] == [b"", b"l4"]
    assert counts == [10, 2]


def test_fixed_length_record_reader(graph, files, tmp_path):
    _, binary = files
    out, counts = _read_all(tf.FixedLengthRecordReader(4, header_bytes=2, footer_bytes=2),
                            [binary])
    assert out == [(f"{binary}:{i}".encode(), v) for i, v in
                   enumerate([b"2345", b"6789", b"abcd", b"efgh"])]
    assert counts == [4, 1]
    with tf.Graph().as_default():
        out, _ = _read_all(tf.FixedLengthRecordReader(4, hop_bytes=3), [binary])
        assert [v for _, v in out] == [b"0123", b"3456", b"6789", b"9abc", b"cdef", b"fghi",
                                       b"ijXY"]
    packed = tmp_path / "b.gz"
    packed.write_bytes(gzip.compress(b"0123456789abcdefghijXY"))
    with tf.Graph().as_default():
        out, _ = _read_all(tf.FixedLengthRecordReader(10, encoding="GZIP"), [str(packed)])
        assert [v for _, v in out] == [b"0123456789", b"abcdefghij"]


def test_whole_file_and_identity_readers(graph, files):
    text, binary = files
    out, counts = _read_all(tf.WholeFileReader(), [text, binary])
    assert out == [(text.encode(), b"h1\nl1\nl2\r\n\nl4"),
                   (binary.encode(), b"0123456789abcdefghijXY")]
    assert counts == [2, 2]
    with tf.Graph().as_default():
        out, counts = _read_all(tf.IdentityReader(), ["x", "y"])
        assert out == [(b"x", b"x"), (b"y", b"y")] and counts == [2, 2]


@pytest.mark.parametrize("suffix,options", [
    ("", None),
    (".gz", tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)),
    (".zlib", tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.ZLIB)),
])
def test_tfrecord_reader_reads_tensorflow_files(graph, suffix, options):
    path = os.path.join(FIXTURES, "examples.tfrecord" + suffix)
    expected = list(tfrecord.tf_record_iterator(path, options))
    out, counts = _read_all(tf.TFRecordReader(options=options), [path])
    assert [v for _, v in out] == expected and len(expected) == 5
    offsets = np.cumsum([0] + [16 + len(r) for r in expected[:-1]])
    assert [k for k, _ in out] == [f"{path}:{o}".encode() for o in offsets]
    assert counts == [5, 1]


def test_corrupt_tfrecord_is_data_loss_and_missing_file_not_found(graph, tmp_path):
    data = bytearray(tfrecord.records_to_bytes([b"abc", b"defg"]))
    data[-3] ^= 0xFF
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    queue = tf.FIFOQueue(4, [tf.string], shapes=[[]])
    reader = tf.TFRecordReader()
    key, value = reader.read(queue)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[str(bad), str(tmp_path / "missing")]]))
        assert sess.run(value) == b"abc"
        with pytest.raises(tf.errors.DataLossError, match="checksum"):
            sess.run(value)
        with pytest.raises(tf.errors.NotFoundError, match="missing"):
            sess.run(value)


def test_read_waits_for_filenames_and_times_out_cleanly(graph, files):
    text, _ = files
    queue = tf.FIFOQueue(4, [tf.string], shapes=[[]])
    reader = tf.TextLineReader()
    key, value = reader.read(queue)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(value, options=tf.RunOptions(timeout_in_ms=100))
        result = {}
        waiter = threading.Thread(target=lambda: result.update(v=sess.run(value)))
        waiter.start()
        sess.run(queue.enqueue(text))
        waiter.join(5)
        assert result["v"] == b"h1"
        assert sess.run(queue.size()) == 0
        sess.run(reader.reset())
        assert sess.run(reader.num_records_produced()) == 0
        sess.run(queue.enqueue(text))
        assert sess.run(value) == b"h1"  # reset dropped the half-read file


def test_concurrent_reads_deliver_every_line_once(graph, tmp_path):
    paths = []
    for k in range(4):
        path = tmp_path / f"f{k}.txt"
        path.write_text("\n".join(f"{k}-{i}" for i in range(50)) + "\n")
        paths.append(str(path))
    queue = tf.FIFOQueue(8, [tf.string], shapes=[[]])
    reader = tf.TextLineReader()
    _, line = reader.read(queue)
    _, lines = reader.read_up_to(queue, 7)
    got, lock = [], threading.Lock()
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([paths]))
        sess.run(queue.close())

        def work(fetch):
            while True:
                try:
                    out = sess.run(fetch)
                except tf.errors.OutOfRangeError:
                    return
                with lock:
                    got.extend(np.atleast_1d(out).tolist())

        threads = [threading.Thread(target=work, args=(f,)) for f in (line, lines, line)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert sorted(got) == sorted(f"{k}-{i}".encode() for k in range(4) for i in range(50))


def test_read_write_and_match_files(graph, tmp_path):
    target = str(tmp_path / "sub" / "out.bin")
    write = tf.write_file(target, tf.constant(b"\x00payload"))
    read = tf.read_file(target)
    assert read.shape.as_list() == [] and read.dtype == tf.string
    (tmp_path / "x1.txt").write_text("1")
    (tmp_path / "x0.txt").write_text("0")
    matches = tf.matching_files(str(tmp_path / "x*.txt"))
    several = tf.matching_files([str(tmp_path / "x1*"), str(tmp_path / "nothing*")])
    with tf.Session() as sess:
        sess.run(write)
        assert sess.run(read) == b"\x00payload"
        assert sess.run(matches).tolist() == [str(tmp_path / f"x{i}.txt").encode()
                                              for i in range(2)]
        assert sess.run(several).tolist() == [str(tmp_path / "x1.txt").encode()]
        with pytest.raises(tf.errors.NotFoundError, match="No such file"):
            sess.run(tf.read_file(str(tmp_path / "absent")))


def test_concurrent_fixed_length_reads_deliver_every_record_once(graph, tmp_path):
    # Reads served at once (a work item open, nobody reading) and reads that wait for the
    # next file mix across threads; every record comes once, keys name file and index.
    paths = []
    for k in range(5):
        path = tmp_path / f"r{k}.bin"
        path.write_bytes(b"".join(bytes([k, i, 255 - i]) for i in range(40 + k)))
        paths.append(str(path))
    queue = tf.FIFOQueue(8, [tf.string], shapes=[[]])
    reader = tf.FixedLengthRecordReader(record_bytes=3)
    key, value = reader.read(queue)
    got, lock = [], threading.Lock()
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([paths]))
        sess.run(queue.close())

        def work():
            while True:
                try:
                    k, v = sess.run([key, value])
                except tf.errors.OutOfRangeError:
                    return
                with lock:
                    got.append((k, v))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        counts = sess.run([reader.num_records_produced(), reader.num_work_units_completed()])
    expected = sorted((f"{paths[k]}:{i}".encode(), bytes([k, i, 255 - i]))
                      for k in range(5) for i in range(40 + k))
    assert sorted(got) == expected
    assert counts == [len(expected), 5]
