"""tf.keras.layers.DenseFeatures: feature columns in Sequential and functional models, fed
from dicts of arrays and from a tf.data dataset of (features, label)."""

import numpy as np
import pytest

import tensorflux as tf

fc = tf.feature_column


def _data(n=48, seed=0):
    rng = np.random.RandomState(seed)
    features = {"age": rng.randint(20, 70, n).astype(np.int64),
                "thal": rng.choice([b"fixed", b"normal", b"reversible"], n),
                "chol": rng.rand(n).astype(np.float32)}
    return features, (features["age"] > 45).astype(np.float32)


def _columns():
    age = fc.numeric_column("age")
    thal = fc.categorical_column_with_vocabulary_list("thal", ["fixed", "normal", "reversible"])
    return [age, fc.bucketized_column(age, boundaries=[30, 40, 50, 60]),
            fc.numeric_column("chol"), fc.indicator_column(thal),
            fc.embedding_column(thal, dimension=3)]


def test_output_equals_input_layer_and_weights_are_tracked():
    features, _ = _data(8)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        layer = tf.keras.layers.DenseFeatures(_columns())
        out = layer({k: tf.constant(v) for k, v in features.items()})
        again = layer({k: tf.constant(v[:3]) for k, v in features.items()})   # reused weights
        assert [w.name for w in layer.trainable_weights] == [
            "dense_features/thal_embedding/embedding_weights:0"]
        assert len(tf.global_variables()) == 1
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            got, got_again, table = sess.run([out, again, layer.weights[0]])
    ages = features["age"].astype(np.float32)
    buckets = np.eye(5)[np.digitize(ages, [30, 40, 50, 60])]
    index = np.array([{b"fixed": 0, b"normal": 1, b"reversible": 2}[t]
                      for t in features["thal"]])
    # columns sorted by name: age, age_bucketized, chol, thal_embedding, thal_indicator
    want = np.concatenate([ages[:, None], buckets, features["chol"][:, None], table[index],
                           np.eye(3)[index]], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got_again, want[:3], rtol=1e-6)


def test_sequential_trains_on_a_dataset_of_feature_dicts():
    features, target = _data()
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        ds = tf.data.Dataset.from_tensor_slices((features, target)).batch(16)
        model = tf.keras.Sequential([tf.keras.layers.DenseFeatures(_columns()),
                                     tf.keras.layers.Dense(8, activation="relu"),
                                     tf.keras.layers.Dense(1, activation="sigmoid")])
        model.compile("adam", "binary_crossentropy")
        history = model.fit(ds, epochs=3, verbose=0)
        assert len(history.history["loss"]) == 3
        assert model.predict(ds).shape == (48, 1)
        # dicts of arrays work the same way
        assert model.predict(features, batch_size=16).shape == (48, 1)


def test_functional_model_with_dict_inputs():
    features, target = _data()
    with tf.Graph().as_default():
        inputs = {"age": tf.keras.Input(shape=(), name="age", dtype=tf.int64),
                  "thal": tf.keras.Input(shape=(), name="thal", dtype=tf.string),
                  "chol": tf.keras.Input(shape=(), name="chol")}
        x = tf.keras.layers.DenseFeatures(_columns())(inputs)
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))
        model.compile("sgd", "mse")
        model.fit(features, target, epochs=1, batch_size=16, verbose=0)
        assert model.predict(features).shape == (48, 1)
    with pytest.raises(ValueError, match="dictionary"):
        with tf.Graph().as_default():
            tf.keras.layers.DenseFeatures(_columns())(tf.ones([2, 3]))
