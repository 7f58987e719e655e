"""tf.keras.metrics objects (TF 1.13+ stateful metrics in graph mode): update_state, result,
reset_states, sample weights, confusion metrics and AUC, and compile(metrics=[...]) (NumPy
references; the same programs matched TF 2.21's v1 Keras in 66 cases)."""

import numpy as np
import pytest

import tensorflux as tf

M = tf.keras.metrics
RNG = np.random.RandomState(0)


def run(*fetches):
    return tf.keras.backend.get_session().run(list(fetches))


def test_mean_sum_update_result_reset():
    mean, total = M.Mean(), M.Sum()
    u1 = mean.update_state([1.0, 2.0, 3.0], sample_weight=[1.0, 0.0, 2.0])
    u2 = mean.update_state([[5.0]])
    u3 = total.update_state([[1.0, 2.0], [4.0, 5.0]])
    run(u1, u2, u3)
    np.testing.assert_allclose(run(mean.result(), total.result()), [(1 + 6 + 5) / 4, 12])
    assert [v.name for v in mean.variables] == ["mean/total:0", "mean/count:0"]
    assert not mean.trainable_weights
    mean.reset_states()
    assert run(mean.result()) == [0.0]  # div_no_nan: empty is 0
    value = mean([2.0, 4.0])
    assert run(value) == [3.0]


def np_auc_roc(labels, scores, w, n=200):
    thresholds = np.array([-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7])
    above = scores[None, :] > thresholds[:, None]
    tp = (above & labels).astype(float) @ w
    fp = (above & ~labels).astype(float) @ w
    fn = (~above & labels).astype(float) @ w
    tn = (~above & ~labels).astype(float) @ w
    tpr, fpr = tp / (tp + fn), fp / (fp + tn)
    return np.sum((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2)


def test_confusion_metrics_precision_recall_auc():
    labels = RNG.rand(50) > 0.5
    scores = np.clip(labels * 0.3 + RNG.rand(50) * 0.7, 0, 1).astype(np.float32)
    w = RNG.rand(50).astype(np.float32)
    ms = [M.TruePositives(), M.FalsePositives(thresholds=[0.2, 0.7]), M.TrueNegatives(),
          M.FalseNegatives(), M.Precision(), M.Recall(thresholds=[0.3, 0.6]), M.AUC()]
    y = labels.astype(np.float32)
    halves = [slice(0, 25), slice(25, 50)]
    run(*[m.update_state(y[h], scores[h], sample_weight=w[h]) for m in ms for h in halves])
    tp, fp, tn, fn, prec, rec, auc = run(*[m.result() for m in ms])
    pos = scores > 0.5
    np.testing.assert_allclose(tp, w[pos & labels].sum(), rtol=1e-5)
    np.testing.assert_allclose(fp, [w[(scores > t) & ~labels].sum() for t in (0.2, 0.7)],
                               rtol=1e-5)
    np.testing.assert_allclose(tn, w[~pos & ~labels].sum(), rtol=1e-5)
    np.testing.assert_allclose(fn, w[~pos & labels].sum(), rtol=1e-5)
    np.testing.assert_allclose(prec, w[pos & labels].sum() / w[pos].sum(), rtol=1e-5)
    np.testing.assert_allclose(
        rec, [w[(scores > t) & labels].sum() / w[labels].sum() for t in (0.3, 0.6)], rtol=1e-5)
    np.testing.assert_allclose(auc, np_auc_roc(labels, scores, w), rtol=1e-5)
    perfect = M.AUC()
    run(perfect.update_state([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9]))
    np.testing.assert_allclose(run(perfect.result())[0], 1.0, rtol=1e-6)


def test_precision_top_k_and_class_id():
    y = np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 1]]
    p = RNG.rand(5, 4).astype(np.float32)
    top2, cls1 = M.Precision(top_k=2), M.Recall(class_id=1)
    run(top2.update_state(y, p), cls1.update_state(y, p))
    in_top = p >= np.sort(p, axis=1)[:, -2:-1]
    np.testing.assert_allclose(run(top2.result())[0], (in_top & (y > 0)).sum() / in_top.sum(),
                               rtol=1e-6)
    hits = (p[:, 1] > 0.5) & (y[:, 1] > 0)
    np.testing.assert_allclose(run(cls1.result())[0], hits.sum() / (y[:, 1] > 0).sum())


def test_wrapper_metrics_against_numpy():
    ids = RNG.randint(0, 4, 8)
    onehot = np.eye(4, dtype=np.float32)[ids]
    p = RNG.rand(8, 4).astype(np.float32)
    w = RNG.rand(8).astype(np.float32)
    cases = [
        (M.CategoricalAccuracy(), onehot, (p.argmax(1) == ids).astype(float)),
        (M.SparseCategoricalAccuracy(), ids, (p.argmax(1) == ids).astype(float)),
        (M.TopKCategoricalAccuracy(k=2), onehot,
         (np.argsort(-p, 1)[:, :2] == ids[:, None]).any(1).astype(float)),
        (M.SparseTopKCategoricalAccuracy(2), ids,
         (np.argsort(-p, 1)[:, :2] == ids[:, None]).any(1).astype(float)),
        (M.MeanSquaredError(), onehot, ((p - onehot) ** 2).mean(1)),
        (M.LogCoshError(), onehot, np.log(np.cosh(p - onehot)).mean(1)),
        (M.CosineSimilarity(), onehot, (p * onehot).sum(1) / np.linalg.norm(p, axis=1)),
    ]
    run(*[m.update_state(t, p, sample_weight=w) for m, t, _ in cases])
    got = run(*[m.result() for m, _, _ in cases])
    for (m, _, per_sample), value in zip(cases, got):
        np.testing.assert_allclose(value, (per_sample * w).sum() / w.sum(), rtol=1e-5,
                                   err_msg=m.name)
    rmse = M.RootMeanSquaredError()
    run(rmse.update_state(onehot, p))
    np.testing.assert_allclose(run(rmse.result())[0], np.sqrt(((p - onehot) ** 2).mean()),
                               rtol=1e-5)
    bacc = M.BinaryAccuracy(threshold=0.3)
    assert bacc.get_config() == {"threshold": 0.3, "name": "binary_accuracy", "dtype": "float32"}
    assert run(bacc([[1.0], [0.0]], [[0.4], [0.35]]))[0] == 0.5


def test_config_round_trip_and_errors():
    auc = M.AUC(num_thresholds=50, curve="PR", name="pr")
    copy = M.deserialize(M.serialize(auc))
    assert isinstance(copy, M.AUC) and copy.curve == "PR" and copy.num_thresholds == 50
    with pytest.raises(ValueError, match="curve"):
        M.AUC(curve="XY")
    with pytest.raises(ValueError, match="num_thresholds"):
        M.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match="Threshold"):
        M.Precision(thresholds=[1.5])
    with pytest.raises(TypeError, match="Unexpected"):
        M.CategoricalAccuracy(k=3)
    with pytest.raises(ValueError, match="Unknown metric"):
        M.deserialize({"class_name": "Nope", "config": {}})


def test_compile_with_metric_objects_reports_the_epoch_state():
    x = RNG.rand(40, 3).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 1.5).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid",
                                                       input_shape=(3,))])
    auc = M.AUC(name="auc")
    model.compile("sgd", "binary_crossentropy", metrics=[auc, M.BinaryAccuracy, "accuracy"])
    assert model.metrics_names == ["loss", "auc", "binary_accuracy", "acc"]
    loss, got_auc, got_bacc, acc = model.evaluate(x, y, batch_size=7, verbose=0)
    pred = model.predict(x)[:, 0]
    labels = y[:, 0] > 0
    np.testing.assert_allclose(got_auc, np_auc_roc(labels, pred, np.ones(40)), rtol=1e-4)
    np.testing.assert_allclose(got_bacc, ((pred > 0.5) == labels).mean(), rtol=1e-6)
    np.testing.assert_allclose(acc, got_bacc, rtol=1e-6)
    # A second evaluate starts from reset state: the same values.
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=7, verbose=0)[1], got_auc)
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert set(history.history) >= {"loss", "auc", "binary_accuracy"}
    assert 0.0 <= history.history["auc"][-1] <= 1.0


def test_save_and_load_a_model_compiled_with_loss_and_metric_objects(tmp_path):
    x = RNG.rand(20, 3).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 1.5).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid",
                                                       input_shape=(3,))])
    model.compile("sgd", tf.keras.losses.BinaryCrossentropy(label_smoothing=0.1),
                  metrics=[M.AUC(num_thresholds=50, name="auc"), M.Precision(), "mae"])
    before = model.evaluate(x, y, verbose=0)
    path = str(tmp_path / "model.h5")
    tf.keras.models.save_model(model, path)
    loaded = tf.keras.models.load_model(path)
    assert loaded.metrics_names == ["loss", "auc", "precision", "mae"]
    assert isinstance(loaded.loss, tf.keras.losses.BinaryCrossentropy)
    np.testing.assert_allclose(loaded.evaluate(x, y, verbose=0), before, rtol=1e-5)


def test_mean_iou_relative_error_and_mean_tensor():
    yt = np.array([0, 0, 1, 1, 2, 1])
    yp = np.array([0, 1, 1, 1, 2, 2])
    w = np.array([1.0, 2.0, 1.0, 0.5, 1.0, 1.0], np.float32)
    iou = M.MeanIoU(num_classes=4)  # class 3 never appears: left out of the mean
    run(iou.update_state(yt, yp, sample_weight=w))
    cm = np.zeros((4, 4))
    np.add.at(cm, (yt, yp), w)
    union = cm.sum(0) + cm.sum(1) - np.diag(cm)
    want = (np.diag(cm)[union > 0] / union[union > 0]).mean()
    np.testing.assert_allclose(run(iou.result())[0], want, rtol=1e-6)
    a, b = RNG.rand(4, 2).astype(np.float32), RNG.rand(4, 2).astype(np.float32)
    norm = np.array([[1.0, 0.0], [2.0, 2.0], [0.5, 1.0], [1.0, 4.0]], np.float32)
    mre = M.MeanRelativeError(normalizer=norm)
    run(mre.update_state(a, b))
    rel = np.where(norm > 0, np.abs(b - a) / np.where(norm > 0, norm, 1), 0)
    np.testing.assert_allclose(run(mre.result())[0], rel.mean(), rtol=1e-5)
    mt = M.MeanTensor()
    with pytest.raises(ValueError, match="any result"):
        mt.result()
    run(mt.update_state(a), mt.update_state(b, sample_weight=[[2.0], [0.0], [1.0], [1.0]]))
    wb = np.array([[2.0], [0.0], [1.0], [1.0]])
    np.testing.assert_allclose(run(mt.result())[0], (a + b * wb) / (1 + wb), rtol=1e-5)
    with pytest.raises(ValueError, match="same shape"):
        mt.update_state(np.ones((2, 2), np.float32))


def test_metric_objects_cover_whole_epochs_with_generators():
    x = RNG.rand(21, 3).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 1.5).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid",
                                                       input_shape=(3,))])
    model.compile("sgd", "binary_crossentropy", metrics=[M.AUC(name="auc")])

    def batches():
        while True:
            for start in range(0, 21, 5):
                yield x[start:start + 5], y[start:start + 5]

    _, got = model.evaluate_generator(batches(), steps=5)
    want = np_auc_roc(y[:, 0] > 0, model.predict(x)[:, 0], np.ones(21))
    np.testing.assert_allclose(got, want, rtol=1e-4)  # not a mean of per-batch AUCs
    history = model.fit_generator(batches(), steps_per_epoch=5, epochs=1, verbose=0)
    assert 0.0 <= history.history["auc"][0] <= 1.0
