"""tf.keras.utils (Progbar, custom objects, object (de)serialization, enqueuers,
get_source_inputs, kernels conversion) and tf.keras.models.clone_model / YAML."""

import io
import sys
import time

import numpy as np
import pytest

import tensorflux as tf

utils = tf.keras.utils


def test_progbar_averages_values_over_steps(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    bar = utils.Progbar(4, verbose=1, interval=0.0, stateful_metrics=["acc"])
    bar.update(1, [("loss", 1.0), ("acc", 0.5)])
    bar.update(3, [("loss", 4.0), ("acc", 0.75)])   # 2 steps at 4.0
    bar.add(1, [("loss", 0.0)])
    text = out.getvalue()
    assert "4/4 [==============================]" in text
    assert "loss: 2.2500" in text          # (1*1 + 4*2 + 0*1) / 4
    assert "acc: 0.75" in text
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stdout", quiet)
    bar2 = utils.Progbar(2, verbose=2)
    bar2.update(1, [("x", 1e-5)])
    assert quiet.getvalue() == ""
    bar2.update(2, [("x", 1e-5)])
    assert "x: 1.0000e-05" in quiet.getvalue()


def test_custom_objects_resolve_names_everywhere():
    def scaled_tanh(x):
        return 2.0 * tf.tanh(x)

    def half_mse(y_true, y_pred):
        return 0.5 * tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)

    with utils.custom_object_scope({"scaled_tanh": scaled_tanh, "half_mse": half_mse}):
        assert tf.keras.activations.get("scaled_tanh") is scaled_tanh
        assert tf.keras.losses.get("half_mse") is half_mse
    with pytest.raises(ValueError, match="Unknown activation"):
        tf.keras.activations.get("scaled_tanh")
    utils.get_custom_objects()["scaled_tanh"] = scaled_tanh
    try:
        with tf.Graph().as_default():
            layer = tf.keras.layers.Dense(2, activation="scaled_tanh")
            y = layer(tf.ones([1, 3]))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                w, b, got = sess.run([layer.kernel, layer.bias, y])
        np.testing.assert_allclose(got, 2 * np.tanh(np.ones((1, 3)) @ w + b), rtol=1e-6)
    finally:
        del utils.get_custom_objects()["scaled_tanh"]


def test_registered_layers_round_trip_through_json():
    @utils.register_keras_serializable(package="Tests")
    class Doubler(tf.keras.layers.Layer):
        def call(self, inputs):
            return 2.0 * inputs

    try:
        assert utils.get_registered_name(Doubler) == "Tests>Doubler"
        assert utils.get_registered_object("Tests>Doubler") is Doubler
        config = utils.serialize_keras_object(tf.keras.layers.Dense(3))
        assert config["class_name"] == "Dense" and config["config"]["units"] == 3
        dense = utils.deserialize_keras_object(config, module_objects=vars(tf.keras.layers))
        assert isinstance(dense, tf.keras.layers.Dense) and dense.units == 3
        with pytest.raises(ValueError, match="Unknown layer: Nope"):
            utils.deserialize_keras_object({"class_name": "Nope", "config": {}},
                                           printable_module_name="layer")
        with pytest.raises(ValueError, match="already been registered"):
            utils.register_keras_serializable(package="Tests")(Doubler)
        with utils.CustomObjectScope({"Doubler": Doubler}):
            with tf.Graph().as_default():
                model = tf.keras.Sequential([Doubler(input_shape=(2,))])
                again = tf.keras.models.model_from_json(model.to_json())
                assert isinstance(again.layers[0], Doubler)
    finally:
        utils.get_custom_objects().pop("Tests>Doubler", None)


class _Squares(utils.Sequence):
    def __init__(self):
        self.epochs = 0

    def __len__(self):
        return 5

    def __getitem__(self, i):
        time.sleep(0.001 * (5 - i))
        return np.full(2, i * i)

    def on_epoch_end(self):
        self.epochs += 1


def test_ordered_enqueuer_keeps_order_across_epochs():
    seq = _Squares()
    enqueuer = utils.OrderedEnqueuer(seq)
    enqueuer.start(workers=2, max_queue_size=3)
    got = []
    for batch in enqueuer.get():
        got.append(int(batch[0]))
        if len(got) == 12:
            break
    enqueuer.stop()
    assert got == [0, 1, 4, 9, 16] * 2 + [0, 1]
    assert seq.epochs >= 2 and not enqueuer.is_running()


def test_generator_enqueuer_ends_with_the_generator_and_reraises_errors():
    enqueuer = utils.GeneratorEnqueuer(iter(range(7)))
    enqueuer.start(workers=2, max_queue_size=2)
    assert sorted(enqueuer.get()) == list(range(7))
    enqueuer.stop()

    def broken():
        yield 1
        raise RuntimeError("bad batch")

    failing = utils.GeneratorEnqueuer(broken())
    failing.start()
    with pytest.raises(RuntimeError, match="bad batch"):
        list(failing.get())


def test_source_inputs_clone_and_yaml():
    with tf.Graph().as_default():
        a = tf.keras.Input(shape=(3,))
        b = tf.keras.Input(shape=(3,))
        h = tf.keras.layers.Dense(4)(tf.keras.layers.add([a, b]))
        assert utils.get_source_inputs(h) == [a, b]
        model = tf.keras.Model([a, b], tf.keras.layers.Dense(1)(h))
        clone = tf.keras.models.clone_model(model)
        assert [type(x).__name__ for x in clone.layers] == \
            [type(x).__name__ for x in model.layers]
        assert all(x is not y for x, y in zip(clone.layers, model.layers))
        relu_clone = tf.keras.models.clone_model(
            model, clone_function=lambda layer: type(layer).from_config(
                dict(layer.get_config(), **({"activation": "relu"} if hasattr(
                    layer, "activation") else {}))))
        assert relu_clone.layers[-1].get_config()["activation"] == "relu"
        x = np.ones((2, 3), np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            clone.set_weights(model.get_weights())
            np.testing.assert_allclose(clone.predict([x, x]), model.predict([x, x]))
        seq = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,)),
                                   tf.keras.layers.Dense(1)])
        again = tf.keras.models.model_from_yaml(seq.to_yaml())
        assert [layer.units for layer in again.layers] == [2, 1]


def test_convert_all_kernels_flips_spatial_axes():
    with tf.Graph().as_default(), tf.Session():
        model = tf.keras.Sequential([tf.keras.layers.Conv2D(2, 3, input_shape=(5, 5, 1))])
        tf.keras.backend.get_session().run(tf.global_variables_initializer())
        before = tf.keras.backend.get_value(model.layers[0].kernel)
        utils.convert_all_kernels_in_model(model)
        after = tf.keras.backend.get_value(model.layers[0].kernel)
    np.testing.assert_array_equal(after, before[::-1, ::-1])
