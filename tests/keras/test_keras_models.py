"""tf.keras Sequential and functional models: fit/evaluate/predict in the Keras session."""

import numpy as np
import pytest

import tensorflux as tf

K = tf.keras


def _blobs(n=200, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 3, n)
    centers = np.array([[2.0, 0, 0, 0], [0, 2.0, 0, 0], [0, 0, 2.0, 0]])
    return (centers[y] + 0.5 * rng.randn(n, 4)).astype(np.float32), y


def test_sequential_mlp_fit_reaches_accuracy():
    x, y = _blobs()
    model = K.Sequential([K.layers.Dense(16, activation="relu", input_shape=(4,)),
                          K.layers.Dropout(0.1),
                          K.layers.Dense(3, activation="softmax")])
    assert [layer.name for layer in model.layers] == ["dense", "dropout", "dense_1"]
    assert [w.name for w in model.weights] == ["dense/kernel:0", "dense/bias:0",
                                               "dense_1/kernel:0", "dense_1/bias:0"]
    model.compile(K.optimizers.Adam(lr=0.05), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=8, verbose=0,
                        validation_data=(x[:50], y[:50]))
    assert sorted(history.history) == ["acc", "loss", "val_acc", "val_loss"]
    assert history.epoch == list(range(8)) and len(history.history["loss"]) == 8
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["acc"][-1] > 0.9
    loss, acc = model.evaluate(x, y, verbose=0)
    assert model.metrics_names == ["loss", "acc"] and acc > 0.9
    probs = model.predict(x, batch_size=64)
    assert probs.shape == (200, 3)
    np.testing.assert_allclose(probs.sum(1), 1, rtol=1e-5)
    assert abs((probs.argmax(1) == y).mean() - acc) < 1e-6
    ref_loss = -np.log(np.clip(probs[np.arange(200), y], 1e-7, 1)).mean()
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-4)


def test_functional_cnn_fit_and_call_on_new_tensor():
    rng = np.random.RandomState(1)
    y = rng.randint(0, 2, 96)
    x = rng.rand(96, 8, 8, 1).astype(np.float32) * 0.3
    x[y == 1, 2:6, 2:6, 0] += 1.0
    inputs = K.Input((8, 8, 1))
    h = K.layers.Conv2D(4, 3, activation="relu", padding="same")(inputs)
    h = K.layers.MaxPooling2D()(h)
    h = K.layers.BatchNormalization(momentum=0.8)(h)
    h = K.layers.Flatten()(h)
    outputs = K.layers.Dense(2, activation="softmax")(h)
    model = K.Model(inputs, outputs)
    assert [layer.name for layer in model.layers] == [
        "input_1", "conv2d", "max_pooling2d", "batch_normalization", "flatten", "dense"]
    assert len(model.updates) == 2 and len(model.trainable_weights) == 6
    model.compile(K.optimizers.Adam(0.02), "categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, K.utils.to_categorical(y, 2), batch_size=16, epochs=10, verbose=0)
    assert history.history["acc"][-1] > 0.9
    moving_mean = K.backend.get_value(model.get_layer("batch_normalization").moving_mean)
    assert np.any(moving_mean != 0)
    assert model.evaluate(x, K.utils.to_categorical(y, 2), verbose=0)[1] > 0.9
    other = tf.placeholder(tf.float32, [None, 8, 8, 1])
    again = model(other)
    np.testing.assert_allclose(K.backend.get_session().run(again, {other: x[:5]}),
                               model.predict(x[:5]), rtol=1e-5)


def test_train_test_predict_on_batch_and_mse():
    rng = np.random.RandomState(2)
    x = rng.randn(64, 3).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    model = K.Sequential()
    model.add(K.layers.Dense(1, input_dim=3))
    model.compile(K.optimizers.SGD(learning_rate=0.1), loss="mse", metrics=["mae"])
    first = model.test_on_batch(x, y)
    pred = model.predict_on_batch(x)
    np.testing.assert_allclose(first[0], ((pred - y) ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(first[1], np.abs(pred - y).mean(), rtol=1e-5)
    before = model.train_on_batch(x, y)
    np.testing.assert_allclose(before, first, rtol=1e-5)
    for _ in range(100):
        model.train_on_batch(x, y)
    assert model.test_on_batch(x, y)[0] < 1e-3
    kernel, bias = model.layers[0].get_weights()
    np.testing.assert_allclose(kernel.ravel(), [1.0, -2.0, 0.5], atol=0.02)


def test_lazy_sequential_validation_split_and_optimizer_strings():
    x, y = _blobs(120, seed=3)
    for name in ("sgd", "rmsprop", "adagrad"):
        K.backend.clear_session()
        model = K.Sequential([K.layers.Dense(8, activation="relu"),
                              K.layers.Dense(3, activation="softmax")])
        model.compile(name, "sparse_categorical_crossentropy", metrics=["acc"])
        history = model.fit(x, y, epochs=2, batch_size=30, validation_split=0.25, verbose=0)
        assert history.params["samples"] == 90
        assert "val_acc" in history.history
        assert model.inputs[0].get_shape().as_list() == [None, 4]
    with pytest.raises(ValueError, match="Could not interpret optimizer"):
        model.compile("nope", "mse")


def test_tf_train_optimizer_loss_function_and_regularization():
    x, y = _blobs(60, seed=4)
    inputs = K.Input((4,))
    logits = K.layers.Dense(3, kernel_regularizer=K.regularizers.l2(0.01))(inputs)
    model = K.Model(inputs=inputs, outputs=logits)

    def loss(y_true, y_pred):
        return K.losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)

    model.compile(tf.train.GradientDescentOptimizer(0.5), loss)
    value = model.evaluate(x, y, verbose=0)
    kernel, bias = model.layers[1].get_weights()
    z = x @ kernel + bias
    z -= z.max(1, keepdims=True)
    ce = -(z[np.arange(60), y] - np.log(np.exp(z).sum(1))).mean()
    np.testing.assert_allclose(value, ce + 0.01 * (kernel ** 2).sum(), rtol=1e-4)
    model.fit(x, y, epochs=20, batch_size=60, verbose=0)
    assert model.evaluate(x, y, verbose=0) < value


def test_save_and_load_weights(tmp_path):
    model = K.Sequential([K.layers.Dense(3, input_shape=(2,))])
    saved = model.get_weights()
    path = str(tmp_path / "weights.ckpt")
    model.save_weights(path)
    model.set_weights([np.zeros((2, 3)), np.ones(3)])
    model.load_weights(path)
    for value, ref in zip(model.get_weights(), saved):
        np.testing.assert_array_equal(value, ref)


def test_load_weights_into_a_second_instance_of_the_architecture(tmp_path):
    # The second model's layers get other names (dense_2, batch_normalization_1, ...); weights
    # are matched by the model's structure, as Keras does.
    def build():
        return K.Sequential([K.layers.Dense(4, input_shape=(3,)),
                             K.layers.BatchNormalization(), K.layers.Dense(2)])

    first, second = build(), build()
    assert first.layers[0].name != second.layers[0].name
    first.set_weights([np.full(w.shape, i + 1.0) for i, w in enumerate(first.get_weights())])
    path = str(tmp_path / "weights.h5")
    first.save_weights(path)
    second.load_weights(path)
    for value, ref in zip(second.get_weights(), first.get_weights()):
        np.testing.assert_array_equal(value, ref)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(second.predict(x), first.predict(x), rtol=1e-6)


def test_fit_evaluate_predict_on_a_tf_data_dataset():
    x, y = _blobs(60)
    model = K.Sequential([K.layers.Dense(3, activation="softmax", input_shape=(4,))])
    model.compile(K.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    train = tf.data.Dataset.from_tensor_slices((x, y)).batch(20).repeat()
    history = model.fit(train, steps_per_epoch=3, epochs=3, verbose=0)
    assert len(history.history["loss"]) == 3
    assert history.history["loss"][-1] < history.history["loss"][0]
    evaluation = tf.data.Dataset.from_tensor_slices((x, y)).batch(20)
    expect = model.evaluate(x, y, batch_size=20, verbose=0)
    assert model.evaluate(evaluation, steps=3, verbose=0) == pytest.approx(expect, rel=1e-5)
    predicted = model.predict(tf.data.Dataset.from_tensor_slices(x).batch(25), steps=5)
    np.testing.assert_allclose(predicted, model.predict(x), rtol=1e-5)  # ran out after 3
    with pytest.raises(ValueError, match="steps"):
        model.fit(train, epochs=1, verbose=0)


def test_summary_and_errors(capsys):
    model = K.Sequential([K.layers.Dense(8, input_shape=(4,)), K.layers.Dense(2)])
    model.summary()
    text = capsys.readouterr().out
    assert 'Model: "sequential"' in text and "dense (Dense)" in text and "(None, 8)" in text
    assert "Total params: 58" in text
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.zeros((2, 4)), np.zeros((2, 2)), verbose=0)
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="expected dense_input to have shape"):
        model.predict(np.zeros((2, 5)))
    with pytest.raises(ValueError, match="Graph disconnected"):
        K.Model(K.Input((3,)), K.layers.Dense(2)(K.Input((3,))))
    with pytest.raises(ValueError, match="unique names"):
        K.Sequential([K.layers.Dense(2, name="a"), K.layers.Dense(2, name="a")])


def test_multi_input_model_and_nested_model():
    a, b = K.Input((2,), name="a"), K.Input((3,), name="b")
    merged = K.layers.concatenate([a, b])
    out = K.layers.Dense(1)(merged)
    model = K.Model([a, b], out)
    inner = K.Sequential([K.layers.Dense(2, input_shape=(5,))])
    outer_in = K.Input((5,))
    outer = K.Model(outer_in, K.layers.Dense(1)(inner(outer_in)))
    assert len(outer.weights) == 4
    rng = np.random.RandomState(5)
    xa, xb = rng.randn(4, 2), rng.randn(4, 3)
    kernel, bias = model.layers[-1].get_weights()
    np.testing.assert_allclose(model.predict([xa, xb]), np.hstack([xa, xb]) @ kernel + bias,
                               rtol=1e-5)
    model.compile("sgd", "mse")
    assert np.isfinite(model.train_on_batch([xa, xb], np.zeros((4, 1))))
    # inputs given as a dict keyed by the Input layers' names
    np.testing.assert_allclose(model.predict({"b": xb, "a": xa}), model.predict([xa, xb]))
    before = model.evaluate([xa, xb], np.zeros((4, 1)), verbose=0)
    assert model.evaluate({"a": xa, "b": xb}, np.zeros((4, 1)), verbose=0) == before
    history = model.fit({"a": xa, "b": xb}, np.zeros((4, 1)), epochs=2, verbose=0,
                        validation_split=0.25)
    assert sorted(history.history) == ["loss", "val_loss"]
    with pytest.raises(ValueError, match="No data provided for \\['b'\\]"):
        model.predict({"a": xa})


def test_model_and_layer_connectivity_and_backend_function():
    model = K.Sequential([K.layers.Dense(3, input_shape=(2,), name="hidden"),
                          K.layers.Dropout(0.5), K.layers.Dense(1)])
    assert model.input is model.inputs[0] and model.output is model.outputs[0]
    assert model.input_shape == (None, 2) and model.output_shape == (None, 1)
    hidden = model.get_layer("hidden")
    assert hidden.output_shape == (None, 3) and hidden.input is model.input
    probe = K.backend.function([model.input, K.backend.learning_phase()],
                               [model.layers[1].output])
    data = np.ones((4, 2), np.float32)
    test_out = probe([data, False])[0]
    train_out = probe([data, True])[0]
    kernel, bias = hidden.get_weights()
    np.testing.assert_allclose(test_out, data @ kernel + bias, rtol=1e-5)
    assert set(np.round(np.unique(train_out / np.where(test_out == 0, 1, test_out)), 4)) <= {
        0.0, 2.0}


class _Classifier(K.Model):
    def __init__(self):
        super().__init__()
        self.hidden = K.layers.Dense(16, activation="relu")
        self.norm = K.layers.BatchNormalization()
        self.head = K.layers.Dense(3, activation="softmax")

    def call(self, x):
        return self.head(self.norm(self.hidden(x)))


class _Scale(K.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer="ones")

    def call(self, x):
        return x * self.w


def test_subclassed_model_and_custom_layer():
    model = _Classifier()
    x, y = _blobs(90, seed=6)
    model.compile(K.optimizers.Adam(0.05), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=6, batch_size=30, verbose=0)
    assert history.history["acc"][-1] > 0.9
    assert [layer.name for layer in model.layers] == ["dense", "batch_normalization",
                                                      "dense_1"]
    assert model.weights[0].name == "private__classifier/dense/kernel:0"
    assert len(model.updates) == 2 and len(model.trainable_weights) == 6
    assert model.predict(x[:4]).shape == (4, 3)
    scale = _Scale()
    inp = K.Input((2,))
    out = scale(inp)
    assert scale.name == "private__scale" and scale.weights[0].name == "private__scale/w:0"
    np.testing.assert_array_equal(K.backend.get_session().run(out, {inp: [[2.0, 3.0]]}),
                                  [[2.0, 3.0]])


def test_sample_weight_and_class_weight_scale_the_loss():
    model = K.Sequential([K.layers.Dense(2, activation="softmax", input_shape=(3,))])
    model.compile("sgd", "sparse_categorical_crossentropy")
    rng = np.random.RandomState(7)
    x = rng.randn(6, 3).astype(np.float32)
    y = np.array([0, 1, 1, 0, 1, 1])
    probs = model.predict(x)
    ce = -np.log(probs[np.arange(6), y])
    w = np.array([1.0, 0.0, 2.0, 0.5, 1.0, 3.0])
    np.testing.assert_allclose(model.test_on_batch(x, y, sample_weight=w), (ce * w).mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0, sample_weight=w),
                               (ce * w).mean(), rtol=1e-5)
    before = model.train_on_batch(x, y, class_weight={0: 2.0, 1: 0.5})
    np.testing.assert_allclose(before, (ce * np.where(y == 0, 2.0, 0.5)).mean(), rtol=1e-5)
    with pytest.raises(ValueError, match="class_weight has no weight for class"):
        model.fit(x, y, class_weight={0: 1.0}, verbose=0)
    history = model.fit(x, y, sample_weight=w, class_weight={0: 1.0, 1: 1.0}, epochs=2,
                        verbose=0)
    assert len(history.history["loss"]) == 2


def test_pad_sequences():
    pad = K.preprocessing.sequence.pad_sequences
    seqs = [[1, 2, 3], [4], [5, 6, 7, 8, 9], []]
    np.testing.assert_array_equal(pad(seqs), [[0, 0, 1, 2, 3], [0, 0, 0, 0, 4],
                                              [5, 6, 7, 8, 9], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(pad(seqs, maxlen=3, padding="post", truncating="post"),
                                  [[1, 2, 3], [4, 0, 0], [5, 6, 7], [0, 0, 0]])
    np.testing.assert_array_equal(pad(seqs, maxlen=2, value=-1), [[2, 3], [-1, 4], [8, 9],
                                                                  [-1, -1]])


def test_multi_output_losses_weights_and_metrics():
    x = K.Input((4,))
    h = K.layers.Dense(8, activation="relu")(x)
    cls = K.layers.Dense(3, activation="softmax", name="cls")(h)
    reg = K.layers.Dense(1, name="reg")(h)
    model = K.Model(x, [cls, reg])
    model.compile("sgd", loss=["sparse_categorical_crossentropy", "mse"], loss_weights=[1.0, 0.5],
                  metrics=["accuracy"])
    assert model.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc", "reg_acc"]
    rng = np.random.RandomState(8)
    xs, ya, yb = rng.rand(10, 4), rng.randint(0, 3, 10), rng.rand(10, 1)
    pa, pb = model.predict(xs)
    la, lb = -np.log(pa[np.arange(10), ya]).mean(), ((pb - yb) ** 2).mean()
    result = model.evaluate(xs, [ya, yb], verbose=0)
    np.testing.assert_allclose(result[:3], [la + 0.5 * lb, la, lb], rtol=1e-4)
    np.testing.assert_allclose(result[3], (pa.argmax(1) == ya).mean())
    history = model.fit(xs, [ya, yb], epochs=1, verbose=0)
    assert sorted(history.history) == ["cls_acc", "cls_loss", "loss", "reg_acc", "reg_loss"]
    model.compile("sgd", loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
                  metrics={"cls": "accuracy"})
    assert model.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc"]
    model.fit(xs, {"cls": ya, "reg": yb}, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="No data provided for"):
        model.fit(xs, {"cls": ya}, verbose=0)
    with pytest.raises(ValueError, match="one entry per model output"):
        model.compile("sgd", loss=["mse"])


def test_keras_layers_inside_a_tf1_training_loop():
    x = tf.placeholder(tf.float32, [None, 4])
    labels = tf.placeholder(tf.int64, [None])
    h = K.layers.Dense(16, activation="relu")(x)
    h = K.layers.BatchNormalization()(K.layers.Dropout(0.3)(h))
    logits = K.layers.Dense(3)(h)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
    data, y = _blobs(150, seed=9)
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        for _ in range(60):
            session.run(train, {x: data, labels: y, K.backend.learning_phase(): 1})
        accuracy = (session.run(logits, {x: data}).argmax(1) == y).mean()
    assert accuracy > 0.9
    with pytest.raises(ValueError, match="not yet been built"):
        K.Sequential([K.layers.Dense(2)]).summary()


@pytest.mark.parametrize("rnn", [K.layers.LSTM, K.layers.GRU])
def test_embedding_recurrent_classifier_trains(rnn):
    rng = np.random.RandomState(10)
    x = rng.randint(1, 20, (256, 6))
    y = (x[:, -1] < 10).astype(np.float32)
    model = K.Sequential([K.layers.Embedding(20, 8, input_length=6), rnn(16),
                          K.layers.Dense(1, activation="sigmoid")])
    model.compile(K.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=64, epochs=6, verbose=0)
    assert history.history["acc"][-1] > 0.9
