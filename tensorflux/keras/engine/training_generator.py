"""Generator loops: `fit_generator`, `evaluate_generator`, `predict_generator`.

A generator (or a `tf.keras.utils.Sequence`) yields `(x, y)` or `(x, y, sample_weight)`
batches (`x` alone for prediction); each batch is one session step. Epoch logs are the
batch-size-weighted means of the batch losses and metrics, as in `fit`.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from tensorflux.data import cardinality
from tensorflux.data.dataset_ops import Dataset
from tensorflux.data.iterator_ops import Iterator
from tensorflux.framework import errors
from tensorflux.keras import backend
from tensorflux.keras.callbacks import History
from tensorflux.keras.engine import progress
from tensorflux.keras.utils import Sequence

__all__ = ["GeneratorMixin", "is_generator_like", "dataset_batches", "DatasetEpochs"]

_IGNORED = ("max_queue_size", "workers", "use_multiprocessing", "shuffle")


def _sequence_type():

    return Sequence


def is_generator_like(x):
    return isinstance(x, _sequence_type()) or (hasattr(x, "__next__") and hasattr(x, "__iter__"))


def dataset_batches(x, steps, where):
    """A tf.data Dataset or Iterator as a generator of its elements (NumPy values fetched in
    the Keras session), or None when `x` is neither.

    Without `steps`, a finite Dataset is read whole every epoch (as Keras does since TF 1.14):
    it comes back as a `Sequence` that re-initializes its iterator each epoch. An endlessly
    repeating Dataset, or an Iterator, needs `steps`.

    Raises:
        ValueError: `steps` is None for an Iterator or an infinitely repeating Dataset.
    """

    if isinstance(x, Dataset):
        if steps is None:
            if cardinality.static_cardinality(x) == cardinality.INFINITE_CARDINALITY:
                raise ValueError(
                    f"`{where}`: when passing an infinitely repeating dataset, you must "
                    "specify the number of steps (`steps_per_epoch` or `steps`)."
                )
            return DatasetEpochs(x)
        iterator = x.make_one_shot_iterator()
    elif isinstance(x, Iterator):
        iterator = x
    else:
        return None
    if steps is None:
        raise ValueError(
            f"`{where}`: when using a tf.data Iterator as input, "
            "specify the number of steps (`steps_per_epoch` or `steps`)."
        )
    element = iterator.get_next()

    def elements():
        session = backend.get_session()
        while True:
            try:
                value = session.run(element)
            except errors.OutOfRangeError:
                return
            yield tuple(value) if isinstance(value, list) else value

    return elements()


class DatasetEpochs(Sequence):
    """One pass over a finite Dataset per epoch, as a `Sequence` of its elements.

    Its length is the Dataset's static cardinality, or (when that is unknown) the number of
    elements one counting pass finds. The iterator is re-initialized before each epoch, so a
    `shuffle` in the pipeline reshuffles every epoch.
    """

    def __init__(self, dataset):
        self._iterator = dataset.make_initializable_iterator()
        self._element = self._iterator.get_next()
        count = cardinality.static_cardinality(dataset)
        self._length = None if count == cardinality.UNKNOWN_CARDINALITY else int(count)
        self._started = False

    def _run(self, fetch):
        return backend.get_session().run(fetch)

    def __len__(self):
        if self._length is None:
            self._run(self._iterator.initializer)
            count = 0
            while True:
                try:
                    self._run(self._element)
                except errors.OutOfRangeError:
                    break
                count += 1
            self._length = count
            self._started = False
        return self._length

    def __getitem__(self, index):
        if not self._started:
            self._run(self._iterator.initializer)
            self._started = True
        try:
            value = self._run(self._element)
        except errors.OutOfRangeError:
            raise IndexError(f"dataset has no element {index}") from None
        return tuple(value) if isinstance(value, list) else value

    def on_epoch_end(self):
        self._started = False


def _check_kwargs(kwargs, where):
    unknown = sorted(k for k in kwargs if k not in _IGNORED)
    if unknown:
        raise TypeError(f"Invalid keyword argument(s) in `{where}`: {unknown}")


class _Batches:
    """Batches `steps` at a time from a generator or Sequence (restarting a Sequence)."""

    def __init__(self, source, steps, where):
        self.source = source
        self.sequence = isinstance(source, _sequence_type())
        if steps is None:
            if not self.sequence:
                raise ValueError(
                    f"`{where}`: `steps` is required for a generator without `__len__`."
                )
            steps = len(source)
        self.steps = int(steps)
        self._iterator = None

    def epoch(self):
        if self.sequence:
            for index in range(self.steps):
                yield self.source[index % len(self.source)]
            self.source.on_epoch_end()
            return
        if self._iterator is None:
            self._iterator = iter(self.source)
        for _ in range(self.steps):
            try:
                batch = next(self._iterator)
            except StopIteration:  # a finite source (a tf.data Dataset) ran out
                return
            yield batch


def _unpack(batch, where):
    if not isinstance(batch, tuple) or len(batch) not in (2, 3):
        raise ValueError(
            f"`{where}`: output of generator should be a tuple (x, y) or "
            f"(x, y, sample_weight). Found: {type(batch).__name__}"
        )
    return batch if len(batch) == 3 else (*batch, None)


class GeneratorMixin:
    """Generator-driven training entry points of Keras models."""

    def _generator_step(self, batch, training, class_weight=None):
        x, y, sample_weight = _unpack(batch, "fit_generator")
        self._ensure_training(x)
        fetches = [self._train["loss"]] + self._train["metrics"]
        y = self._targets(y)
        weights = self._sample_weights(y, sample_weight, class_weight)
        return self._run_batches(
            fetches, x, y, self._num_samples(x), training, weights=weights, reset_metrics=False
        ), self._num_samples(x)

    def fit_generator(
        self,
        generator,
        steps_per_epoch=None,
        epochs=1,
        verbose=1,
        callbacks=None,
        validation_data=None,
        validation_steps=None,
        class_weight=None,
        initial_epoch=0,
        **kwargs,
    ):
        """Trains on batches from `generator`, `steps_per_epoch` per epoch."""
        _check_kwargs(kwargs, "fit_generator")
        batches = _Batches(generator, steps_per_epoch, "fit_generator")
        history = History()
        callbacks = list(callbacks or []) + [history]
        for callback in callbacks:
            callback.set_model(self)
            callback.set_params(
                {
                    "epochs": epochs,
                    "steps": batches.steps,
                    "verbose": verbose,
                    "do_validation": validation_data is not None,
                }
            )
        self.stop_training = False
        for callback in callbacks:
            callback.on_train_begin({})
        for epoch in range(initial_epoch, epochs):
            began = time.time()
            if verbose:
                sys.stdout.write(f"Epoch {epoch + 1}/{epochs}\n")
            for callback in callbacks:
                callback.on_epoch_begin(epoch, {})
            totals, count, names, values = 0.0, 0, None, None
            self._reset_metric_objects()
            for step, batch in enumerate(batches.epoch()):
                for callback in callbacks:
                    callback.on_batch_begin(step, {"batch": step})
                values, size = self._generator_step(batch, True, class_weight)
                names = ["loss"] + self._train["metric_names"]
                totals, count = totals + values * size, count + size
                logs = {"batch": step, "size": size, **self._logs(names, values)}
                for callback in callbacks:
                    callback.on_batch_end(step, logs)
                if self.stop_training:
                    break
            logs = self._logs(names, self._metric_states(totals / max(count, 1), values))
            if validation_data is not None:
                if is_generator_like(validation_data):
                    values = self.evaluate_generator(validation_data, validation_steps)
                else:
                    values = self.evaluate(*validation_data[:2], verbose=0)
                logs.update(self._logs(names, np.atleast_1d(values), "val_"))
            for callback in callbacks:
                callback.on_epoch_end(epoch, logs)
            if verbose:
                sys.stdout.write(progress.epoch_line(step + 1, time.time() - began, logs,
                                                     verbose, unit="step"))
            if self.stop_training:
                break
        for callback in callbacks:
            callback.on_train_end({})
        return history

    def evaluate_generator(self, generator, steps=None, verbose=0, **kwargs):
        """The loss (and metrics) averaged over `steps` batches of `generator`."""
        _check_kwargs(kwargs, "evaluate_generator")
        totals, count, values = 0.0, 0, None
        self._reset_metric_objects()
        began, batches = time.time(), 0
        for batch in _Batches(generator, steps, "evaluate_generator").epoch():
            values, size = self._generator_step(batch, False)
            totals, count, batches = totals + values * size, count + size, batches + 1
        values = [float(v) for v in np.atleast_1d(
            self._metric_states(totals / max(count, 1), values))]
        if verbose:
            names = ["loss"] + self._train["metric_names"]
            sys.stdout.write(progress.epoch_line(batches, time.time() - began,
                                                 dict(zip(names, values)), 1, unit="step"))
        return values[0] if len(values) == 1 else values

    def predict_generator(self, generator, steps=None, verbose=0, **kwargs):
        """The model outputs for `steps` batches of inputs (or (x, ...) tuples)."""
        _check_kwargs(kwargs, "predict_generator")
        parts = []
        for batch in _Batches(generator, steps, "predict_generator").epoch():
            x = batch[0] if isinstance(batch, tuple) else batch
            self._ensure_inputs(x)
            parts.append(backend.get_session().run(self.outputs, self._inputs_feed(x, None)))
        results = [np.concatenate([p[i] for p in parts]) for i in range(len(self.outputs))]
        return results[0] if len(results) == 1 else results
