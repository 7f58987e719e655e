"""Multi-mode SavedModel exports: TRAIN / EVAL / PREDICT meta graphs sharing one checkpoint."""

import os

import numpy as np
import pytest

import tensorflux as tf

X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5], [-2.0, 1.0]], np.float32)
Y = (X @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)


def model_fn(features, labels, mode):
    x = features["x"]
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(x, w) + b
    predictions = {"y": pred}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode, predictions=predictions,
            export_outputs={"serving_default": tf.estimator.export.PredictOutput(predictions)})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    metrics = {"mse": tf.metrics.mean_squared_error(labels, pred)}
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                      train_op=train_op, eval_metric_ops=metrics)


def input_fn():
    return tf.data.Dataset.from_tensors(({"x": X}, Y)).repeat()


def _receivers():
    supervised = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2])}, tf.placeholder(tf.float32, [None, 1]))
    serving = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2])})
    return supervised, serving


@pytest.fixture
def trained(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(input_fn, steps=5)
    return est


def _export_all(est, tmp_path):
    supervised, serving = _receivers()
    modes = tf.estimator.ModeKeys
    return est.experimental_export_all_saved_models(
        str(tmp_path / "export"), {modes.TRAIN: supervised, modes.EVAL: supervised,
                                   modes.PREDICT: serving})


def test_all_modes_in_one_saved_model(trained, tmp_path):
    path = _export_all(trained, tmp_path)
    assert isinstance(path, bytes) and os.path.isdir(path)
    w = trained.get_variable_value("w")
    b = trained.get_variable_value("b")
    loader = tf.saved_model.loader.SavedModelLoader(path)
    tags = sorted(tuple(m.meta_info_def.tags) for m in loader.saved_model.meta_graphs)
    assert tags == [("eval",), ("serve",), ("train",)]
    expected = X @ w + b
    expected_loss = np.mean(np.square(expected - Y))

    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        sig = meta.signature_def["serving_default"]
        out = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: X})
        np.testing.assert_allclose(out, expected, rtol=1e-6)

    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["eval"], path)
        sig = meta.signature_def["eval"]
        assert sig.method_name == "tensorflow/supervised/eval"
        assert set(sig.inputs) == {"x", "label"}
        assert set(sig.outputs) == {"loss", "predictions/y", "metrics/mse/value",
                                    "metrics/mse/update_op"}
        feed = {sig.inputs["x"].name: X, sig.inputs["label"].name: Y}
        loss = sess.run(sig.outputs["loss"].name, feed)
        np.testing.assert_allclose(loss, expected_loss, rtol=1e-5)
        sess.run(sig.outputs["metrics/mse/update_op"].name, feed)
        mse = sess.run(sig.outputs["metrics/mse/value"].name)
        np.testing.assert_allclose(mse, expected_loss, rtol=1e-5)

    with tf.Graph().as_default() as graph, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["train"], path)
        sig = meta.signature_def["train"]
        assert sig.method_name == "tensorflow/supervised/training"
        (train_op,) = graph.get_collection("saved_model_train_op")
        feed = {sig.inputs["x"].name: X, sig.inputs["label"].name: Y}
        step = tf.train.get_global_step(graph)
        assert sess.run(step) == 5
        sess.run(train_op, feed)
        assert sess.run(step) == 6
        grad_w = 2 * X.T @ (expected - Y) / len(X)
        w_var = graph.get_tensor_by_name("w:0")
        np.testing.assert_allclose(sess.run(w_var), w - 0.1 * grad_w, rtol=1e-5, atol=1e-6)


def test_variables_saved_once_and_shared(trained, tmp_path):
    path = _export_all(trained, tmp_path).decode()
    files = sorted(os.listdir(os.path.join(path, "variables")))
    assert files == ["variables.data-00000-of-00001", "variables.index"]
    reader = tf.train.load_checkpoint(os.path.join(path, "variables", "variables"))
    np.testing.assert_array_equal(reader.get_tensor("w"), trained.get_variable_value("w"))


def test_export_saved_model_experimental_mode_train(trained, tmp_path):
    supervised, _ = _receivers()
    path = trained.export_saved_model(str(tmp_path / "e"), supervised,
                                      experimental_mode=tf.estimator.ModeKeys.TRAIN)
    loader = tf.saved_model.loader.SavedModelLoader(path)
    assert [list(m.meta_info_def.tags) for m in loader.saved_model.meta_graphs] == [["train"]]


def test_single_tensor_features_and_labels_named_input_and_label():
    fn = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        tf.placeholder(tf.float32, [7, 3]), tf.placeholder(tf.int64, [7]), default_batch_size=2)
    with tf.Graph().as_default():
        receiver = fn()
    assert sorted(receiver.receiver_tensors) == ["input", "label"]
    assert receiver.features.shape.as_list() == [2, 3]
    assert receiver.labels.dtype == tf.int64


def test_supervised_receiver_from_input_fn():
    fn = tf.estimator.export.build_supervised_input_receiver_fn_from_input_fn(input_fn)
    with tf.Graph().as_default():
        receiver = fn()
    assert receiver.features["x"].shape.as_list() == [None, 2]
    assert receiver.labels.shape.as_list() == [None, 1]


def test_errors(trained, tmp_path):
    supervised, serving = _receivers()
    with pytest.raises(ValueError, match="bogus"):
        trained.experimental_export_all_saved_models(str(tmp_path / "a"), {"bogus": serving})
    with pytest.raises(ValueError, match="predicted"):
        trained.experimental_export_all_saved_models(
            str(tmp_path / "b"), {"infer": serving, "predicted": serving})
    with pytest.raises(ValueError, match="SupervisedInputReceiver with labels"):
        trained.experimental_export_all_saved_models(str(tmp_path / "c"), {"train": serving})
    with pytest.raises(ValueError, match="labels must be defined"):
        tf.estimator.export.SupervisedInputReceiver(
            {"x": tf.constant(X)}, None, {"x": tf.constant(X)})
    with pytest.raises(ValueError, match="overlapping keys"):
        tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
            {"label": tf.constant(X)}, tf.constant(Y))
    assert not any(name.startswith("temp-") for name in os.listdir(tmp_path / "c")) \
        if os.path.isdir(tmp_path / "c") else True


def test_as_text_assets_extra_and_checkpoint_path(trained, tmp_path):
    extra = tmp_path / "notes.txt"
    extra.write_text("vocab v1")
    first = trained.latest_checkpoint()
    trained.train(input_fn, steps=2)
    supervised, serving = _receivers()
    path = trained.experimental_export_all_saved_models(
        str(tmp_path / "t"), {"eval": supervised, "infer": serving},
        assets_extra={"sub/notes.txt": str(extra)}, as_text=True, checkpoint_path=first)
    path = path.decode()
    assert sorted(os.listdir(path)) == ["assets.extra", "saved_model.pbtxt", "variables"]
    with open(os.path.join(path, "assets.extra", "sub", "notes.txt")) as handle:
        assert handle.read() == "vocab v1"
    reader = tf.train.load_checkpoint(os.path.join(path, "variables", "variables"))
    assert reader.get_tensor("global_step") == 5  # the given checkpoint, not the latest (7)
    loader = tf.saved_model.loader.SavedModelLoader(path)
    assert [list(m.meta_info_def.tags) for m in loader.saved_model.meta_graphs] == [
        ["eval"], ["serve"]]
