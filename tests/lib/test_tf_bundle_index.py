"""Checkpoints written by TensorFlow itself (its sorted-table V2 index) are readable: the
fixture in data/tf_v2_checkpoint was saved by TF 2.21's compat.v1 Saver; values are checked
against the NumPy formulas that made them. Corruption is a DataLossError."""

import os
import shutil

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.lib.formats import bundle, tf_bundle_index

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "tf_v2_checkpoint", "model.ckpt")


def _expected():
    values = {
        "dense/kernel": np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 1,
        "dense/bias": np.array([1.5, -2.25], np.float64),
        "global_step": np.array(123456789012, np.int64),
        "counts": np.array([-3, 0, 7], np.int32),
        "flags": np.array([True, False, True]),
        "half": np.array([0.5, -1.0], np.float16),
        "words": np.array([b"", b"alpha", "\u03b2eta".encode(), b"x" * 300], dtype=object),
        "u8": np.arange(5, dtype=np.uint8),
    }
    for i in range(200):
        values[f"layer_{i:03d}/w"] = np.array([i, -i], np.float32)
    return values


@pytest.fixture
def ckpt(tmp_path):
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(FIXTURE + suffix, str(tmp_path / ("model.ckpt" + suffix)))
    return str(tmp_path / "model.ckpt")


def test_index_spans_several_blocks_and_lists_every_tensor():
    blob = open(FIXTURE + ".index", "rb").read()
    assert tf_bundle_index.is_tf_index(blob)
    entries, shards = tf_bundle_index.parse_tf_index("model.ckpt.index", blob)
    assert shards == 1
    assert set(entries) == set(_expected())
    assert entries["dense/kernel"]["dtype"] == tf.float32.as_datatype_enum
    assert entries["dense/kernel"]["shape"] == [3, 4]
    assert entries["global_step"]["shape"] == []
    assert len(blob) > 4096  # more than one data block of the table


def test_reader_returns_tf_written_values():
    expected = _expected()
    reader = tf.train.NewCheckpointReader(FIXTURE)
    shapes = reader.get_variable_to_shape_map()
    assert shapes == {k: list(v.shape) for k, v in expected.items()}
    for name, value in expected.items():
        got = reader.get_tensor(name)
        assert got.dtype == value.dtype, name
        np.testing.assert_array_equal(got, value, err_msg=name)


def test_saver_restores_a_tf_checkpoint_into_variables():
    expected = _expected()
    with tf.Graph().as_default():
        kernel = tf.Variable(tf.zeros([3, 4]), name="dense/kernel")
        words = tf.Variable(["", "", "", ""], name="words")
        step = tf.Variable(np.int64(0), name="global_step")
        saver = tf.train.Saver([kernel, words, step])
        with tf.Session() as sess:
            saver.restore(sess, FIXTURE)
            got_kernel, got_words, got_step = sess.run([kernel, words, step])
    np.testing.assert_array_equal(got_kernel, expected["dense/kernel"])
    assert list(got_words) == list(expected["words"])
    assert got_step == 123456789012
    assert tf.train.list_variables(FIXTURE)[0] == ("counts", [3])


def test_restore_of_a_wrong_dtype_names_the_tensor():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(3, np.float32), name="counts")
        saver = tf.train.Saver([v])
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="counts"):
            saver.restore(sess, FIXTURE)


def test_corrupted_index_block_is_data_loss(ckpt):
    blob = bytearray(open(ckpt + ".index", "rb").read())
    blob[10] ^= 0xFF  # inside the first data block
    open(ckpt + ".index", "wb").write(bytes(blob))
    with pytest.raises(errors.DataLossError, match="checksum mismatch"):
        bundle.BundleReader(ckpt)


def test_corrupted_tensor_bytes_are_data_loss(ckpt):
    entries, _ = tf_bundle_index.parse_tf_index(
        "i", open(ckpt + ".index", "rb").read())
    data = bytearray(open(ckpt + ".data-00000-of-00001", "rb").read())
    data[entries["words"]["offset"] + 1] ^= 0x01  # a string length byte
    open(ckpt + ".data-00000-of-00001", "wb").write(bytes(data))
    with bundle.BundleReader(ckpt) as reader, pytest.raises(errors.DataLossError, match="words"):
        reader.get_tensor("words")
    with bundle.BundleReader(ckpt) as reader:
        np.testing.assert_array_equal(reader.get_tensor("counts"), [-3, 0, 7])


def test_missing_data_file_and_non_index_input(ckpt):
    os.remove(ckpt + ".data-00000-of-00001")
    with pytest.raises(errors.NotFoundError, match="data file"):
        bundle.BundleReader(ckpt)
    with pytest.raises(errors.DataLossError, match="no table magic"):
        tf_bundle_index.parse_tf_index("x.index", b"\0" * 64)
