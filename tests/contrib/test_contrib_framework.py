"""tf.contrib.framework: arg_scope semantics, variable selection, restoring helpers, errors."""

import numpy as np
import pytest

import tensorflux as tf

framework = tf.contrib.framework


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


@framework.add_arg_scope
def _f(a, b=1, c=2):
    return a, b, c


@framework.add_arg_scope
def _g(x, c=0):
    return x, c


def test_arg_scope_nesting_override_and_reentry():
    assert _f(0) == (0, 1, 2)
    with framework.arg_scope([_f], b=10, c=20) as outer:
        assert _f(0) == (0, 10, 20)
        assert _f(0, c=5) == (0, 10, 5)
        with framework.arg_scope([_f, _g], c=30):
            assert _f(0) == (0, 10, 30)
            assert _g(1) == (1, 30)
        assert _f(0) == (0, 10, 20)
        assert _g(1) == (1, 0)
    assert _f(0) == (0, 1, 2)
    with framework.arg_scope(outer):
        assert _f(0) == (0, 10, 20)
    assert framework.arg_scoped_arguments(_f) == ("a", "b", "c")
    assert framework.has_arg_scope(_f) and not framework.has_arg_scope(len)


def test_arg_scope_errors():
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with framework.arg_scope([len], a=1):
            pass
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with framework.arg_scope({}, a=1):
            pass
    with pytest.raises(TypeError, match="list/tuple"):
        with framework.arg_scope(_f, a=1):
            pass


def test_arg_scope_reaches_model_variable_inside_layers():
    with framework.arg_scope([framework.model_variable], device="/cpu:0"):
        tf.contrib.layers.fully_connected(tf.ones([1, 2]), 3)
    assert all(v.device.endswith("CPU:0") or v.device.endswith("cpu:0")
               for v in tf.global_variables())


def _model():
    with tf.variable_scope("net"):
        with tf.variable_scope("conv"):
            framework.model_variable("weights", [2])
            framework.model_variable("biases", [2])
        with tf.variable_scope("logits"):
            framework.model_variable("weights", [2])
    framework.variable("other", [1], collections=["mine"])
    framework.local_variable(np.zeros(2, np.float32), name="counter")


def test_variable_selection():
    _model()
    names = [v.op.name for v in framework.get_variables_to_restore()]
    assert names == ["net/conv/weights", "net/conv/biases", "net/logits/weights"]
    assert [v.op.name for v in framework.get_variables_to_restore(
        include=["net"], exclude=["net/logits"])] == ["net/conv/weights", "net/conv/biases"]
    assert [v.op.name for v in framework.get_variables_by_name("weights")] == [
        "net/conv/weights", "net/logits/weights"]
    assert [v.op.name for v in framework.get_variables_by_suffix("biases")] == [
        "net/conv/biases"]
    assert [v.op.name for v in framework.get_model_variables("net/conv")] == [
        "net/conv/weights", "net/conv/biases"]
    assert [v.op.name for v in framework.get_local_variables()] == ["counter"]
    assert [v.op.name for v in tf.get_collection("mine")] == ["other"]
    assert framework.get_unique_variable("net/conv/weights").op.name == "net/conv/weights"
    with pytest.raises(ValueError, match="Couldn't find variable"):
        framework.get_unique_variable("nothing")
    with pytest.raises(ValueError, match="does not uniquely identify"):
        framework.get_unique_variable("net/conv")
    with pytest.raises(TypeError, match="include is provided but is not a list"):
        framework.get_variables_to_restore(include="net")
    filtered = framework.filter_variables(tf.global_variables(), include_patterns=["net"],
                                          exclude_patterns=["biases"])
    assert [v.op.name for v in filtered] == ["net/conv/weights", "net/logits/weights"]


def test_assign_from_values():
    with tf.variable_scope("a"):
        v = tf.get_variable("v", [2, 2])
    op, feed = framework.assign_from_values({"a/v": np.arange(4.0)})
    with tf.Session() as sess:
        sess.run(op, feed)
        np.testing.assert_array_equal(sess.run(v), [[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="wasn't found"):
        framework.assign_from_values({"b/v": np.zeros(1)})


def test_assign_from_checkpoint_and_fn(tmp_path):
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="a")
        tf.Variable([[3.0]], name="b")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    a2 = tf.Variable([0.0, 0.0], name="a")
    b2 = tf.Variable([[0.0]], name="b")
    extra = tf.Variable([5.0], name="extra")
    init_fn = framework.assign_from_checkpoint_fn(path, [a2, b2, extra],
                                                  ignore_missing_vars=True)
    op, feed = framework.assign_from_checkpoint(path, {"a": a2})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        init_fn(sess)
        np.testing.assert_array_equal(sess.run(a2), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(b2), [[3.0]])
        np.testing.assert_array_equal(sess.run(extra), [5.0])
        sess.run(tf.global_variables_initializer())
        sess.run(op, feed)
        np.testing.assert_array_equal(sess.run(a2), [1.0, 2.0])
    with pytest.raises(ValueError, match="Checkpoint is missing variable"):
        framework.assign_from_checkpoint(path, [extra])
    assert framework.assign_from_checkpoint_fn(path, [extra], ignore_missing_vars=True) is None
    with pytest.raises(ValueError, match="var_list cannot be empty"):
        framework.assign_from_checkpoint_fn(path, [])


def test_global_step_and_helpers():
    step = framework.get_or_create_global_step()
    assert framework.get_global_step() is step
    checked = framework.with_shape([2, 3], tf.placeholder(tf.float32, [None, 3]))
    with tf.Session() as sess:
        assert sess.run(checked, {checked.op.inputs[0]: np.ones((2, 3))}).shape == (2, 3)
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(checked, {checked.op.inputs[0]: np.ones((1, 3))})
    with pytest.raises(ValueError, match="Invalid shape"):
        framework.with_shape([2, 2], tf.zeros([2, 3]))
    assert framework.nest.flatten({"a": [1, 2]}) == [1, 2]
    assert framework.is_tensor(tf.zeros([1])) and not framework.is_tensor(1.0)
    z = tf.Variable([1.0, 2.0])
    with tf.Session() as sess:
        sess.run(framework.zero_initializer(z))
        np.testing.assert_array_equal(sess.run(z), [0.0, 0.0])


def test_missing_names_raise_with_replacement():
    with pytest.raises(AttributeError, match=r"tf\.contrib\.learn\.DynamicRnnEstimator is not "
                                             r"provided by tensorflux: use tf\.nn\.dynamic_rnn"):
        _ = tf.contrib.learn.DynamicRnnEstimator
    with pytest.raises(tf.contrib.ContribNotProvidedError,
                       match="use tf.data.TextLineDataset instead"):
        _ = tf.contrib.data.TextLineDataset
    with pytest.raises(AttributeError, match="graph mode only"):
        _ = tf.contrib.eager
    with pytest.raises(AttributeError, match=r"tf\.contrib\.layers\.conv3d .*tf\.layers\.conv3d"):
        _ = tf.contrib.layers.conv3d
    err = None
    try:
        _ = tf.contrib.timeseries
    except AttributeError as e:
        err = e
    assert err.module == "contrib" and err.name == "timeseries" and "not supported" in str(err)
    assert not hasattr(tf.contrib, "cudnn_rnn")
    assert getattr(tf.contrib.slim, "nets", None) is None


def test_provided_modules_load_lazily_and_are_listed():
    unbuilt = {"rnn", "seq2seq", "legacy_seq2seq"}  # built in another package
    for name in set(tf.contrib.PROVIDED) - unbuilt:
        module = getattr(tf.contrib, name)
        assert module.__name__ == f"tensorflux.contrib.{name}"
        assert name in dir(tf.contrib)
    assert tf.contrib.slim.losses is tf.contrib.losses
    assert tf.contrib.slim.metrics is tf.contrib.metrics
    assert tf.contrib.distributions.Normal is tf.distributions.Normal
    assert tf.contrib.framework.init_from_checkpoint is tf.train.init_from_checkpoint


def test_contrib_keras_is_the_tf_keras_alias_of_tf_1_15():
    from tensorflux.contrib import keras as contrib_keras

    assert contrib_keras is tf.keras and tf.contrib.keras is tf.keras
    assert "keras" in dir(tf.contrib)
    assert tf.contrib.keras.utils.get_file is tf.keras.utils.get_file
    layer = tf.contrib.keras.layers.Dense(
        2, kernel_initializer=tf.constant_initializer([[1.0, -1.0], [0.5, 2.0]]),
        bias_initializer=tf.constant_initializer([0.25, 0.0]))
    x = np.array([[1.0, 2.0], [-3.0, 0.5]], np.float32)
    y = layer(tf.constant(x))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y), x @ np.array([[1.0, -1.0], [0.5, 2.0]]) +
                                   [0.25, 0.0], rtol=1e-6)
