"""Wide & deep on a small census-like dataset whose label is an interaction of two categorical
features: only a model with their crossed_column can fit it (LinearClassifier and
DNNLinearCombinedClassifier, TF 1.15's column and variable names)."""

import itertools

import numpy as np

import tensorflux as tf

fc = tf.feature_column
STEPS = 10
EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate"]
OCCUPATION = ["Tech-support", "Sales", "Craft-repair", "Adm-clerical"]


def _census(n=128, seed=0):
    """Education x occupation decides the label through a parity table (no additive model of
    the two separately can beat 3/4 of it); age adds a small, learnable shift."""
    rng = np.random.RandomState(seed)
    edu = rng.randint(0, 4, n)
    occ = rng.randint(0, 4, n)
    label = ((edu + occ) % 2).astype(np.int64)
    age = (30 + 20 * rng.rand(n)).astype(np.float32)
    features = {"education": np.array(EDUCATION)[edu], "occupation": np.array(OCCUPATION)[occ],
                "age": age}
    return features, label


def _input(features, label, epochs=None, shuffle=True):
    return tf.estimator.inputs.numpy_input_fn(features, label, batch_size=len(label),
                                              num_epochs=epochs, shuffle=shuffle)


def _base_columns():
    education = fc.categorical_column_with_vocabulary_list("education", EDUCATION)
    occupation = fc.categorical_column_with_hash_bucket("occupation", 100)
    age = fc.bucketized_column(fc.numeric_column("age"), [35, 40, 45])
    return education, occupation, age


def test_linear_classifier_needs_the_cross(tmp_path):
    features, label = _census()
    education, occupation, age = _base_columns()
    cross = fc.crossed_column(["education", "occupation"], 1000)
    # The 16 combinations land in 16 distinct buckets (TF's hashing, checked here once).
    with tf.Graph().as_default():
        pairs = list(itertools.product(EDUCATION, OCCUPATION))
        ids = cross._get_sparse_tensors(fc.categorical._LazyBuilder({
            "education": tf.constant([p[0] for p in pairs]),
            "occupation": tf.constant([p[1] for p in pairs])})).id_tensor
        with tf.Session() as sess:
            assert len(set(sess.run(ids).values.tolist())) == 16
    accuracy = {}
    for name, columns in (("plain", [education, occupation, age]),
                          ("crossed", [education, occupation, age, cross])):
        est = tf.estimator.LinearClassifier(columns, model_dir=str(tmp_path / name),
                                            optimizer=tf.train.FtrlOptimizer(1.0))
        est.train(_input(features, label), steps=STEPS)
        result = est.evaluate(_input(features, label, epochs=1, shuffle=False))
        accuracy[name] = result["accuracy"]
    weights = est.get_variable_value("linear/linear_model/education_X_occupation/weights")
    assert weights.shape == (1000, 1) and np.count_nonzero(weights) == 16
    assert accuracy["crossed"] == 1.0
    assert accuracy["plain"] <= 0.8  # an additive model of the two cannot fit the parity


def test_wide_and_deep_with_crossed_and_embedding_columns(tmp_path):
    features, label = _census()
    education, occupation, age = _base_columns()
    cross = fc.crossed_column(["education", "occupation"], 1000)
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=[education, occupation, cross],
        linear_optimizer=tf.train.FtrlOptimizer(1.0),
        dnn_feature_columns=[fc.embedding_column(education, 2), fc.indicator_column(age),
                             fc.embedding_column(cross, 3)],
        dnn_hidden_units=[8], dnn_optimizer=tf.train.AdagradOptimizer(0.1))
    est.train(_input(features, label), steps=STEPS)
    result = est.evaluate(_input(features, label, epochs=1, shuffle=False))
    assert result["accuracy"] == 1.0
    names = est.get_variable_names()
    assert "linear/linear_model/education_X_occupation/weights" in names
    assert ("dnn/input_from_feature_columns/input_layer/education_X_occupation_embedding/"
            "embedding_weights") in names
