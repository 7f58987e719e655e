"""Keras models in object-based checkpoints: tf.train.Checkpoint keys and TF-format weights."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.keras import backend

K = tf.keras


def _mlp():
    return K.Sequential([K.layers.Dense(4, input_shape=(3,)), K.layers.Dropout(0.1),
                         K.layers.BatchNormalization(), K.layers.Dense(2)])


def _distinct_weights(model, offset=1.0):
    model.set_weights([np.full(w.shape, i + offset) + np.arange(w.size).reshape(w.shape)
                       for i, w in enumerate(model.get_weights())])


def test_save_weights_tf_format_round_trip_by_structure(tmp_path):
    first, second = _mlp(), _mlp()
    _distinct_weights(first)
    path = str(tmp_path / "weights")
    first.save_weights(path)
    keys = dict(tf.train.list_variables(path))
    assert keys["layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 4]
    assert keys["layer_with_weights-1/moving_variance/.ATTRIBUTES/VARIABLE_VALUE"] == [4]
    assert keys["layer_with_weights-2/bias/.ATTRIBUTES/VARIABLE_VALUE"] == [2]
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in keys
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    status = second.load_weights(path)
    status.assert_consumed()
    for value, ref in zip(second.get_weights(), first.get_weights()):
        np.testing.assert_array_equal(value, ref)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(second.predict(x), first.predict(x), rtol=1e-6)


def test_checkpoint_of_models_and_subclassed_attributes(tmp_path):
    class Sub(K.Model):
        def __init__(self):
            super().__init__()
            self.d1 = K.layers.Dense(2)
            self.bn = K.layers.BatchNormalization()

        def call(self, x):
            return self.bn(self.d1(x))

    inputs = K.Input((2,))
    functional = K.Model(inputs, K.layers.Dense(2, name="dd")(inputs))
    sub = Sub()
    sub(tf.zeros([1, 2]))
    ckpt = tf.train.Checkpoint(func=functional, sub=sub)
    sess = backend.get_session()
    sess.run(tf.global_variables_initializer())
    path = ckpt.save(str(tmp_path / "c"), session=sess)
    keys = {k for k, _ in tf.train.list_variables(path)}
    assert keys == {"_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
                    "func/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                    "func/layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
                    "sub/d1/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                    "sub/d1/bias/.ATTRIBUTES/VARIABLE_VALUE",
                    "sub/bn/gamma/.ATTRIBUTES/VARIABLE_VALUE",
                    "sub/bn/beta/.ATTRIBUTES/VARIABLE_VALUE",
                    "sub/bn/moving_mean/.ATTRIBUTES/VARIABLE_VALUE",
                    "sub/bn/moving_variance/.ATTRIBUTES/VARIABLE_VALUE"}
    kernel = sess.run(sub.d1.kernel)
    np.testing.assert_array_equal(
        tf.train.load_variable(path, "sub/d1/kernel/.ATTRIBUTES/VARIABLE_VALUE"), kernel)


def test_model_weights_from_a_checkpoint_of_the_model(tmp_path):
    first = _mlp()
    _distinct_weights(first, 5.0)
    path = tf.train.Checkpoint(model=first).write(str(tmp_path / "m"),
                                                  session=backend.get_session())
    second = _mlp()
    tf.train.Checkpoint(model=second).restore(path).run_restore_ops(backend.get_session())
    for value, ref in zip(second.get_weights(), first.get_weights()):
        np.testing.assert_array_equal(value, ref)


def test_load_weights_errors(tmp_path):
    model = _mlp()
    path = str(tmp_path / "w")
    model.save_weights(path)
    with pytest.raises(NotImplementedError, match="by_name"):
        model.load_weights(path, by_name=True)
    with pytest.raises(tf.errors.NotFoundError):
        model.load_weights(str(tmp_path / "absent"))
    other = K.Sequential([K.layers.Dense(5, input_shape=(3,))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="layer_with_weights-0/kernel"):
        other.load_weights(path)
    with pytest.raises(ValueError, match="format"):
        model.save_weights(path, save_format="pickle")


class _Sub(K.Model):
    def __init__(self):
        super().__init__()
        self.hidden = K.layers.Dense(3, activation="tanh")
        self.out = K.layers.Dense(1)

    def call(self, x):
        return self.out(self.hidden(x))


def test_load_weights_before_build_restores_when_the_model_builds(tmp_path):
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    first = _Sub()
    want = first.predict(x)
    first.save_weights(str(tmp_path / "sub"))
    second = _Sub()
    assert second.weights == []
    status = second.load_weights(str(tmp_path / "sub"))  # nothing built yet: deferred
    with pytest.raises(AssertionError, match=r"Unresolved object.*hidden/kernel"):
        status.assert_consumed()  # the variables do not exist until the model builds
    np.testing.assert_allclose(second.predict(x), want, rtol=1e-6)
    status.assert_consumed()
    for value, ref in zip(second.get_weights(), first.get_weights()):
        np.testing.assert_array_equal(value, ref)


def test_compiled_model_weights_carry_optimizer_state(tmp_path):
    rng = np.random.RandomState(0)
    x, y = rng.randn(16, 3).astype(np.float32), rng.randn(16, 2).astype(np.float32)

    def compiled():
        model = K.Sequential([K.layers.Dense(2, input_shape=(3,))])
        model.compile(K.optimizers.Adam(0.05), "mse")
        return model

    first = compiled()
    first.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0)
    first.save_weights(str(tmp_path / "w"))
    keys = {k for k, _ in tf.train.list_variables(str(tmp_path / "w"))}
    slot = "layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"
    assert slot in keys and "optimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE" in keys
    second = compiled()
    second.load_weights(str(tmp_path / "w"))  # the slots appear when fit builds the step
    second.fit(x, y, epochs=1, batch_size=8, shuffle=False, verbose=0)
    sess = backend.get_session()
    m_first = sess.run(first.optimizer.get_slot(first.weights[0], "m"))
    first.fit(x, y, epochs=1, batch_size=8, shuffle=False, verbose=0)
    second_m = sess.run(second.optimizer.get_slot(second.weights[0], "m"))
    np.testing.assert_allclose(second_m, sess.run(first.optimizer.get_slot(first.weights[0],
                                                                           "m")), rtol=1e-6)
    assert not np.allclose(m_first, second_m)
    for value, ref in zip(second.get_weights(), first.get_weights()):
        np.testing.assert_allclose(value, ref, rtol=1e-6)
