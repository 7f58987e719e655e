"""tf.feature_column.linear_model: the weighted sum of dense and categorical columns."""

import numpy as np
import pytest

import tensorflux as tf


def test_linear_model_sums_dense_and_categorical_terms():
    with tf.Graph().as_default():
        features = {"price": tf.constant([[1.0, 2.0], [3.0, 4.0]]),
                    "color": tf.constant([["red", "blue"], ["green", ""]]),
                    "age": tf.constant([[15.0], [40.0]])}
        price = tf.feature_column.numeric_column("price", shape=(2,))
        color = tf.feature_column.categorical_column_with_vocabulary_list(
            "color", ["red", "green", "blue"])
        age = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("age"),
                                                  boundaries=[18.0, 30.0])
        cols_to_vars = {}
        out = tf.feature_column.linear_model(features, [price, color, age], units=2,
                                             cols_to_vars=cols_to_vars)
        assert out.shape.as_list()[-1] == 2
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["linear_model/age_bucketized/weights", "linear_model/bias_weights",
                         "linear_model/color/weights", "linear_model/price/weights"]
        w_price = np.array([[1.0, -1.0], [0.5, 2.0]], np.float32)
        w_color = np.array([[1.0, 0.0], [0.0, 10.0], [100.0, 0.0]], np.float32)
        w_age = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], np.float32)
        bias = np.array([0.25, -0.25], np.float32)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            for column, value in ((price, w_price), (color, w_color), (age, w_age)):
                cols_to_vars[column][0].load(value, sess)
            cols_to_vars["bias"][0].load(bias, sess)
            result = sess.run(out)
    expected = np.array([[1.0, 2.0], [3.0, 4.0]]) @ w_price + bias
    expected[0] += w_color[0] + w_color[2] + w_age[0]   # red + blue (sum), age 15 -> bucket 0
    expected[1] += w_color[1] + w_age[2]                # green ("" is missing), 40 -> bucket 2
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_linear_model_errors():
    with tf.Graph().as_default():
        col = tf.feature_column.numeric_column("a")
        with pytest.raises(ValueError, match="must not be empty"):
            tf.feature_column.linear_model({"a": tf.constant([[1.0]])}, [])
        with pytest.raises(ValueError, match="sparse_combiner"):
            tf.feature_column.linear_model({"a": tf.constant([[1.0]])}, [col],
                                           sparse_combiner="max")
        with pytest.raises(ValueError, match="dictionary"):
            tf.feature_column.linear_model(tf.constant([[1.0]]), [col])
        with pytest.raises(ValueError, match="Duplicate"):
            tf.feature_column.linear_model({"a": tf.constant([[1.0]])}, [col, col])
