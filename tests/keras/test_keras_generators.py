"""Model.fit_generator / evaluate_generator / predict_generator and keras.utils.Sequence."""

import numpy as np
import pytest

import tensorflux as tf

K = tf.keras


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 3).astype(np.float32)
    return x, x @ np.array([[1.0], [-1.0], [0.5]], np.float32)


class _Batches(K.utils.Sequence):
    def __init__(self, x, y, size):
        self.x, self.y, self.size = x, y, size
        self.epochs_ended = 0

    def __len__(self):
        return len(self.x) // self.size

    def __getitem__(self, index):
        part = slice(index * self.size, (index + 1) * self.size)
        return self.x[part], self.y[part]

    def on_epoch_end(self):
        self.epochs_ended += 1


def _model():
    model = K.Sequential([K.layers.Dense(1, input_shape=(3,))])
    model.compile(K.optimizers.SGD(0.1), "mse", metrics=["mae"])
    return model


def test_fit_with_sequence_and_generator_loops():
    x, y = _data()
    model = _model()
    batches = _Batches(x, y, 16)
    history = model.fit(batches, epochs=15, verbose=0, validation_data=(x, y))
    assert batches.epochs_ended == 15
    assert sorted(history.history) == ["loss", "mae", "val_loss", "val_mae"]
    assert history.history["loss"][-1] < 0.01 < history.history["loss"][0]
    loss, mae = model.evaluate_generator(batches)
    pred = model.predict(x)
    np.testing.assert_allclose(loss, ((pred - y) ** 2).mean(), rtol=1e-4)
    np.testing.assert_allclose(mae, np.abs(pred - y).mean(), rtol=1e-4)

    def endless():
        while True:
            for i in range(4):
                yield x[i * 16:(i + 1) * 16], y[i * 16:(i + 1) * 16]

    history = model.fit_generator(endless(), steps_per_epoch=4, epochs=2, verbose=0,
                                  validation_data=endless(), validation_steps=4)
    assert len(history.history["val_loss"]) == 2
    np.testing.assert_allclose(model.predict_generator(iter([x[:5], x[5:9]]), steps=2),
                               model.predict(x[:9]), rtol=1e-5)


def test_generator_errors():
    model = _model()
    with pytest.raises(ValueError, match="`steps` is required"):
        model.fit_generator(iter([]), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="should be a tuple"):
        model.fit_generator(iter([np.zeros((2, 3))]), steps_per_epoch=1, verbose=0)
    with pytest.raises(TypeError, match="Invalid keyword"):
        model.fit_generator(iter([]), steps_per_epoch=1, bogus=1)
