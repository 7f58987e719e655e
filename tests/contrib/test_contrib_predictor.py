"""tf.contrib.predictor over a simple_save SavedModel and over an exported/trained Estimator."""

import numpy as np
import pytest

import tensorflux as tf

X = np.random.RandomState(0).rand(32, 2).astype(np.float32)
Y = (X @ np.array([[2.0], [-3.0]], np.float32) + 0.5).astype(np.float32)


def _saved_model(tmp_path):
    export_dir = str(tmp_path / "plain")
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        b = tf.Variable(0.25, name="b")
        y = tf.add(tf.matmul(x, w), b, name="y")
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y, "doubled": 2 * y})
    return export_dir


def test_from_saved_model_runs_the_serving_signature(tmp_path):
    export_dir = _saved_model(tmp_path)
    predict_fn = tf.contrib.predictor.from_saved_model(export_dir)
    out = predict_fn({"x": X[:3]})
    expected = X[:3] @ np.array([[1.0], [2.0]], np.float32) + 0.25
    assert sorted(out) == ["doubled", "y"]
    np.testing.assert_allclose(out["y"], expected, rtol=1e-6)
    np.testing.assert_allclose(out["doubled"], 2 * expected, rtol=1e-6)
    assert sorted(predict_fn.feed_tensors) == ["x"]
    assert predict_fn.fetch_tensors["y"].name == "y:0"
    assert predict_fn.session.graph is predict_fn.graph
    assert "feed tensors" in repr(predict_fn)
    # Tags as a comma-separated string, an explicit key, and name maps overriding it.
    same = tf.contrib.predictor.from_saved_model(export_dir, "serving_default", tags="serve")
    np.testing.assert_allclose(same({"x": X[:3]})["y"], expected, rtol=1e-6)
    named = tf.contrib.predictor.from_saved_model(export_dir, input_names={"in": "x:0"},
                                                  output_names={"out": "y:0"})
    np.testing.assert_allclose(named({"in": X[:3]})["out"], expected, rtol=1e-6)


def test_from_saved_model_errors(tmp_path):
    export_dir = _saved_model(tmp_path)
    with pytest.raises(ValueError, match="Available signatures are"):
        tf.contrib.predictor.from_saved_model(export_dir, "nope")
    with pytest.raises(RuntimeError, match="could not be found"):
        tf.contrib.predictor.from_saved_model(export_dir, tags=["train"])
    with pytest.raises(ValueError, match="both"):
        tf.contrib.predictor.from_saved_model(export_dir, input_names={"x": "x:0"})
    predict_fn = tf.contrib.predictor.from_saved_model(export_dir)
    with pytest.raises(ValueError, match="unexpected keys"):
        predict_fn({"z": X[:1]})


def _estimator(tmp_path):
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    est = tf.estimator.LinearRegressor(columns, model_dir=str(tmp_path / "model"),
                                       optimizer=tf.train.FtrlOptimizer(0.5))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=8, num_epochs=None,
                                                 shuffle=True), steps=20)
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2], name="x")})
    expected = np.array([p["predictions"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn({"x": X[:4]}, shuffle=False))])
    return est, receiver_fn, expected


def test_estimator_export_and_from_estimator_agree_with_predict(tmp_path):
    est, receiver_fn, expected = _estimator(tmp_path)
    assert np.abs(expected).max() > 0.1  # trained, not the zero initial model
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
    # A regression head's default (regress) signature needs serialized examples: raw tensors
    # get only the "predict" signature, as in TF.
    from_export = tf.contrib.predictor.from_saved_model(export_dir, "predict")
    np.testing.assert_allclose(from_export({"x": X[:4]})["predictions"], expected, rtol=1e-6)
    predict = tf.contrib.predictor.from_estimator(est, receiver_fn, output_key="predict")
    np.testing.assert_allclose(predict({"x": X[:4]})["predictions"], expected, rtol=1e-6)
    with pytest.raises(KeyError, match="no valid signature"):
        tf.contrib.predictor.from_estimator(est, receiver_fn)
    with pytest.raises(KeyError, match="output_key"):
        tf.contrib.predictor.from_estimator(est, receiver_fn, output_key="nope")
    with pytest.raises(TypeError, match="Estimator"):
        tf.contrib.predictor.from_estimator(object(), receiver_fn)


def test_from_estimator_serves_parsed_examples(tmp_path):
    est, _, expected = _estimator(tmp_path)
    spec = tf.feature_column.make_parse_example_spec([tf.feature_column.numeric_column("x", [2])])
    receiver_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    predict_fn = tf.contrib.predictor.from_estimator(est, receiver_fn)
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString()
        for row in X[:4]]
    np.testing.assert_allclose(predict_fn({"inputs": examples})["outputs"], expected, rtol=1e-6)
