"""tf.keras.callbacks driven by Model.fit."""

import numpy as np
import pytest

import tensorflux as tf

K = tf.keras


def _model():
    model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
    model.compile(K.optimizers.SGD(0.1), "mse")
    return model


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(40, 2).astype(np.float32)
    return x, x @ np.array([[1.0], [2.0]], np.float32)


def test_hooks_order_and_batch_logs():
    events = []
    callback = K.callbacks.LambdaCallback(
        on_train_begin=lambda logs: events.append("train_begin"),
        on_epoch_end=lambda epoch, logs: events.append(("epoch", epoch, sorted(logs))),
        on_batch_end=lambda batch, logs: events.append(("batch", batch, logs["size"])),
        on_train_end=lambda logs: events.append("train_end"))
    x, y = _data()
    model = _model()
    model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[callback],
              validation_data=(x, y))
    assert events == ["train_begin", ("batch", 0, 16), ("batch", 1, 16), ("batch", 2, 8),
                      ("epoch", 0, ["loss", "val_loss"]), ("batch", 0, 16), ("batch", 1, 16),
                      ("batch", 2, 8), ("epoch", 1, ["loss", "val_loss"]), "train_end"]


def test_early_stopping_restores_best_weights():
    x, y = _data()
    model = _model()
    stop = K.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=10.0,
                                     restore_best_weights=True)
    history = model.fit(x, y, epochs=10, batch_size=40, verbose=0, callbacks=[stop])
    assert history.epoch == [0, 1] and stop.stopped_epoch == 1


def test_model_checkpoint_best_only_and_csv_logger(tmp_path):
    x, y = _data()
    model = _model()
    path = str(tmp_path / "w-{epoch:02d}.ckpt")
    log = tmp_path / "log.csv"
    model.fit(x, y, epochs=3, batch_size=40, verbose=0, callbacks=[
        K.callbacks.ModelCheckpoint(path, monitor="loss", save_best_only=True,
                                    save_weights_only=True),
        K.callbacks.CSVLogger(str(log))])
    assert (tmp_path / "w-03.ckpt.index").exists()
    weights = model.get_weights()
    model.set_weights([np.zeros_like(w) for w in weights])
    model.load_weights(str(tmp_path / "w-03.ckpt"))
    np.testing.assert_array_equal(model.get_weights()[0], weights[0])
    rows = log.read_text().splitlines()
    assert rows[0] == "epoch,loss" and len(rows) == 4
    full = str(tmp_path / "model-{epoch}.h5")
    model.fit(x, y, epochs=2, batch_size=40, verbose=0,
              callbacks=[K.callbacks.ModelCheckpoint(full, monitor="loss")])
    restored = K.models.load_model(str(tmp_path / "model-2.h5"))
    for value, ref in zip(restored.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(value, ref)


def test_tensorboard_writes_graph_epoch_scalars_and_histograms(tmp_path):
    import os

    x, y = _data()
    model = _model()
    board = K.callbacks.TensorBoard(log_dir=str(tmp_path), histogram_freq=1,
                                    update_freq="batch")
    history = model.fit(x, y, epochs=2, batch_size=16, verbose=0, callbacks=[board],
                        validation_data=(x, y))
    (event_file,) = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents")]
    scalars, histos, graphs = {}, set(), 0
    for event in tf.train.summary_iterator(str(tmp_path / event_file)):
        graphs += bool(event.graph_def)
        for value in event.summary.value:
            if value.HasField("histo"):
                histos.add((value.tag, event.step))
            else:
                scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    assert graphs == 1
    assert [v for _, v in scalars["loss"]] == pytest.approx(history.history["loss"])
    assert [s for s, _ in scalars["val_loss"]] == [0, 1]
    assert [s for s, _ in scalars["batch_loss"]] == [16, 32, 40, 56, 72, 80]
    kernel = model.weights[0].op.name
    assert {(kernel, 0), (kernel, 1)} <= histos
    with pytest.raises(ValueError, match="update_freq"):
        K.callbacks.TensorBoard(update_freq="sometimes")


def test_terminate_on_nan():
    x, y = _data()
    model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
    model.compile(K.optimizers.SGD(1e6), "mse")
    with np.errstate(all="ignore"):
        history = model.fit(x * 1e3, y, epochs=5, batch_size=8, verbose=0,
                            callbacks=[K.callbacks.TerminateOnNaN()])
    assert len(history.epoch) < 5


def test_learning_rate_scheduler_and_set_value():
    x, y = _data()
    model = _model()
    seen = []
    history = model.fit(x, y, epochs=3, batch_size=40, verbose=0, callbacks=[
        K.callbacks.LearningRateScheduler(lambda epoch: 0.1 / (epoch + 1)),
        K.callbacks.LambdaCallback(on_epoch_begin=lambda epoch, logs: seen.append(
            float(K.backend.get_value(model.optimizer.lr))))])
    np.testing.assert_allclose(seen, [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    np.testing.assert_allclose(history.history["lr"], seen, rtol=1e-6)
    K.backend.set_value(model.optimizer.lr, 0.0)
    before = model.get_weights()
    model.train_on_batch(x, y)
    np.testing.assert_array_equal(model.get_weights()[0], before[0])


def test_reduce_lr_on_plateau():
    x, y = _data()
    model = _model()
    reduce = K.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                           min_lr=0.015)
    K.backend.set_value(model.optimizer.lr, 0.08)
    model.set_weights([np.zeros((2, 1)), np.zeros(1)])
    history = model.fit(x, y * 0, epochs=5, batch_size=40, verbose=0, callbacks=[reduce])
    np.testing.assert_allclose(history.history["lr"], [0.08, 0.08, 0.04, 0.02, 0.015],
                               rtol=1e-6)
    model.compile(tf.train.GradientDescentOptimizer(0.1), "mse")
    with pytest.raises(ValueError, match='must have a "lr" variable'):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[K.callbacks.ReduceLROnPlateau()])


def test_model_checkpoint_verbose_reports_each_save_as_keras_does(tmp_path, capsys):
    x, y = _data()
    model = _model()
    losses = []
    path = str(tmp_path / "cp.ckpt")
    model.fit(x, y, epochs=2, batch_size=40, verbose=0, callbacks=[
        K.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: losses.append(logs["loss"])),
        K.callbacks.ModelCheckpoint(path, monitor="loss", save_weights_only=True, verbose=1)])
    out = capsys.readouterr().out
    assert out == (f"\nEpoch 00001: saving model to {path}\n"
                   f"\nEpoch 00002: saving model to {path}\n")
    # save_best_only: "improved from inf", then "did not improve" when the loss goes up.
    model = _model()
    best = K.callbacks.ModelCheckpoint(path, monitor="loss", save_best_only=True,
                                       save_weights_only=True, verbose=1)
    best.set_model(model)
    best.on_epoch_end(0, {"loss": 0.5})
    best.on_epoch_end(1, {"loss": 0.75})
    best.on_epoch_end(2, {"loss": 0.25})
    assert capsys.readouterr().out.splitlines()[1::2] == [
        f"Epoch 00001: loss improved from inf to 0.50000, saving model to {path}",
        "Epoch 00002: loss did not improve from 0.50000",
        f"Epoch 00003: loss improved from 0.50000 to 0.25000, saving model to {path}"]
    assert losses[1] < losses[0]


def test_early_stopping_verbose_announces_the_stop(capsys):
    x, y = _data()
    model = _model()
    stop = K.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=10.0,
                                     restore_best_weights=True, verbose=1)
    model.fit(x, y, epochs=10, batch_size=40, verbose=0, callbacks=[stop])
    assert capsys.readouterr().out.splitlines() == [
        "Restoring model weights from the end of the best epoch.", "Epoch 00002: early stopping"]


def test_fit_and_evaluate_print_keras_progress_lines(capsys):
    x, y = _data()
    model = _model()
    history = model.fit(x[:30], y[:30], epochs=2, batch_size=10, verbose=1,
                        validation_data=(x[30:], y[30:]))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Train on 30 samples, validate on 10 samples"
    assert lines[1] == "Epoch 1/2" and lines[3] == "Epoch 2/2" and len(lines) == 5
    for line, epoch in ((lines[2], 0), (lines[4], 1)):
        assert line.startswith("30/30 [" + "=" * 30 + "] - ")
        logs = {k: history.history[k][epoch] for k in ("loss", "val_loss")}
        expected = "".join(f" - {k}: {v:.4f}" if abs(v) > 1e-3 else f" - {k}: {v:.4e}"
                           for k, v in logs.items())
        assert line.endswith(expected)
    model.fit(x, y, epochs=1, batch_size=40, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/1" and lines[1].startswith("40/40 - ")
    loss = model.evaluate(x, y, verbose=1)
    line = capsys.readouterr().out.strip()
    assert line.startswith("40/40 [") and line.endswith(
        f" - loss: {loss:.4f}" if abs(loss) > 1e-3 else f" - loss: {loss:.4e}")
