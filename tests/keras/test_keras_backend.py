"""tf.keras backend, losses, metrics, activations, initializers, regularizers, utils."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

K = tf.keras


@pytest.fixture(autouse=True)
def _fresh_graph():
    K.backend.clear_session()
    yield
    K.backend.clear_session()


def _eval(t):
    return K.backend.get_session().run(t)


def test_backend_session_values_and_learning_phase():
    assert K.backend.floatx() == "float32" and K.backend.epsilon() == 1e-7
    v = K.backend.variable(np.arange(6).reshape(2, 3), name="v")
    assert v.dtype.base_dtype == tf.float32 and K.backend.int_shape(v) == (2, 3)
    np.testing.assert_array_equal(K.backend.eval(v), np.arange(6).reshape(2, 3))
    K.backend.set_value(v, np.ones((2, 3)))
    np.testing.assert_array_equal(K.backend.get_value(v), np.ones((2, 3)))
    w = K.backend.variable([1.0, 2.0])
    assert [a.tolist() for a in K.backend.batch_get_value([v, w])] == [[[1, 1, 1]] * 2,
                                                                        [1.0, 2.0]]
    p = K.backend.placeholder(shape=(None, 4))
    assert K.backend.int_shape(p) == (None, 4) and K.backend.ndim(p) == 2
    assert K.backend.int_shape(K.backend.placeholder(ndim=3)) == (None, None, None)
    phase = K.backend.learning_phase()
    assert phase.op.name == "keras_learning_phase" and phase is K.backend.learning_phase()
    assert not _eval(phase)
    K.backend.set_learning_phase(1)
    assert K.backend.learning_phase() == 1
    session = K.backend.get_session()
    assert K.backend.get_session() is session
    with tf.Session() as other:
        K.backend.set_session(other)
        assert K.backend.get_session() is other
    K.backend.clear_session()
    assert K.backend.learning_phase() is not phase


def test_get_session_initializes_only_new_variables():
    v = K.backend.variable(1.0)
    session = K.backend.get_session()
    session.run(tf.assign(v, 5.0))
    w = K.backend.variable(2.0)
    assert K.backend.get_value(v) == 5.0 and K.backend.get_value(w) == 2.0


def _probs(rng, shape):
    p = rng.rand(*shape) + 0.05
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 5), st.integers(2, 4), st.integers(0, 10_000))
def test_losses_match_numpy(batch, classes, seed):
    rng = np.random.RandomState(seed)
    p = _probs(rng, (batch, classes))
    labels = rng.randint(0, classes, batch)
    onehot = np.eye(classes, dtype=np.float32)[labels]
    logits = rng.randn(batch, classes).astype(np.float32)
    y = rng.randn(batch, classes).astype(np.float32)
    yb = rng.randint(0, 2, (batch, classes)).astype(np.float32)
    sig = 1 / (1 + np.exp(-logits))
    eps = 1e-7
    L = K.losses
    outs = _eval([L.categorical_crossentropy(onehot, p), L.sparse_categorical_crossentropy(
        labels, p), L.categorical_crossentropy(onehot, logits, from_logits=True),
        L.sparse_categorical_crossentropy(labels, logits, from_logits=True),
        L.binary_crossentropy(yb, sig), L.binary_crossentropy(yb, logits, from_logits=True),
        L.mse(y, p), L.mae(y, p), L.MeanSquaredError()(y, p),
        L.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)])
    log_softmax = logits - logits.max(1, keepdims=True)
    log_softmax -= np.log(np.exp(log_softmax).sum(1, keepdims=True))
    ce = -np.log(p[np.arange(batch), labels])
    bce = -(yb * np.log(sig) + (1 - yb) * np.log(1 - sig)).mean(-1)
    refs = [ce, ce, -log_softmax[np.arange(batch), labels], -log_softmax[np.arange(batch), labels],
            bce, bce, ((y - p) ** 2).mean(-1), np.abs(y - p).mean(-1), ((y - p) ** 2).mean(),
            -log_softmax[np.arange(batch), labels].mean()]
    for value, ref in zip(outs, refs):
        np.testing.assert_allclose(value, ref, rtol=2e-4, atol=1e-5 + 10 * eps)


def test_losses_clip_probabilities_and_lookup():
    value = _eval(K.losses.binary_crossentropy(np.array([[1.0]], np.float32),
                                               np.array([[0.0]], np.float32)))
    np.testing.assert_allclose(value, -np.log(2e-7), rtol=1e-3)
    assert K.losses.get("categorical_crossentropy") is K.losses.categorical_crossentropy
    assert K.losses.get("mse") is K.losses.mean_squared_error
    with pytest.raises(ValueError, match="Unknown loss function"):
        K.losses.get("nope")


def test_metrics_accuracy_functions():
    probs = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], np.float32)
    got = _eval([K.metrics.categorical_accuracy(np.eye(2, dtype=np.float32)[[1, 1, 1]], probs),
                 K.metrics.sparse_categorical_accuracy(np.array([[1], [0], [0]]), probs),
                 K.metrics.binary_accuracy(np.array([[1.0], [0.0]], np.float32),
                                           np.array([[0.6], [0.7]], np.float32))])
    np.testing.assert_array_equal(got[0], [1, 0, 1])
    np.testing.assert_array_equal(got[1], [1, 1, 0])
    np.testing.assert_array_equal(got[2], [1, 0])


def test_activations_match_numpy():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    A = K.activations
    t = tf.constant(x)
    outs = _eval([A.relu(t), A.sigmoid(t), A.tanh(t), A.softplus(t), A.softsign(t), A.elu(t),
                  A.linear(t), A.hard_sigmoid(t), A.relu(t, alpha=0.1, max_value=2.0),
                  A.softmax(x.reshape(1, -1)), A.get("swish")(t)])
    sig = 1 / (1 + np.exp(-x))
    refs = [np.maximum(x, 0), sig, np.tanh(x), np.log1p(np.exp(x)), x / (1 + np.abs(x)),
            np.where(x > 0, x, np.expm1(x)), x, np.clip(0.2 * x + 0.5, 0, 1),
            np.minimum(np.where(x > 0, x, 0.1 * x), 2.0),
            np.exp(x) / np.exp(x).sum(), x * sig]
    for value, ref in zip(outs, refs):
        np.testing.assert_allclose(np.ravel(value), np.ravel(ref), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Unknown activation function"):
        A.get("nope")


def test_initializers_and_regularizers_and_constraints():
    I = K.initializers  # noqa: E741
    values = _eval([I.get("glorot_uniform")((200, 100)), I.get("he_normal")((400, 300)),
                    I.Zeros()((2, 2)), I.Constant(3.0)((2,)), I.get("ones")((3,))])
    assert np.abs(values[0]).max() <= np.sqrt(6 / 300) and values[0].std() > 0.05
    np.testing.assert_allclose(values[1].std(), np.sqrt(2 / 400), rtol=0.1)
    np.testing.assert_array_equal(values[2], 0)
    np.testing.assert_array_equal(values[3], 3)
    np.testing.assert_array_equal(values[4], 1)
    w = np.array([[1.0, -2.0], [3.0, 0.0]], np.float32)
    regs = _eval([K.regularizers.l1(0.1)(w), K.regularizers.l2(0.1)(w),
                  K.regularizers.l1_l2(l1=0.1, l2=0.2)(w)])
    np.testing.assert_allclose(regs, [0.6, 1.4, 0.6 + 2.8], rtol=1e-6)
    cons = _eval([K.constraints.NonNeg()(w), K.constraints.MaxNorm(1.0)(w),
                  K.constraints.UnitNorm()(w)])
    np.testing.assert_array_equal(cons[0], np.maximum(w, 0))
    norms = np.sqrt((w ** 2).sum(0, keepdims=True))
    np.testing.assert_allclose(cons[1], w / norms * np.minimum(norms, 1.0), rtol=1e-5)
    np.testing.assert_allclose(cons[2], w / norms, rtol=1e-5)


def test_constraint_applied_after_each_step():
    model = K.Sequential([K.layers.Dense(2, input_shape=(2,),
                                         kernel_constraint=K.constraints.NonNeg())])
    model.compile(K.optimizers.SGD(1.0), "mse")
    model.train_on_batch(np.ones((4, 2)), -10 * np.ones((4, 2)))
    assert np.all(model.layers[0].get_weights()[0] >= 0)


def test_to_categorical_and_optimizer_mapping():
    np.testing.assert_array_equal(K.utils.to_categorical([0, 2, 1]), np.eye(3)[[0, 2, 1]])
    assert K.utils.to_categorical(np.array([[1], [0]]), 3).shape == (2, 3)
    with pytest.raises(ValueError, match="class ids"):
        K.utils.to_categorical([3], num_classes=2)
    sgd = K.optimizers.SGD(lr=0.5, momentum=0.9)
    assert sgd.learning_rate == 0.5 and K.backend.get_value(sgd.lr) == 0.5
    assert sgd.lr.name == "SGD/lr:0" and sgd.lr not in tf.trainable_variables()
    assert isinstance(sgd.tf_optimizer, tf.train.MomentumOptimizer)
    assert isinstance(K.optimizers.SGD().tf_optimizer, tf.train.GradientDescentOptimizer)
    assert isinstance(K.optimizers.get("adam").tf_optimizer, tf.train.AdamOptimizer)
    assert isinstance(K.optimizers.RMSprop().tf_optimizer, tf.train.RMSPropOptimizer)
    assert K.optimizers.Adagrad(learning_rate=0.2).learning_rate == 0.2


def test_backend_tensor_helpers_match_numpy():
    B = K.backend
    a = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    t = tf.constant(a)
    outs = _eval([B.mean(t, axis=1), B.sum(t), B.max(t, axis=0, keepdims=True), B.std(t),
                  B.var(t, axis=0), B.clip(t, -1.0, 1.0), B.dot(t, tf.constant(b)),
                  B.concatenate([t, t], axis=0), B.sqrt(t), B.square(t), B.argmax(t),
                  B.switch(True, t, -t), B.in_train_phase(t, -t, training=False),
                  B.binary_crossentropy(tf.constant([1.0, 0.0]), tf.constant([0.8, 0.3])),
                  B.batch_flatten(tf.zeros([2, 3, 4])), B.cast(t, "int32")])
    refs = [a.mean(1), a.sum(), a.max(0, keepdims=True), a.std(), a.var(0), np.clip(a, -1, 1),
            a @ b, np.vstack([a, a]), np.sqrt(np.maximum(a, 0)), a ** 2, a.argmax(-1), a, -a,
            -np.log([0.8, 0.7]), np.zeros((2, 12)), a.astype(np.int32)]
    for value, ref in zip(outs, refs):
        np.testing.assert_allclose(value, ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="expects 1 input value"):
        B.function([B.placeholder(shape=(2,))], [t])([])
