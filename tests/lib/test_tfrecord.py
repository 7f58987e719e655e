import gzip
import io
import json
import os
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorflux.framework import errors
from tensorflux.lib.formats import crc32c
from tensorflux.lib.formats.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordReaderStream,
    TFRecordWriter,
    encode_record,
    records_from_bytes,
    records_to_bytes,
    tf_record_iterator,
)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
FIXTURE_FILES = {
    "": "examples.tfrecord",
    "GZIP": "examples.tfrecord.gz",
    "ZLIB": "examples.tfrecord.zlib",
}
RECORDS = [b"", b"a", b"hello world", bytes(range(256)) * 3, os.urandom(100_000), b"end"]


def fixture_path(compression):
    path = os.path.join(FIXTURES, FIXTURE_FILES[compression])
    if not os.path.exists(path):
        pytest.skip(f"fixture {path} is missing")
    return path


def write(path, records, options=None):
    with TFRecordWriter(path, options) as writer:
        for record in records:
            writer.write(record)


# --- Files written by TensorFlow ---------------------------------------------------------------


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_reads_tensorflow_fixtures(compression):
    records = list(tf_record_iterator(fixture_path(compression), compression))
    with open(os.path.join(FIXTURES, "examples.json")) as f:
        expected = json.load(f)
    assert len(records) == len(expected) == 5
    for record, features in zip(records, expected):
        for name_hex in features["name_hex"]:
            assert bytes.fromhex(name_hex) in record


def test_fixtures_hold_identical_records():
    plain, gz, zl = (list(tf_record_iterator(fixture_path(c), c)) for c in ("", "GZIP", "ZLIB"))
    assert plain == gz == zl


def test_fixture_first_header_matches_hand_computed():
    with open(fixture_path(""), "rb") as f:
        header = f.read(12)
    # TensorFlow wrote: uint64 length 68, then the masked CRC32C of those 8 bytes.
    assert header == b"\x44\0\0\0\0\0\0\0" + b"\x43\x59\x2e\x9a"
    length_bytes = struct.pack("<Q", 68)
    assert struct.unpack("<I", header[8:])[0] == crc32c.mask(crc32c.value(length_bytes))


def test_rewriting_fixture_records_reproduces_tensorflow_bytes(tmp_path):
    source = fixture_path("")
    path = str(tmp_path / "copy.tfrecord")
    write(path, tf_record_iterator(source))
    with open(source, "rb") as a, open(path, "rb") as b:
        assert a.read() == b.read()


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_fixture_decompresses_to_plain_fixture(compression):
    with open(fixture_path(compression), "rb") as f:
        compressed = f.read()
    with open(fixture_path(""), "rb") as f:
        plain = f.read()
    inflate = gzip.decompress if compression == "GZIP" else zlib.decompress
    assert inflate(compressed) == plain


def test_zlib_fixture_with_tiny_input_buffer():
    options = TFRecordOptions("ZLIB", input_buffer_size=3)
    assert list(tf_record_iterator(fixture_path("ZLIB"), options)) == list(
        tf_record_iterator(fixture_path(""))
    )


# --- Framing ------------------------------------------------------------------------------------


def test_encode_record_hand_computed():
    data = b"hello"
    length = struct.pack("<Q", 5)
    expected = (
        length
        + struct.pack("<I", crc32c.mask(crc32c.value(length)))
        + data
        + struct.pack("<I", crc32c.mask(0x9A71BB4C))
    )
    assert crc32c.value(data) == 0x9A71BB4C
    assert encode_record(data) == expected


def test_empty_record_bytes():
    # The data CRC of an empty record is mask(0) = 0xa282ead8.
    assert encode_record(b"") == bytes(8) + b"\x29\x03\x98\x07" + b"\xd8\xea\x82\xa2"


def test_writer_bytes_equal_framing(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    write(path, RECORDS)
    with open(path, "rb") as f:
        assert f.read() == b"".join(encode_record(r) for r in RECORDS)


def test_writer_accepts_str_bytearray_memoryview(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    write(path, ["héllo", bytearray(b"ab"), memoryview(b"cd")])
    assert list(tf_record_iterator(path)) == ["héllo".encode(), b"ab", b"cd"]


def test_writer_rejects_non_bytes(tmp_path):
    with TFRecordWriter(str(tmp_path / "r.tfrecord")) as writer, pytest.raises(TypeError):
        writer.write(3)


# --- Round trips --------------------------------------------------------------------------------

OPTIONS = [
    None,
    "",
    "ZLIB",
    "GZIP",
    TFRecordCompressionType.NONE,
    TFRecordCompressionType.ZLIB,
    TFRecordCompressionType.GZIP,
    TFRecordOptions(TFRecordCompressionType.GZIP),
    TFRecordOptions("ZLIB", compression_level=9),
]


@pytest.mark.parametrize("options", OPTIONS, ids=repr)
def test_round_trip(tmp_path, options):
    path = str(tmp_path / "r.tfrecord")
    write(path, RECORDS, options)
    assert list(tf_record_iterator(path, options)) == RECORDS


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_files_are_standard_streams(tmp_path, compression):
    path = str(tmp_path / "r.tfrecord")
    write(path, RECORDS, compression)
    with open(path, "rb") as f:
        compressed = f.read()
    inflate = gzip.decompress if compression == "GZIP" else zlib.decompress
    assert inflate(compressed) == b"".join(encode_record(r) for r in RECORDS)
    assert len(compressed) < 100_000 + 2000  # only the random record resists compression


@settings(max_examples=30, deadline=None)
@given(st.lists(st.binary(max_size=2000), max_size=8), st.sampled_from(["", "GZIP", "ZLIB"]))
def test_round_trip_in_memory(records, compression):
    data = records_to_bytes(records, compression)
    assert records_from_bytes(data, compression) == records
    small = TFRecordOptions(compression, input_buffer_size=5)
    assert records_from_bytes(data, small) == records


def test_offsets_count_uncompressed_bytes(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    write(path, [b"abc", b"", b"xy"], "ZLIB")
    with TFRecordReaderStream(path, "ZLIB") as stream:
        offsets = [stream.offset]
        while stream.read_record() is not None:
            offsets.append(stream.offset)
    assert offsets == [0, 19, 35, 53]


def test_many_records_large_zlib_stream(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    records = [str(i).encode() * (i % 50) for i in range(3000)]
    write(path, records, TFRecordOptions("ZLIB"))
    options = TFRecordOptions("ZLIB", input_buffer_size=64)
    assert list(tf_record_iterator(path, options)) == records


def test_empty_files(tmp_path):
    for compression in ["", "GZIP", "ZLIB"]:
        path = str(tmp_path / f"empty{compression}")
        write(path, [], compression)
        assert list(tf_record_iterator(path, compression)) == []
    open(tmp_path / "zero", "wb").close()
    for compression in ["", "GZIP", "ZLIB"]:
        assert list(tf_record_iterator(str(tmp_path / "zero"), compression)) == []


def test_flush_makes_records_readable_before_close(tmp_path):
    for compression in ["", "GZIP", "ZLIB"]:
        path = str(tmp_path / f"live{compression}")
        writer = TFRecordWriter(path, compression)
        writer.write(b"first")
        writer.flush()
        assert list(tf_record_iterator(path, compression)) == [b"first"]
        writer.write(b"second")
        writer.close()
        assert list(tf_record_iterator(path, compression)) == [b"first", b"second"]


def test_write_after_close(tmp_path):
    writer = TFRecordWriter(str(tmp_path / "r"))
    writer.close()
    writer.close()
    with pytest.raises(errors.FailedPreconditionError):
        writer.write(b"x")


# --- Options ------------------------------------------------------------------------------------


def test_compression_type_strings():
    get = TFRecordOptions.get_compression_type_string
    assert get(None) == "" and get("") == "" and get(0) == ""
    assert get(1) == "ZLIB" and get("ZLIB") == "ZLIB"
    assert get(2) == "GZIP" and get(TFRecordOptions("GZIP")) == "GZIP"
    assert TFRecordOptions(TFRecordCompressionType.ZLIB).compression_type == 1
    with pytest.raises(ValueError, match="BZIP2"):
        TFRecordOptions("BZIP2")
    with pytest.raises(ValueError):
        get(7)


# --- Errors -------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.tfrecord")
    with pytest.raises(errors.NotFoundError, match="nope.tfrecord"):
        list(tf_record_iterator(path))
    with pytest.raises(errors.NotFoundError):
        TFRecordWriter(str(tmp_path / "no_dir" / "x.tfrecord"))


def corrupt(path, position, new=None):
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0x01]) if new is None else new)


def test_flipped_data_byte(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    write(path, [b"first", b"second"])
    corrupt(path, 21 + 12 + 2)  # inside the data of the second record
    stream = TFRecordReaderStream(path)
    assert stream.read_record() == b"first"
    with pytest.raises(errors.DataLossError, match=r"r\.tfrecord: .*data checksum.*offset 21"):
        stream.read_record()
    assert stream.offset == 21
    stream.close()


@pytest.mark.parametrize("position", [0, 3, 8, 11], ids=["length", "length3", "crc", "crc3"])
def test_flipped_header_byte(tmp_path, position):
    path = str(tmp_path / "r.tfrecord")
    write(path, [b"first"])
    corrupt(path, position)
    expected = r"r\.tfrecord: corrupted record \(length checksum mismatch\) at offset 0"
    with pytest.raises(errors.DataLossError, match=expected):
        list(tf_record_iterator(path))


def test_flipped_data_crc_byte(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    write(path, [b"first"])
    corrupt(path, 12 + 5 + 1)
    with pytest.raises(errors.DataLossError, match="data checksum mismatch"):
        list(tf_record_iterator(path))


def test_every_truncation_point(tmp_path):
    framed = encode_record(b"first") + encode_record(b"second!")
    boundary = len(encode_record(b"first"))
    for cut in range(len(framed) + 1):
        if cut in (0, boundary, len(framed)):
            expected = {0: [], boundary: [b"first"], len(framed): [b"first", b"second!"]}[cut]
            assert records_from_bytes(framed[:cut]) == expected
            continue
        stream = TFRecordReaderStream("cut.tfrecord", fileobj=io.BytesIO(framed[:cut]))
        if cut > boundary:
            assert stream.read_record() == b"first"
        offset = 0 if cut < boundary else boundary
        with pytest.raises(errors.DataLossError, match=f"cut.tfrecord: truncated.*{offset}"):
            stream.read_record()


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_truncated_compressed_file(tmp_path, compression):
    data = records_to_bytes([b"a" * 1000, os.urandom(5000)], compression)
    path = str(tmp_path / "r")
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(errors.DataLossError, match="truncated"):
        list(tf_record_iterator(path, compression))


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_garbage_compressed_stream(tmp_path, compression):
    data = bytearray(records_to_bytes([os.urandom(5000)], compression))
    data[len(data) // 2] ^= 0xFF
    path = str(tmp_path / "r")
    with open(path, "wb") as f:
        f.write(data)
    with pytest.raises(errors.DataLossError, match=r"/r: "):
        list(tf_record_iterator(path, compression))


def test_uncompressed_read_as_zlib_fails_cleanly(tmp_path):
    path = str(tmp_path / "r")
    write(path, [b"x" * 100])
    with pytest.raises(errors.DataLossError, match="corrupted compressed stream"):
        list(tf_record_iterator(path, "ZLIB"))


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_retry_after_truncation_when_file_grows(tmp_path, compression):
    second = os.urandom(2000)
    # A writer that flushed after each record: the file is a byte-aligned stream prefix.
    source = str(tmp_path / "source")
    writer = TFRecordWriter(source, compression)
    writer.write(b"first")
    writer.flush()
    first_size = os.path.getsize(source)
    writer.write(second)
    writer.flush()
    with open(source, "rb") as f:
        full = f.read()
    writer.close()
    cut = (first_size + len(full)) // 2
    path = str(tmp_path / "growing")
    with open(path, "wb") as f:
        f.write(full[:cut])
    stream = TFRecordReaderStream(path, compression)
    assert stream.read_record() == b"first"
    for _ in range(2):
        with pytest.raises(errors.DataLossError, match="truncated"):
            stream.read_record()
        assert stream.offset == len(encode_record(b"first"))
    with open(path, "ab") as f:
        f.write(full[cut:])
    assert stream.read_record() == second
    assert stream.offset == len(encode_record(b"first")) + len(encode_record(second))
    assert stream.read_record() is None
    stream.close()


def test_huge_length_with_valid_checksum_is_truncation_not_allocation():
    length = struct.pack("<Q", 2**62)
    header = length + struct.pack("<I", crc32c.mask(crc32c.value(length)))
    with pytest.raises(errors.DataLossError, match=r"truncated record \(expected 4611"):
        records_from_bytes(header + b"some bytes")


@pytest.mark.parametrize("compression", ["", "ZLIB"])
def test_record_larger_than_read_cap(tmp_path, compression):
    big = b"\x07" * (17 * 1024 * 1024) + b"tail"
    path = str(tmp_path / "big")
    write(path, [big, b"next"], compression)
    assert list(tf_record_iterator(path, compression)) == [big, b"next"]
