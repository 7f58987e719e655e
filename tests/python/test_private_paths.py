"""TF1 programs' imports of TensorFlow-private paths (`from tensorflow.python.client import
device_lib`, ...) resolve, under `tensorflux.python`, to the very modules of the public API;
other private paths raise ModuleNotFoundError naming the path."""

import importlib

import numpy as np
import pytest

import tensorflux as tf
import tensorflux.python as private


@pytest.mark.parametrize("path", sorted(private._ALIASES))
def test_each_private_path_is_the_serving_module(path):
    module = importlib.import_module(f"tensorflux.python.{path}")
    assert module is importlib.import_module(private._ALIASES[path])


def test_device_lib_lists_the_session_devices():
    from tensorflux.python.client import device_lib

    devices = device_lib.list_local_devices()
    assert [(d.name, d.device_type) for d in devices] == [("/device:CPU:0", "CPU")]
    assert not any(d.device_type == "GPU" for d in devices)
    config = tf.ConfigProto(device_count={"CPU": 2})
    assert [d.name for d in device_lib.list_local_devices(config)] == [
        "/device:CPU:0", "/device:CPU:1"]


def test_a_program_using_private_paths_runs():
    from tensorflux.python.framework import graph_util, ops
    from tensorflux.python.platform import gfile
    from tensorflux.python.saved_model import tag_constants
    from tensorflux.python.util import nest

    with ops.Graph().as_default() as graph:
        assert ops.get_default_graph() is graph is tf.get_default_graph()
        x = tf.Variable([1.0, 2.0], name="x")
        tf.identity(x * 3.0, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["y"])
    with ops.Graph().as_default():
        (out,) = tf.import_graph_def(frozen, return_elements=["y:0"])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), [3.0, 6.0])
    assert tag_constants.SERVING == "serve" and gfile.Exists is tf.gfile.Exists
    assert nest.flatten({"a": (1, 2)}) == [1, 2]


def test_other_private_paths_are_refused_by_name():
    with pytest.raises(ModuleNotFoundError, match="tensorflux.python.ops.gen_array_ops"):
        importlib.import_module("tensorflux.python.ops.gen_array_ops")


def test_metrics_impl_serves_the_streaming_confusion_matrix():
    from tensorflux.python.ops import metrics_impl

    assert metrics_impl.accuracy is tf.metrics.accuracy
    labels = np.array([0, 2, 1, 2, 2])
    preds = np.array([0, 1, 1, 2, 0])
    weights = np.array([1.0, 1.0, 0.0, 2.0, 1.0])
    with tf.Graph().as_default():
        total, update = metrics_impl._streaming_confusion_matrix(labels, preds, 3, weights)
        unweighted, update_all = metrics_impl._streaming_confusion_matrix(labels, preds, 3)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run([update, update_all])
            got, got_all = sess.run(update), sess.run(unweighted)
    ref = np.zeros((3, 3))
    np.add.at(ref, (labels, preds), weights)
    np.testing.assert_array_equal(got, 2 * ref)
    ref_all = np.zeros((3, 3))
    np.add.at(ref_all, (labels, preds), 1.0)
    np.testing.assert_array_equal(got_all, ref_all)
