"""tf.contrib.training.HParams parsing/typing and the train ops (optimize_loss, slim)."""

import os

import numpy as np
import pytest

import tensorflux as tf

HParams = tf.contrib.training.HParams
slim = tf.contrib.slim


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_hparams_parse_types_and_lists():
    h = HParams(learning_rate=0.1, steps=10, layers=[32, 16], act="relu", flag=True)
    h.parse("learning_rate=1,steps=20,layers=[8, 4,2],act=tanh,flag=false")
    assert h.values() == {"learning_rate": 1.0, "steps": 20, "layers": [8, 4, 2],
                          "act": "tanh", "flag": False}
    assert isinstance(h.learning_rate, float)
    h.parse("layers[1]=7,flag=1")
    assert h.layers == [8, 7, 2] and h.flag is True
    assert "steps" in h and "nothing" not in h
    assert h.get("steps", 3) == 20 and h.get("missing", 5) == 5
    assert str(h).startswith("[('act', 'tanh')")


@pytest.mark.parametrize("text, message", [
    ("steps=1.5", "Could not parse hparam 'steps' of type 'int' with value '1.5'"),
    ("flag=maybe", "Could not parse hparam 'flag' of type 'bool'"),
    ("unknown=3", "Unknown hyperparameter type for unknown"),
    ("steps=1,steps=2", "Multiple assignments to variable 'steps'"),
    ("=3", "Malformed hyperparameter value"),
    ("steps=[1,2]", "Must not pass a list for single-valued parameter: steps"),
    ("layers=3", "Must pass a list for multi-valued parameter: layers"),
])
def test_hparams_parse_errors(text, message):
    h = HParams(steps=10, flag=True, layers=[1])
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        h.parse(text)


def test_hparams_set_add_json_and_casts():
    h = HParams(lr=0.5, name="x")
    h.set_hparam("lr", 2)
    assert h.lr == 2.0 and isinstance(h.lr, float)
    with pytest.raises(ValueError, match="Could not cast hparam 'name'"):
        h.set_hparam("name", 3)
    with pytest.raises(ValueError, match="Could not cast hparam 'lr'"):
        h.set_hparam("lr", True)
    with pytest.raises(KeyError):
        h.set_hparam("nope", 1)
    with pytest.raises(ValueError, match="reserved"):
        h.add_hparam("parse", 1)
    with pytest.raises(ValueError, match="cannot be empty"):
        h.add_hparam("empty", [])
    h.add_hparam("sizes", [1, 2])
    assert h.to_json(sort_keys=True) == '{"lr": 2.0, "name": "x", "sizes": [1, 2]}'
    h.parse_json('{"lr": 0.25, "sizes": [3]}')
    assert h.lr == 0.25 and h.sizes == [3]
    h.override_from_dict({"name": "y"})
    assert h.name == "y"
    with pytest.raises(ValueError, match="incompatible with default"):
        h.get("lr", "text")
    h.del_hparam("name")
    assert "name" not in h.values()


def _regression():
    rng = np.random.RandomState(0)
    xv = rng.randn(64, 3).astype(np.float32)
    yv = (xv @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    x = tf.constant(xv)
    pred = tf.contrib.layers.fully_connected(x, 1, activation_fn=None)
    loss = tf.losses.mean_squared_error(tf.constant(yv), pred)
    return loss


def test_optimize_loss_decreases_loss_and_names():
    loss = _regression()
    step = tf.train.get_or_create_global_step()
    train = tf.contrib.layers.optimize_loss(loss, step, 0.1, "SGD",
                                            summaries=["loss", "gradient_norm"])
    lr = [v for v in tf.global_variables() if "learning_rate" in v.op.name]
    assert [v.op.name for v in lr] == ["OptimizeLoss/learning_rate"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        assert sess.run(loss) < 0.05 * first
        assert sess.run(step) == 60
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        tf.contrib.layers.optimize_loss(loss, step, 0.1, "Nope")
    with pytest.raises(ValueError, match="Summaries should be one of"):
        tf.contrib.layers.optimize_loss(loss, step, 0.1, "SGD", summaries=["weights"])
    with pytest.raises(ValueError, match="Learning rate should be 0d Tensor or float"):
        tf.contrib.layers.optimize_loss(loss, step, 1, "SGD")


def test_optimize_loss_clipping_multipliers_and_decay():
    v = tf.Variable([3.0, 4.0], name="v")
    loss = tf.reduce_sum(v * v) / 2  # gradient = v, norm 5
    step = tf.train.get_or_create_global_step()
    clipped = tf.contrib.layers.optimize_loss(loss, step, 1.0, tf.train.GradientDescentOptimizer,
                                              clip_gradients=1.0, name="clip")
    w = tf.Variable([1.0], name="w")
    loss_w = tf.reduce_sum(w * w) / 2
    multiplied = tf.contrib.layers.optimize_loss(
        loss_w, step, 0.5, "SGD", variables=[w], gradient_multipliers={w: 0.5},
        learning_rate_decay_fn=lambda lr, s: lr * 0.5, name="mult", increment_global_step=False)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(clipped)
        np.testing.assert_allclose(sess.run(v), [3 - 0.6, 4 - 0.8], rtol=1e-6)
        sess.run(multiplied)
        np.testing.assert_allclose(sess.run(w), [1 - 0.25 * 0.5], rtol=1e-6)
        assert sess.run(step) == 1


def test_slim_create_train_op_and_train(tmp_path):
    rng = np.random.RandomState(1)
    xv = rng.randn(32, 4).astype(np.float32)
    labels = (xv[:, 0] > 0).astype(np.int64)
    net = slim.fully_connected(tf.constant(xv), 8, scope="fc1")
    net = slim.batch_norm(net, is_training=True)
    logits = slim.fully_connected(net, 2, activation_fn=None, scope="fc2",
                                  weights_regularizer=slim.l2_regularizer(1e-3))
    slim.losses.sparse_softmax_cross_entropy(logits, tf.constant(labels))
    total = slim.losses.get_total_loss()
    train_op = slim.learning.create_train_op(total, tf.train.AdamOptimizer(0.05),
                                             clip_gradient_norm=5.0)
    assert train_op in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    final = slim.learning.train(train_op, str(tmp_path), number_of_steps=40,
                                save_summaries_secs=1000, save_interval_secs=1000)
    assert final < 0.3
    ckpt = tf.train.latest_checkpoint(str(tmp_path))
    assert ckpt is not None and ckpt.endswith("model.ckpt-40")
    mean = tf.train.load_variable(ckpt, "BatchNorm/moving_mean")
    assert np.abs(mean).sum() > 0  # the UPDATE_OPS ran with the train op


def test_slim_losses_contrib_argument_order():
    logits = tf.constant([[2.0, 0.0], [0.0, 1.0]])
    onehot = tf.constant([[1.0, 0.0], [0.0, 1.0]])
    xent = slim.losses.softmax_cross_entropy(logits, onehot)
    mse = slim.losses.mean_squared_error(tf.constant([1.0, 3.0]), tf.constant([0.0, 0.0]))
    hinge = slim.losses.hinge_loss(tf.constant([0.5, -2.0]), tf.constant([1.0, 0.0]))
    assert len(tf.get_collection(tf.GraphKeys.LOSSES)) == 2
    with tf.Session() as sess:
        xv, mv, hv, tv = sess.run([xent, mse, hinge, slim.losses.get_total_loss()])
    ref = np.mean([np.log(1 + np.exp(-2.0)), np.log(1 + np.exp(-1.0))])
    np.testing.assert_allclose(xv, ref, rtol=1e-5)
    np.testing.assert_allclose(mv, 5.0)
    np.testing.assert_allclose(hv, [0.5, 0.0])
    np.testing.assert_allclose(tv, ref + 5.0, rtol=1e-5)


def test_slim_evaluate_once(tmp_path):
    v = tf.Variable(3.0, name="v")
    step = tf.train.get_or_create_global_step()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, os.path.join(str(tmp_path), "m.ckpt"))
    mean, update = slim.metrics.streaming_mean(v * 2)
    value = slim.evaluation.evaluate_once("", path, str(tmp_path / "eval"), num_evals=3,
                                          eval_op=update, final_op=mean)
    assert value == 6.0 and step is not None
