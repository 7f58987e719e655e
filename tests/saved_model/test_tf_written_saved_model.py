"""A SavedModel exported by TensorFlow itself loads and runs: its graph (with ParseExampleV2)
imports and its variables restore from TF's checkpoint format (fixture: data/tf_half_plus_two,
y = 0.5 * x + 2 and y2 = 0.5 * x2 + 3)."""

import os

import numpy as np

import tensorflux as tf

EXPORT = os.path.join(os.path.dirname(__file__), "data", "tf_half_plus_two")


def _examples(values):
    return [tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[v]))})).SerializeToString()
        for v in values]


def test_tf_exported_half_plus_two_serves_both_signatures():
    x = np.array([0.0, 1.0, 4.0, -3.5], np.float32)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], EXPORT)
        sigs = meta.signature_def
        assert set(sigs) == {"serving_default", "tensorflow/serving/regress"}
        reg = sigs["tensorflow/serving/regress"]
        y = sess.run(reg.outputs["outputs"].name, {reg.inputs["inputs"].name: _examples(x)})
        pred = sigs["serving_default"]
        y_pred = sess.run(pred.outputs["y"].name, {pred.inputs["x"].name: x[:, None]})
        y2 = sess.run("y2:0", {"x2:0": x})
        a, b, c = sess.run(["a:0", "b:0", "c:0"])
    np.testing.assert_allclose(y.ravel(), 0.5 * x + 2)
    np.testing.assert_allclose(y_pred.ravel(), 0.5 * x + 2)
    np.testing.assert_allclose(y2, 0.5 * x + 3)
    assert (a, b, c) == (0.5, 2.0, 3.0)
