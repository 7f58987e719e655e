"""tf.keras.models.save_model / load_model / model_from_json round trips."""

import numpy as np
import pytest

import tensorflux as tf

K = tf.keras


@pytest.fixture(autouse=True)
def _fresh_graph():
    K.backend.clear_session()
    yield
    K.backend.clear_session()


def test_functional_model_round_trip_with_compile_settings(tmp_path):
    x = K.Input((6, 6, 1))
    h = K.layers.Conv2D(2, 3, activation="relu", kernel_regularizer=K.regularizers.l2(0.01),
                        kernel_initializer=K.initializers.he_normal())(x)
    h = K.layers.Flatten()(K.layers.BatchNormalization()(h))
    cls = K.layers.Dense(3, activation="softmax", name="cls")(h)
    reg = K.layers.Dense(1, name="reg")(K.layers.concatenate([h, h]))
    model = K.Model(x, [cls, reg])
    model.compile(K.optimizers.Adam(0.01), ["sparse_categorical_crossentropy", "mse"],
                  loss_weights=[1.0, 0.5], metrics=["accuracy"])
    data = np.random.RandomState(0).rand(4, 6, 6, 1)
    model.fit(data, [np.array([0, 1, 2, 0]), np.ones((4, 1))], epochs=1, verbose=0)
    expected = model.predict(data)
    path = str(tmp_path / "model.keras")
    model.save(path)
    K.backend.clear_session()
    loaded = K.models.load_model(path)
    for value, ref in zip(loaded.predict(data), expected):
        np.testing.assert_allclose(value, ref, rtol=1e-6)
    assert [layer.name for layer in loaded.layers] == [
        "input_1", "conv2d", "batch_normalization", "flatten", "cls", "concatenate", "reg"]
    assert loaded.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc", "reg_acc"]
    assert loaded.optimizer.get_config()["learning_rate"] == 0.01
    assert len(loaded.losses) == 1
    assert isinstance(loaded.layers[1].kernel_initializer, K.initializers.VarianceScaling)
    uncompiled = K.models.load_model(path, compile=False)
    assert uncompiled.optimizer is None


def test_sequential_json_and_custom_objects(tmp_path):
    def scaled_tanh(t):
        return 2.0 * tf.tanh(t)

    model = K.Sequential([K.layers.Dense(3, input_shape=(2,), activation=scaled_tanh),
                          K.layers.Dropout(0.2), K.layers.Dense(1, activation="sigmoid")])
    rebuilt = K.models.model_from_json(model.to_json(), custom_objects={
        "scaled_tanh": scaled_tanh})
    assert [layer.name for layer in rebuilt.layers] == ["dense", "dropout", "dense_1"]
    assert rebuilt.input_shape == (None, 2) and rebuilt.layers[0].activation is scaled_tanh
    path = str(tmp_path / "seq.keras")
    K.models.save_model(model, path)
    with pytest.raises(ValueError, match="custom_objects"):
        K.models.load_model(path)
    loaded = K.models.load_model(path, custom_objects={"scaled_tanh": scaled_tanh})
    data = np.random.RandomState(1).randn(5, 2)
    np.testing.assert_allclose(loaded.predict(data), model.predict(data), rtol=1e-6)


def test_unsavable_models_raise():
    model = K.Sequential([K.layers.Lambda(lambda t: t * 2, input_shape=(2,))])
    with pytest.raises(ValueError, match="Cannot save the layer argument"):
        model.to_json()

    class Sub(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

    sub = Sub()
    sub(K.Input((2,)))
    with pytest.raises(ValueError, match="subclassed model"):
        sub.to_json()
