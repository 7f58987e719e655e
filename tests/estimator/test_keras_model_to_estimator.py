"""tf.keras.estimator.model_to_estimator: the Estimator starts from the Keras weights, trains
with the compiled loss and optimizer, and evaluates the compiled metrics."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.RandomState(0)
X = RNG.randn(256, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-1.0], [0.5]]) > 0).astype(np.float32)


def compiled_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(tf.keras.optimizers.Adam(0.05), "binary_crossentropy", metrics=["accuracy"])
    return model


def test_model_to_estimator_trains_from_keras_weights(tmp_path):
    model = compiled_model()
    (input_name,), (output_name,) = model._input_names(), model._output_names()
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    first = np.stack([p[output_name] for p in est.predict(tf.estimator.inputs.numpy_input_fn(
        {input_name: X[:4]}, shuffle=False))])
    np.testing.assert_allclose(first, model.predict(X[:4]), rtol=1e-6)
    est.train(tf.estimator.inputs.numpy_input_fn({input_name: X}, Y, batch_size=32,
                                                 num_epochs=None, shuffle=True), steps=60)
    result = est.evaluate(tf.estimator.inputs.numpy_input_fn({input_name: X}, Y,
                                                             batch_size=128, shuffle=False))
    names = est.get_variable_names()
    kernels = sorted(n for n in names if n.endswith("kernel"))
    biases = sorted(n for n in names if n.endswith("bias"))
    hidden = np.maximum(X @ est.get_variable_value(kernels[0]) +
                        est.get_variable_value(biases[0]), 0)
    prob = 1 / (1 + np.exp(-(hidden @ est.get_variable_value(kernels[1]) +
                            est.get_variable_value(biases[1]))))
    prob = np.clip(prob, 1e-7, 1 - 1e-7)
    bce = -(Y * np.log(prob) + (1 - Y) * np.log(1 - prob))
    np.testing.assert_allclose(result["loss"], bce.reshape(2, 128).mean(1).mean(), rtol=1e-3)
    np.testing.assert_allclose(result["accuracy"], np.mean((prob > 0.5) == Y), rtol=1e-6)
    assert result["accuracy"] > 0.9 and result["global_step"] == 60


def test_model_to_estimator_errors():
    with pytest.raises(ValueError, match="needs to be provided"):
        tf.keras.estimator.model_to_estimator()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(ValueError, match="not been compiled"):
        tf.keras.estimator.model_to_estimator(keras_model=model)
    with pytest.raises(ValueError, match="not both"):
        tf.keras.estimator.model_to_estimator(keras_model=model, keras_model_path="m.h5")
