"""fit/evaluate/predict on a finite Dataset without steps (TF 1.14+), and the
tf.keras.experimental SavedModel export / re-load round trip."""

import numpy as np
import pytest

import tensorflux as tf


def _model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,)),
                                 tf.keras.layers.Dense(2, activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy")
    return model


def _data():
    rng = np.random.RandomState(3)
    return rng.randn(10, 4).astype(np.float32), rng.randint(0, 2, 10).astype(np.int64)


def test_fit_dataset_without_steps_reads_each_epoch_whole():
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        x, y = _data()
        model = _model()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)  # 3 batches: 4, 4, 2
        seen = []
        cb = tf.keras.callbacks.LambdaCallback(on_batch_end=lambda b, logs: seen.append(b))
        model.fit(ds, epochs=2, callbacks=[cb], verbose=0)
        assert seen == [0, 1, 2, 0, 1, 2]
        # predict without steps = the whole dataset, equal to predict on the arrays
        np.testing.assert_allclose(model.predict(ds), model.predict(x), rtol=1e-6)
        expected = model.evaluate(x, y, batch_size=4, verbose=0)
        assert model.evaluate(ds, verbose=0) == pytest.approx(expected, rel=1e-5)


def test_dataset_of_unknown_size_is_counted_and_infinite_one_needs_steps():
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        x, y = _data()
        model = _model()
        unknown = tf.data.Dataset.from_tensor_slices((x, y)).filter(
            lambda a, b: b >= 0).batch(5)
        assert len(model.predict(unknown)) == 10
        with pytest.raises(ValueError, match="infinitely repeating"):
            model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(5).repeat(), verbose=0)
        it = tf.data.Dataset.from_tensor_slices((x, y)).batch(5).make_one_shot_iterator()
        with pytest.raises(ValueError, match="Iterator"):
            model.fit(it, verbose=0)


def test_export_saved_model_round_trip(tmp_path):
    path = str(tmp_path / "export")
    x, _ = _data()
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        model = _model()
        want = model.predict(x)
        tf.keras.experimental.export_saved_model(model, path)
        with pytest.raises(AssertionError):  # the directory exists now
            tf.keras.experimental.export_saved_model(model, path)
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        loaded = tf.keras.experimental.load_from_saved_model(path)
        np.testing.assert_allclose(loaded.predict(x), want, rtol=1e-6)
    with tf.Graph().as_default(), tf.Session() as sess:  # the SavedModel itself serves
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        sig = meta.signature_def["serving_default"]
        (inp,), (out,) = sig.inputs.values(), sig.outputs.values()
        got = sess.run(out.name, {inp.name: x})
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_export_rejects_input_signature(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        with pytest.raises(NotImplementedError, match="input_signature"):
            tf.keras.experimental.export_saved_model(_model(), str(tmp_path / "e"),
                                                     input_signature=[1])


def test_evaluate_dataset_verbose_prints_the_step_line(capsys):
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        x, y = _data()
        model = _model()
        loss = model.evaluate(tf.data.Dataset.from_tensor_slices((x, y)).batch(4))
        out = capsys.readouterr().out
        assert out.startswith("3/3 [") and "/step" in out
        assert f"loss: {loss:.4f}" in out
        model.evaluate(tf.data.Dataset.from_tensor_slices((x, y)).batch(4), verbose=0)
        assert capsys.readouterr().out == ""
