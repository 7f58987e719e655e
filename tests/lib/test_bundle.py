import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tensorflux.framework import errors
from tensorflux.lib.formats import bundle
from tensorflux.lib.formats.bundle import (
    BundleReader,
    bundle_exists,
    data_filename,
    index_filename,
    write_bundle,
)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# NumPy dtype -> TensorFlow DataType enum value.
DTYPE_ENUMS = {
    np.float16: 19,
    np.float32: 1,
    np.float64: 2,
    np.int8: 6,
    np.int16: 5,
    np.int32: 3,
    np.int64: 9,
    np.uint8: 4,
    np.uint16: 17,
    np.uint32: 22,
    np.uint64: 23,
    np.bool_: 10,
    np.complex64: 8,
    np.complex128: 18,
}
SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


def numeric_arrays():
    return st.sampled_from(list(DTYPE_ENUMS)).flatmap(
        lambda dtype: hnp.arrays(np.dtype(dtype), SHAPES)
    )


def string_arrays():
    return SHAPES.flatmap(
        lambda shape: st.lists(
            st.binary(max_size=20),
            min_size=int(np.prod(shape)),
            max_size=int(np.prod(shape)),
        ).map(lambda items: np.array(items, dtype=object).reshape(shape))
    )


def assert_same(actual, expected):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape
    if expected.dtype == object:
        assert actual.dtype == object
        assert actual.tolist() == expected.tolist()
    else:
        assert actual.dtype == expected.dtype.newbyteorder("=")
        assert actual.dtype.isnative
        # Bitwise, so NaN payloads and signed zeros count too.
        assert actual.tobytes() == np.ascontiguousarray(expected, actual.dtype).tobytes()


def flip_byte(path, position):
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0x40]))


@pytest.fixture
def prefix(tmp_path):
    return str(tmp_path / "ckpt" / "model.ckpt-1")


# --- Round trips --------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12), numeric_arrays() | string_arrays(), max_size=5
    )
)
def test_round_trip_hypothesis(tensors):
    with tempfile.TemporaryDirectory() as directory:
        prefix = os.path.join(directory, "ckpt")
        write_bundle(prefix, tensors)
        with BundleReader(prefix) as reader:
            assert reader.keys() == sorted(tensors)
            for name, array in tensors.items():
                assert reader.has_tensor(name)
                enum, shape = reader.get_dtype_and_shape(name)
                assert shape == array.shape
                assert enum == (7 if array.dtype == object else DTYPE_ENUMS[array.dtype.type])
                assert_same(reader.get_tensor(name), array)


@pytest.mark.parametrize("dtype", list(DTYPE_ENUMS), ids=lambda d: np.dtype(d).name)
def test_each_dtype(prefix, dtype):
    rng = np.random.default_rng(0)
    values = {
        "matrix": (rng.standard_normal((3, 5)) * 100).astype(dtype),
        "scalar": np.array(7, dtype=dtype),
        "empty": np.zeros((0, 4), dtype=dtype),
        "zero_size_3d": np.zeros((2, 0, 3), dtype=dtype),
    }
    write_bundle(prefix, values)
    reader = BundleReader(prefix)
    for name, value in values.items():
        assert reader.get_dtype_and_shape(name) == (DTYPE_ENUMS[dtype], value.shape)
        assert_same(reader.get_tensor(name), value)
    reader.close()


def test_extreme_values(prefix):
    values = {
        "f32": np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(np.float32).tiny], np.float32),
        "i64": np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max], np.int64),
        "u64": np.array([0, np.iinfo(np.uint64).max], np.uint64),
        "c128": np.array([complex(np.nan, -0.0), 1e300 + 1e-300j]),
    }
    write_bundle(prefix, values)
    with BundleReader(prefix) as reader:
        for name, value in values.items():
            assert_same(reader.get_tensor(name), value)


def test_strings(prefix):
    values = {
        "objects": np.array([[b"a", b""], [b"\x00\xff", b"x" * 1000]], dtype=object),
        "scalar": np.array(b"only", dtype=object),
        "empty": np.zeros((0, 3), dtype=object),
        "from_str": np.array(["héllo", "w"], dtype=object),
        "bytes_dtype": np.array([b"ab", b"c"]),
        "unicode_dtype": np.array(["ab", "ü"]),
        "python_bytes": b"raw",
    }
    write_bundle(prefix, values)
    with BundleReader(prefix) as reader:
        assert reader.get_tensor("objects").tolist() == [[b"a", b""], [b"\x00\xff", b"x" * 1000]]
        scalar = reader.get_tensor("scalar")
        assert scalar.shape == () and scalar.dtype == object and scalar.item() == b"only"
        assert reader.get_tensor("empty").shape == (0, 3)
        assert reader.get_tensor("from_str").tolist() == ["héllo".encode(), b"w"]
        assert reader.get_tensor("bytes_dtype").tolist() == [b"ab", b"c"]
        assert reader.get_tensor("unicode_dtype").tolist() == [b"ab", "ü".encode()]
        assert reader.get_tensor("python_bytes").item() == b"raw"
        for name in values:
            assert reader.get_dtype_and_shape(name)[0] == 7


def test_non_native_and_non_contiguous_inputs(prefix):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    values = {
        "big_endian": np.arange(5, dtype=">i4"),
        "transposed": base.T,
        "strided": base[::2, 1::3],
        "fortran": np.asfortranarray(base),
        "python_list": [[1.5, 2.5]],
        "python_int": 3,
    }
    write_bundle(prefix, values)
    with BundleReader(prefix) as reader:
        for name, value in values.items():
            assert_same(reader.get_tensor(name), np.asarray(value))
        result = reader.get_tensor("transposed")
        assert result.flags.writeable and result.flags.c_contiguous


def test_file_layout(prefix):
    write_bundle(prefix, {"a": np.array([1, 2, 3], np.int32), "b": np.array([1.0], np.float64)})
    with open(data_filename(prefix), "rb") as f:
        data = f.read()
    # "a" at 0 (12 bytes), padding to 16, then "b"; little-endian, C order.
    assert data == b"\x01\0\0\0\x02\0\0\0\x03\0\0\0" + bytes(4) + np.float64(1.0).tobytes()
    with open(index_filename(prefix), "rb") as f:
        assert f.read(8) == b"TFLXCKPT"
    assert sorted(os.listdir(os.path.dirname(prefix))) == [
        "model.ckpt-1.data-00000-of-00001",
        "model.ckpt-1.index",
    ]


def test_overwrite_same_prefix(prefix):
    write_bundle(prefix, {"v": np.zeros(3)})
    write_bundle(prefix, {"v": np.ones(5), "w": np.int32(1)})
    with BundleReader(prefix) as reader:
        assert reader.keys() == ["v", "w"]
        assert_same(reader.get_tensor("v"), np.ones(5))


def test_empty_bundle(prefix):
    write_bundle(prefix, {})
    assert bundle_exists(prefix)
    with BundleReader(prefix) as reader:
        assert reader.keys() == []


def test_concurrent_reads(prefix):
    values = {f"t{i}": np.full((100, 100), i, np.float32) for i in range(16)}
    write_bundle(prefix, values)
    with BundleReader(prefix) as reader, ThreadPoolExecutor(8) as pool:
        results = list(pool.map(reader.get_tensor, list(values) * 4))
    for name, result in zip(list(values) * 4, results):
        assert_same(result, values[name])


# --- Bad inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        np.array([1, 2], dtype=object),
        np.zeros(2, dtype=[("x", np.int32)]),
    ],
    ids=["datetime", "object_ints", "structured"],
)
def test_unsupported_dtypes(prefix, value):
    with pytest.raises(errors.InvalidArgumentError, match="'bad'"):
        write_bundle(prefix, {"bad": value})
    assert not bundle_exists(prefix)
    assert not os.listdir(os.path.dirname(prefix))


def test_bad_names(prefix):
    with pytest.raises(errors.InvalidArgumentError):
        write_bundle(prefix, {"": np.zeros(1)})
    with pytest.raises(errors.InvalidArgumentError):
        write_bundle(prefix, {3: np.zeros(1)})


def test_bfloat16_entry_is_a_clear_error(prefix):
    write_bundle(prefix, {"h": np.zeros(4, np.float16)})
    with BundleReader(prefix) as reader:
        entry = dict(reader._entries["h"], dtype=14)
    bundle._write_index_file(index_filename(prefix), [entry])
    with BundleReader(prefix) as reader:
        assert reader.get_dtype_and_shape("h") == (14, (4,))
        with pytest.raises(errors.UnimplementedError, match="'h'.*bfloat16"):
            reader.get_tensor("h")


# --- Missing and corrupted files ----------------------------------------------------------------


def test_missing_key(prefix):
    write_bundle(prefix, {"dense/kernel": np.zeros(2)})
    with BundleReader(prefix) as reader:
        assert not reader.has_tensor("dense/kernal")
        with pytest.raises(errors.NotFoundError, match="'dense/kernal'.*did you mean"):
            reader.get_tensor("dense/kernal")
        with pytest.raises(errors.NotFoundError, match="'nothing_like_it' not found"):
            reader.get_dtype_and_shape("nothing_like_it")


def test_missing_files(prefix):
    with pytest.raises(errors.NotFoundError, match=r"model\.ckpt-1\.index"):
        BundleReader(prefix)
    assert not bundle_exists(prefix)
    write_bundle(prefix, {"v": np.zeros(2)})
    os.remove(data_filename(prefix))
    with pytest.raises(errors.NotFoundError, match=r"model\.ckpt-1\.data-00000-of-00001"):
        BundleReader(prefix)


def test_corrupted_data_byte(prefix):
    write_bundle(prefix, {"a": np.arange(10, dtype=np.int64), "b": np.arange(4.0)})
    flip_byte(data_filename(prefix), 3)
    with BundleReader(prefix) as reader:
        with pytest.raises(errors.DataLossError, match=r"'a'.*data-00000-of-00001"):
            reader.get_tensor("a")
        assert_same(reader.get_tensor("b"), np.arange(4.0))


def test_corrupted_string_data(prefix):
    write_bundle(prefix, {"s": np.array([b"abc", b"de"], dtype=object)})
    flip_byte(data_filename(prefix), 0)  # inside the first length
    with BundleReader(prefix) as reader, pytest.raises(errors.DataLossError, match="'s'"):
        reader.get_tensor("s")


def test_truncated_data_file(prefix):
    write_bundle(prefix, {"a": np.arange(4, dtype=np.int32), "b": np.arange(100.0)})
    size = os.path.getsize(data_filename(prefix))
    os.truncate(data_filename(prefix), size - 8)
    with BundleReader(prefix) as reader:
        assert_same(reader.get_tensor("a"), np.arange(4, dtype=np.int32))
        with pytest.raises(errors.DataLossError, match=r"truncated.*'b'"):
            reader.get_tensor("b")


@pytest.mark.parametrize(
    "position", [0, 9, 13, 30, -1], ids=["magic", "version", "length", "body", "crc"]
)
def test_corrupted_index(prefix, position):
    write_bundle(prefix, {"a": np.zeros(3), "b": np.ones(2)})
    path = index_filename(prefix)
    flip_byte(path, position % os.path.getsize(path))
    with pytest.raises(errors.DataLossError, match=r"model\.ckpt-1\.index"):
        BundleReader(prefix)


@pytest.mark.parametrize("keep", [0, 5, 19, -1])
def test_truncated_index(prefix, keep):
    write_bundle(prefix, {"a": np.zeros(3)})
    path = index_filename(prefix)
    os.truncate(path, keep % os.path.getsize(path))
    with pytest.raises(errors.DataLossError, match=r"\.index"):
        BundleReader(prefix)


def test_index_with_inconsistent_entry(prefix):
    write_bundle(prefix, {"a": np.zeros(3)})
    with BundleReader(prefix) as reader:
        entry = dict(reader._entries["a"], shape=[4])
    bundle._write_index_file(index_filename(prefix), [entry])  # valid CRC, wrong size
    with pytest.raises(errors.DataLossError, match="malformed.*'a'"):
        BundleReader(prefix)


# --- Atomicity ----------------------------------------------------------------------------------


def test_failure_before_index_keeps_previous_bundle(prefix, monkeypatch):
    write_bundle(prefix, {"v": np.arange(3.0)})

    def crash(path, entries, data_files=()):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(bundle, "_write_index_file", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        write_bundle(prefix, {"v": np.arange(7.0), "w": np.zeros(2)})
    # The temporary files are gone and the previous bundle is intact.
    assert sorted(os.listdir(os.path.dirname(prefix))) == [
        "model.ckpt-1.data-00000-of-00001",
        "model.ckpt-1.index",
    ]
    with BundleReader(prefix) as reader:
        assert reader.keys() == ["v"]
        assert_same(reader.get_tensor("v"), np.arange(3.0))


def test_failure_on_first_write_leaves_nothing(prefix, monkeypatch):
    monkeypatch.setattr(bundle, "_write_index_file", lambda path, entries, data_files=(): 1 / 0)
    with pytest.raises(ZeroDivisionError):
        write_bundle(prefix, {"v": np.zeros(2)})
    assert not bundle_exists(prefix)
    assert not os.path.exists(index_filename(prefix))
    assert not os.path.exists(data_filename(prefix))


def test_process_killed_between_temp_files(prefix):
    write_bundle(prefix, {"v": np.arange(3.0)})
    child = (
        "import os, sys, numpy as np\n"
        "from tensorflux.lib.formats import bundle\n"
        "bundle._write_index_file = lambda path, entries, data_files=(): os._exit(17)\n"
        "bundle.write_bundle(sys.argv[1], {'v': np.arange(9.0)})\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", child, prefix], cwd=REPO_ROOT, capture_output=True, timeout=60
    )
    assert result.returncode == 17, result.stderr.decode()
    names = os.listdir(os.path.dirname(prefix))
    # The killed writer left its temporary data file behind, but no new index.
    assert any(".tfxtmp-" in name for name in names)
    assert [n for n in names if n.endswith(".index")] == ["model.ckpt-1.index"]
    with BundleReader(prefix) as reader:
        assert_same(reader.get_tensor("v"), np.arange(3.0))
    # The next save in the directory removes the dead writer's temporary file.
    write_bundle(prefix, {"v": np.arange(4.0)})
    assert sorted(os.listdir(os.path.dirname(prefix))) == [
        "model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index"]
