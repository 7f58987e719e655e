"""tf.keras.callbacks BaseLogger, ProgbarLogger, RemoteMonitor (loopback server only) and
CallbackList."""

import http.server
import json
import threading
import urllib.parse

import numpy as np
import pytest

import tensorflux as tf

C = tf.keras.callbacks
RNG = np.random.RandomState(0)


def small_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(tf.keras.optimizers.SGD(0.05), "mse", metrics=["mae"])
    return model


def test_base_logger_averages_batches_like_fit():
    x, y = RNG.rand(10, 3).astype(np.float32), RNG.rand(10, 1).astype(np.float32)
    batches = []
    recorder = C.LambdaCallback(on_batch_end=lambda b, logs: batches.append(dict(logs)))
    logger = C.BaseLogger(stateful_metrics=["mae"])
    epochs = []
    after = C.LambdaCallback(on_epoch_end=lambda e, logs: epochs.append(dict(logs)))
    small_model().fit(x, y, batch_size=4, epochs=1, verbose=0,
                      callbacks=[recorder, logger, after])
    sizes = np.array([b["size"] for b in batches])
    assert sizes.tolist() == [4, 4, 2]
    want_loss = (np.array([b["loss"] for b in batches]) * sizes).sum() / 10
    np.testing.assert_allclose(epochs[0]["loss"], want_loss, rtol=1e-6)
    assert epochs[0]["mae"] == batches[-1]["mae"]  # stateful: the last batch's value


def test_callback_list_dispatches_and_progbar_prints(capsys):
    calls = []

    class Recorder(C.Callback):
        def on_epoch_end(self, epoch, logs=None):
            calls.append(("epoch_end", epoch, logs))

        def on_train_begin(self, logs=None):
            calls.append(("train_begin", logs))

    box = C.CallbackList([Recorder()])
    box.append(Recorder())
    box.set_params({"epochs": 2})
    box.on_train_begin()
    box.on_epoch_end(3, {"loss": 1.0})
    box.on_test_batch_end(0)
    assert calls == [("train_begin", {}), ("train_begin", {}),
                     ("epoch_end", 3, {"loss": 1.0}), ("epoch_end", 3, {"loss": 1.0})]
    assert len(box) == 2 and all(c.params == {"epochs": 2} for c in box)

    bar = C.ProgbarLogger(count_mode="samples")
    bar.set_params({"epochs": 2, "verbose": 2, "samples": 8, "metrics": ["loss"]})
    bar.on_train_begin()
    bar.on_epoch_begin(0)
    bar.on_batch_end(0, {"size": 8, "loss": 0.5})
    bar.on_epoch_end(0, {"loss": 0.5, "other": 3.0})
    out = capsys.readouterr().out
    assert out.startswith("Epoch 1/2\n8/8 - ") and "loss: 0.5000" in out and "other" not in out
    with pytest.raises(ValueError, match="count_mode"):
        C.ProgbarLogger(count_mode="rows")


def test_remote_monitor_posts_to_a_loopback_server():
    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server hook name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, self.headers["Content-Type"], body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        root = f"http://127.0.0.1:{server.server_address[1]}"
        x, y = RNG.rand(6, 3).astype(np.float32), RNG.rand(6, 1).astype(np.float32)
        small_model().fit(x, y, epochs=2, verbose=0,
                          callbacks=[C.RemoteMonitor(root=root, path="/p/")])
        as_json = C.RemoteMonitor(root=root, path="/j/", send_as_json=True)
        as_json.on_epoch_end(7, {"loss": np.float32(0.25)})
    finally:
        server.shutdown()
        server.server_close()
    assert [r[0] for r in received] == ["/p/", "/p/", "/j/"]
    form = urllib.parse.parse_qs(received[1][2].decode())
    sent = json.loads(form["data"][0])
    assert sent["epoch"] == 1 and set(sent) == {"epoch", "loss", "mae"}
    assert received[2][1] == "application/json"
    assert json.loads(received[2][2]) == {"epoch": 7, "loss": 0.25}


def test_remote_monitor_refuses_non_loopback_roots():
    monitor = C.RemoteMonitor(root="http://example.com:9000")  # accepted until used
    assert monitor.root == "http://example.com:9000"
    with pytest.raises(ValueError, match="loopback"):
        monitor.on_train_begin()
    with pytest.raises(ValueError, match="loopback"):
        monitor.on_epoch_end(0, {"loss": 1.0})
