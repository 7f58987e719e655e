"""`tf.keras.callbacks`: hooks `fit` calls around epochs and batches.

`fit` calls `set_model`, `set_params`, `on_train_begin`, then per epoch `on_epoch_begin`,
`on_batch_begin`/`on_batch_end` per batch (logs: batch, size, loss, metrics) and
`on_epoch_end` (logs: the epoch's metrics, `val_` ones included), then `on_train_end`.
A callback stops training by setting `model.stop_training = True`.
"""

from __future__ import annotations

import csv

import numpy as np

from tensorflux.keras import backend
from tensorflux.ops.io.summary import histogram_proto
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import summary_pb2
from tensorflux.summary.writer import FileWriter

__all__ = [
    "Callback",
    "History",
    "EarlyStopping",
    "ModelCheckpoint",
    "LambdaCallback",
    "TerminateOnNaN",
    "CSVLogger",
    "LearningRateScheduler",
    "ReduceLROnPlateau",
    "TensorBoard",
]


class Callback:
    """Base class: every hook does nothing."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    on_train_batch_begin = on_batch_begin
    on_train_batch_end = on_batch_end


class History(Callback):
    """What `fit` returns: `history[name]` is the list of per-epoch values of each metric."""

    def __init__(self):
        super().__init__()
        self.epoch: list = []
        self.history: dict = {}

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


def _better(mode, monitor):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}.")
    if mode == "max" or (mode == "auto" and ("acc" in monitor or monitor.startswith("fmeasure"))):
        return np.greater, -np.inf
    return np.less, np.inf


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved by `min_delta` for `patience` epochs."""

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0.0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
    ):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, int(patience), verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self._op, self._start = _better(mode, monitor)
        self.min_delta = abs(min_delta) if self._op is np.greater else -abs(min_delta)
        self.stopped_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = self._start if self.baseline is None else self.baseline
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            logging.warning(f"Early stopping conditioned on metric `{self.monitor}` which is "
                            f"not available. Available metrics are: "
                            f"{','.join(list((logs or {}).keys()))}")
            return
        if self._op(current - self.min_delta, self.best):
            self.best, self.wait = current, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print("Restoring model weights from the end of the best epoch.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1:05d}: early stopping")


class ModelCheckpoint(Callback):
    """Saves the model (`save`) or only its weights (`save_weights`, a tf.train.Saver
    checkpoint) to `filepath` (formatted with epoch and logs)."""

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        period=1,
        save_freq="epoch",
    ):
        super().__init__()
        self.save_weights_only = save_weights_only
        if save_freq != "epoch":
            raise ValueError("ModelCheckpoint: only save_freq='epoch' is supported.")
        self.filepath, self.monitor, self.save_best_only = filepath, monitor, save_best_only
        self.verbose = verbose
        self.period = int(period)
        self._op, self.best = _better(mode, monitor)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if (epoch + 1) % self.period:
            return
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                logging.warning(f"Can save best model only with {self.monitor} available, "
                                f"skipping.")
                return
            if not self._op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1:05d}: {self.monitor} did not improve from "
                          f"{self.best:0.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1:05d}: {self.monitor} improved from "
                      f"{self.best:0.5f} to {current:0.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


class LambdaCallback(Callback):
    """A callback from functions: on_epoch_end(epoch, logs), on_batch_end(batch, logs), ..."""

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_batch_begin=None,
        on_batch_end=None,
        on_train_begin=None,
        on_train_end=None,
    ):
        super().__init__()
        for name, fn in (
            ("on_epoch_begin", on_epoch_begin),
            ("on_epoch_end", on_epoch_end),
            ("on_batch_begin", on_batch_begin),
            ("on_batch_end", on_batch_end),
            ("on_train_begin", on_train_begin),
            ("on_train_end", on_train_end),
        ):
            if fn is not None:
                setattr(self, name, fn)


class TerminateOnNaN(Callback):
    """Stops training when a batch loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            self.model.stop_training = True


class CSVLogger(Callback):
    """Writes one CSV row of epoch logs per epoch to `filename`."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.separator, self.append = filename, separator, append

    def on_train_begin(self, logs=None):
        self._file = open(self.filename, "a" if self.append else "w", newline="")  # noqa: SIM115
        self._writer = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self._writer is None:
            self._writer = csv.DictWriter(
                self._file, ["epoch", *sorted(logs)], delimiter=self.separator
            )
            if not self.append:
                self._writer.writeheader()
        self._writer.writerow({"epoch": epoch, **logs})
        self._file.flush()

    def on_train_end(self, logs=None):
        self._file.close()


def _lr_variable(model, who):
    lr = getattr(model.optimizer, "lr", None)
    if lr is None or not hasattr(lr, "load"):
        raise ValueError(
            f'{who}: the optimizer must have a "lr" variable (use a tf.keras.optimizers optimizer).'
        )
    return lr


class LearningRateScheduler(Callback):
    """Sets the learning rate to `schedule(epoch)` (or `schedule(epoch, lr)`) each epoch."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):

        lr = _lr_variable(self.model, "LearningRateScheduler")
        try:
            value = self.schedule(epoch, float(backend.get_value(lr)))
        except TypeError:
            value = self.schedule(epoch)
        if not isinstance(value, (float, int, np.floating, np.integer)):
            raise ValueError(
                f'The output of the "schedule" function should be float, got {value!r}.'
            )
        backend.set_value(lr, float(value))

    def on_epoch_end(self, epoch, logs=None):

        if logs is not None:
            logs["lr"] = float(backend.get_value(self.model.optimizer.lr))


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` after `patience` epochs without improvement
    of `monitor` (by `min_delta`), then waits `cooldown` epochs; never below `min_lr`."""

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
        **kwargs,
    ):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor, self.factor, self.patience = monitor, float(factor), int(patience)
        self.min_delta, self.cooldown, self.min_lr = float(min_delta), int(cooldown), min_lr
        self._op, self._start = _better(mode, monitor)

    def on_train_begin(self, logs=None):
        self.best, self.wait, self.cooldown_counter = self._start, 0, 0

    def on_epoch_end(self, epoch, logs=None):

        lr = _lr_variable(self.model, "ReduceLROnPlateau")
        logs = logs if logs is not None else {}
        logs["lr"] = float(backend.get_value(lr))
        current = logs.get(self.monitor)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        delta = self.min_delta if self._op is np.greater else -self.min_delta
        if self._op(current - delta, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(backend.get_value(lr))
                if old > self.min_lr:
                    backend.set_value(lr, max(old * self.factor, self.min_lr))
                    self.cooldown_counter, self.wait = self.cooldown, 0


class TensorBoard(Callback):
    """Writes TensorBoard event files to `log_dir`: the graph (`write_graph`), each epoch's
    logs as scalars (tag = the log name, step = the epoch; with `update_freq='batch'` or an
    int, also `batch_<name>` scalars every that many samples), and every `histogram_freq`
    epochs a histogram of each weight."""

    def __init__(
        self,
        log_dir="./logs",
        histogram_freq=0,
        batch_size=32,
        write_graph=True,
        write_grads=False,
        write_images=False,
        update_freq="epoch",
        **kwargs,
    ):
        super().__init__()
        if update_freq not in ("epoch", "batch") and not isinstance(update_freq, int):
            raise ValueError(
                f"TensorBoard: update_freq must be 'epoch', 'batch' or an int, got {update_freq!r}"
            )
        self.log_dir, self.histogram_freq = str(log_dir), int(histogram_freq or 0)
        self.batch_size, self.write_graph, self.update_freq = batch_size, write_graph, update_freq
        self.writer = None
        self._samples = self._written_at = 0

    def set_model(self, model):

        super().set_model(model)
        graph = model.weights[0].graph if self.write_graph and model.weights else None
        self.writer = FileWriter(self.log_dir, graph=graph)

    def _write_scalars(self, logs, step, prefix=""):

        summary = summary_pb2.Summary()
        for name, value in logs.items():
            if name in ("batch", "size") or not np.isscalar(value):
                continue
            summary.value.add(tag=prefix + name, simple_value=float(value))
        self.writer.add_summary(summary, step)

    def on_batch_end(self, batch, logs=None):
        if self.update_freq == "epoch" or self.writer is None:
            return
        logs = logs or {}
        self._samples += int(logs.get("size", 1))
        every = 1 if self.update_freq == "batch" else self.update_freq
        if self.update_freq == "batch" or self._samples - self._written_at >= every:
            self._write_scalars(logs, self._samples, prefix="batch_")
            self._written_at = self._samples

    on_train_batch_end = on_batch_end

    def on_epoch_end(self, epoch, logs=None):

        if self.writer is None:
            return
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            summary = summary_pb2.Summary()
            for var, value in zip(self.model.weights, self.model.get_weights()):
                summary.value.add(tag=var.op.name, histo=histogram_proto(np.asarray(value)))
            self.writer.add_summary(summary, epoch)
        self._write_scalars(logs or {}, epoch)
        self.writer.flush()

    def on_train_end(self, logs=None):
        if self.writer is not None:
            self.writer.close()


from tensorflux.keras.callbacks_logging import *  # noqa: E402, F403
from tensorflux.keras.callbacks_logging import __all__ as _logging_all  # noqa: E402

__all__ += _logging_all
