"""Keras logging callbacks (TF 1.15): `BaseLogger` (epoch averages of the batch metrics),
`ProgbarLogger` (the progress lines), `RemoteMonitor` (epoch logs POSTed to a server; only a
loopback server here) and `CallbackList` (a container dispatching every hook)."""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
import urllib.request

import numpy as np

from tensorflux.keras.callbacks import Callback
from tensorflux.keras.engine import progress
from tensorflux.platform import tf_logging as logging

__all__ = ["BaseLogger", "ProgbarLogger", "RemoteMonitor", "CallbackList"]

_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_batch_begin",
          "on_batch_end", "on_train_batch_begin", "on_train_batch_end", "on_test_begin",
          "on_test_end", "on_test_batch_begin", "on_test_batch_end", "on_predict_begin",
          "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end")


class CallbackList:
    """Dispatches each hook to every callback in order.

    Args:
        callbacks: the callbacks (a list, copied).
        queue_length: accepted for compatibility (TF 1.x timed slow batches with it).
    """

    def __init__(self, callbacks=None, queue_length=10):
        self.callbacks = list(callbacks or [])
        self.queue_length = queue_length
        self.params, self.model = {}, None

    def append(self, callback):
        self.callbacks.append(callback)

    def set_params(self, params):
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model):
        self.model = model
        for callback in self.callbacks:
            callback.set_model(model)

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self):
        return len(self.callbacks)

    def _dispatch(self, hook, *args):
        for callback in self.callbacks:
            method = getattr(callback, hook, None)
            if method is not None:
                method(*args)


def _dispatcher(hook):
    if hook.endswith(("_begin", "_end")) and "batch" not in hook and "epoch" not in hook:
        def method(self, logs=None):
            self._dispatch(hook, logs if logs is not None else {})
    else:
        def method(self, index, logs=None):
            self._dispatch(hook, index, logs if logs is not None else {})
    method.__name__ = hook
    method.__doc__ = f"Calls `{hook}` of every callback."
    return method


for _hook in _HOOKS:
    setattr(CallbackList, _hook, _dispatcher(_hook))


class BaseLogger(Callback):
    """Replaces the metrics in each epoch's logs by their batch-size-weighted means over the
    epoch's batches; `stateful_metrics` keep their last batch value."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])
        self.seen, self.totals = 0, {}

    def on_epoch_begin(self, epoch, logs=None):
        self.seen, self.totals = 0, {}

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        size = logs.get("size", 0)
        self.seen += size
        for name, value in logs.items():
            if name in ("batch", "size"):
                continue
            if name in self.stateful_metrics:
                self.totals[name] = value
            else:
                self.totals[name] = self.totals.get(name, 0.0) + value * size

    on_train_batch_end = on_batch_end

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        for name in self.params.get("metrics", []):
            if name in self.totals:
                logs[name] = (self.totals[name] if name in self.stateful_metrics
                              else self.totals[name] / max(self.seen, 1))


class ProgbarLogger(Callback):
    """Prints "Epoch i/n" as each epoch begins and the epoch's progress line (verbose 1) or
    summary (verbose 2) as it ends, counting `count_mode` 'samples' or 'steps'."""

    def __init__(self, count_mode="samples", stateful_metrics=None):
        super().__init__()
        if count_mode not in ("samples", "steps"):
            raise ValueError(f"Unknown `count_mode`: {count_mode}")
        self.use_steps = count_mode == "steps"
        self.stateful_metrics = set(stateful_metrics or [])
        self.seen, self.began, self.epochs, self.verbose = 0, 0.0, 0, 1

    def on_train_begin(self, logs=None):
        self.verbose = self.params.get("verbose", 1)
        self.epochs = self.params.get("epochs", 1)

    def on_epoch_begin(self, epoch, logs=None):
        self.seen, self.began = 0, time.time()
        if self.verbose:
            sys.stdout.write(f"Epoch {epoch + 1}/{self.epochs}\n")

    def on_batch_end(self, batch, logs=None):
        self.seen += 1 if self.use_steps else (logs or {}).get("size", 0)

    on_train_batch_end = on_batch_end

    def on_epoch_end(self, epoch, logs=None):
        if not self.verbose:
            return
        names = self.params.get("metrics", [])
        shown = {n: v for n, v in (logs or {}).items() if n in names} if names else dict(
            logs or {})
        count = self.params.get("steps" if self.use_steps else "samples") or self.seen
        sys.stdout.write(progress.epoch_line(count, time.time() - self.began, shown,
                                             self.verbose,
                                             unit="step" if self.use_steps else "sample"))


_LOOPBACK = ("localhost", "127.0.0.1", "::1")


class RemoteMonitor(Callback):
    """POSTs `{"epoch": i, <logs>}` to `root + path` at each epoch end: as a JSON body with
    `send_as_json`, else as the form field `field` holding the JSON.

    Only loopback servers (localhost, 127.0.0.1, ::1) are reachable from tensorflux: another
    `root` raises ValueError when training starts. An unreachable server logs a warning.
    """

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data",
                 headers=None, send_as_json=False):
        super().__init__()
        self.root, self.path, self.field = root, path, field
        self.headers = dict(headers or {})
        self.send_as_json = send_as_json

    def _check_root(self):
        parsed = urllib.parse.urlparse(self.root)
        if parsed.scheme not in ("http", "https") or parsed.hostname not in _LOOPBACK:
            raise ValueError(f"RemoteMonitor: root {self.root!r} is not a loopback http(s) "
                             "server; tensorflux only sends to localhost/127.0.0.1/::1.")

    def on_train_begin(self, logs=None):
        self._check_root()

    def on_epoch_end(self, epoch, logs=None):
        self._check_root()
        send = {"epoch": epoch}
        for name, value in (logs or {}).items():
            send[name] = value.item() if isinstance(value, (np.generic, np.ndarray)) else value
        headers = dict(self.headers)
        if self.send_as_json:
            body = json.dumps(send).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
                response.read()
        except OSError:
            logging.warning("Warning: could not reach RemoteMonitor root server at "
                            f"{self.root}")
