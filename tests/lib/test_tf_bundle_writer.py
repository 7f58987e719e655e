"""Writing TensorFlow's own bundle format (TFX_CHECKPOINT_FORMAT=tensorflow): the data file of
the TF-written fixture is reproduced byte for byte, the index parses to the same entries, and
checkpoints written this way restore through Saver and Checkpoint. Corruption is DataLoss."""

import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.lib.formats import bundle, tf_bundle_index

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "tf_v2_checkpoint", "model.ckpt")


@pytest.fixture
def tf_format(monkeypatch):
    monkeypatch.setenv("TFX_CHECKPOINT_FORMAT", "tensorflow")


def test_reproduces_tensorflows_data_file_and_index_entries(tf_format, tmp_path):
    reader = bundle.BundleReader(FIXTURE)
    tensors = {name: reader.get_tensor(name) for name in reader.keys()}
    reader.close()
    prefix = str(tmp_path / "copy")
    bundle.write_bundle(prefix, tensors)
    with open(FIXTURE + ".data-00000-of-00001", "rb") as f:
        theirs = f.read()
    with open(bundle.data_filename(prefix), "rb") as f:
        ours = f.read()
    assert ours == theirs
    with open(FIXTURE + ".index", "rb") as f:
        their_entries = tf_bundle_index.parse_tf_index("tf", f.read())
    with open(bundle.index_filename(prefix), "rb") as f:
        blob = f.read()
    assert tf_bundle_index.is_tf_index(blob)
    assert tf_bundle_index.parse_tf_index("ours", blob) == their_entries


def test_round_trip_of_dtypes_shapes_and_strings(tf_format, tmp_path):
    values = {
        "f": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
        "d": np.array([np.inf, -0.0, np.nan]),
        "i": np.array(-(2 ** 40), np.int64),
        "b": np.array([True, False]),
        "h": np.array([1.5], np.float16),
        "empty": np.zeros((0, 4), np.int32),
        "s": np.array([[b"", b"a" * 200], ["\u03b2".encode(), b"\0x"]], dtype=object),
        "scalar_string": np.array(b"graph", dtype=object),
    }
    prefix = str(tmp_path / "all")
    bundle.write_bundle(prefix, values)
    with bundle.BundleReader(prefix) as reader:
        assert sorted(reader.keys()) == sorted(values)
        for name, want in values.items():
            got = reader.get_tensor(name)
            assert got.shape == want.shape and got.dtype == want.dtype, name
            np.testing.assert_array_equal(got, want)


def test_corruption_is_data_loss(tf_format, tmp_path):
    prefix = str(tmp_path / "c")
    bundle.write_bundle(prefix, {"w": np.arange(4, dtype=np.float32)})
    path = bundle.data_filename(prefix)
    with open(path, "r+b") as f:
        f.seek(5)
        f.write(b"\xff")
    with bundle.BundleReader(prefix) as reader, pytest.raises(errors.DataLossError):
        reader.get_tensor("w")
    index = bundle.index_filename(prefix)
    blob = bytearray(open(index, "rb").read())
    blob[3] ^= 0x40
    open(index, "wb").write(bytes(blob))
    with pytest.raises(errors.DataLossError):
        bundle.BundleReader(prefix)


def test_saver_and_checkpoint_write_and_overwrite_in_tf_format(tf_format, tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        ckpt = tf.train.Checkpoint(v=v)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            saved = saver.save(sess, str(tmp_path / "named"))
            path = ckpt.write(str(tmp_path / "obj"), session=sess)
            sess.run(v.assign([3.0, 4.0]))
            path = ckpt.write(str(tmp_path / "obj"), session=sess)  # overwrite in place
            sess.run(v.assign([0.0, 0.0]))
            saver.restore(sess, saved)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
            ckpt.restore(path).run_restore_ops(sess)
            np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])
    with open(bundle.index_filename(path), "rb") as f:
        assert tf_bundle_index.is_tf_index(f.read())
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["checkpoint", "named.index", "named.data-00000-of-00001", "named.meta",
         "obj.index", "obj.data-00000-of-00001"])


_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
_NUMERIC = st.sampled_from([np.float16, np.float32, np.float64, np.int8, np.int32, np.int64,
                            np.uint8, np.uint64, np.bool_, np.complex64]).flatmap(
    lambda dtype: hnp.arrays(np.dtype(dtype), _SHAPES))
_STRINGS = _SHAPES.flatmap(lambda shape: st.lists(
    st.binary(max_size=20), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
    lambda items: np.array(items, dtype=object).reshape(shape)))


def _assert_same(actual, expected):
    assert actual.shape == expected.shape
    if expected.dtype == object:
        assert actual.dtype == object and actual.tolist() == expected.tolist()
    else:  # bitwise: NaN payloads and signed zeros count
        assert actual.dtype == expected.dtype
        assert actual.tobytes() == np.ascontiguousarray(expected).tobytes()


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), _NUMERIC | _STRINGS, max_size=5))
def test_round_trip_hypothesis_in_tf_format(tensors):
    with tempfile.TemporaryDirectory() as directory:
        prefix = os.path.join(directory, "ckpt")
        previous = os.environ.get("TFX_CHECKPOINT_FORMAT")
        os.environ["TFX_CHECKPOINT_FORMAT"] = "tensorflow"
        try:
            bundle.write_bundle(prefix, tensors)
        finally:
            if previous is None:
                del os.environ["TFX_CHECKPOINT_FORMAT"]
            else:
                os.environ["TFX_CHECKPOINT_FORMAT"] = previous
        with open(bundle.index_filename(prefix), "rb") as f:
            assert tf_bundle_index.is_tf_index(f.read())
        with bundle.BundleReader(prefix) as reader:
            assert reader.keys() == sorted(tensors)
            for name, array in tensors.items():
                _assert_same(reader.get_tensor(name), array)
