"""`compile`, `fit`, `evaluate` and `predict` for Keras models (graph mode); weight files and
summaries come from `model_persistence`.

`compile` records the optimizer, loss and metrics; the training graph (target placeholder,
loss, metric tensors, train op with the model's updates) is built on first use, once the model
has inputs. Every step is one `session.run` in `backend.get_session()`; training steps feed the
learning phase as true.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from tensorflux.distribute import distribute_lib
from tensorflux.framework import scopes
from tensorflux.keras import backend, losses, metrics, optimizers
from tensorflux.keras.callbacks import History
from tensorflux.keras.engine import progress
from tensorflux.keras.engine.base_layer import keras_history
from tensorflux.keras.engine.model_persistence import PersistenceMixin
from tensorflux.keras.engine.training_generator import (
    GeneratorMixin,
    dataset_batches,
    is_generator_like,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.state import variable_ops as state_variable_ops

__all__ = ["TrainingMixin"]


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _metric_fn(spec, loss_fn, output):
    """(history name, per-sample function) of one `metrics=` entry."""
    if spec in ("accuracy", "acc"):
        name = getattr(loss_fn, "__name__", None) or getattr(
            getattr(loss_fn, "fn", None), "__name__", ""
        )
        last = output.get_shape().as_list()[-1] if output.get_shape().ndims else None
        if name == "binary_crossentropy" or last == 1:
            return "acc", metrics.binary_accuracy
        if name == "sparse_categorical_crossentropy":
            return "acc", metrics.sparse_categorical_accuracy
        return "acc", metrics.categorical_accuracy
    fn = metrics.get(spec)
    return (spec if isinstance(spec, str) else fn.__name__), fn


def _weighted_loss(loss_fn, target, output, weights):
    """The batch loss: sum(per-sample loss * sample weight) / number of loss elements."""
    if isinstance(loss_fn, losses.Loss):
        return loss_fn(target, output, sample_weight=weights)
    per_sample = loss_fn(target, output)
    rank = per_sample.get_shape().ndims
    scale = array_ops.reshape(weights, [-1] + [1] * (rank - 1)) if rank and rank > 1 else weights
    return math_ops.reduce_sum(per_sample * scale) / math_ops.cast(
        array_ops.size(per_sample), per_sample.dtype
    )


class TrainingMixin(PersistenceMixin, GeneratorMixin):
    """Training entry points shared by `Model` and `Sequential`."""

    def _init_training(self):
        self.optimizer = None
        self.loss = None
        self._compiled = False
        self._train = None
        self._saver = None
        self.stop_training = False

    # -- compile ---------------------------------------------------------------------------

    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        metrics=None,
        loss_weights=None,  # noqa: A002
        **kwargs,
    ):
        """Sets the optimizer (name, Keras or tf.train optimizer), loss(es) and metrics.

        With several outputs, `loss`, `loss_weights` and `metrics` may be lists (one entry per
        output) or dicts keyed by output layer name; a single loss applies to every output.
        """
        kwargs.pop("sample_weight_mode", None)
        kwargs.pop("weighted_metrics", None)
        if kwargs:
            raise TypeError(f"Invalid keyword argument(s) in `compile`: {sorted(kwargs)}")
        if loss is None:
            raise ValueError("compile: a `loss` is required to train the model.")
        self.optimizer = optimizers.get(optimizer)
        self.loss = loss
        self._loss_spec, self._loss_weights, self._metric_spec = loss, loss_weights, metrics
        self._compiled = True
        self._train = None
        if self.outputs is not None:
            self._build_training()

    @property
    def metrics_names(self):
        if self._train is None and getattr(self, "_compiled", False) and self.outputs is None:
            names = ["loss"]
            for spec in _as_list(self._metric_spec):
                names.append(
                    "acc"
                    if spec in ("accuracy", "acc")
                    else spec
                    if isinstance(spec, str)
                    else spec.__name__
                )
            return names
        if self._train is None:
            self._build_training()
        return ["loss"] + list(self._train["metric_names"])

    def _output_names(self):
        names = []
        for tensor in self.outputs:
            history = keras_history(tensor)
            names.append(history[0].layer.name if history else tensor.op.name.split("/")[0])
        return names

    def _per_output(self, spec, names, what, default=None):
        """`spec` (one value, a list per output, or a dict by output name) as a list."""
        if isinstance(spec, dict):
            unknown = set(spec) - set(names)
            if unknown:
                raise ValueError(
                    f"Unknown entries in {what} dictionary: {sorted(unknown)}. Only "
                    f"expected the following keys: {names}"
                )
            return [spec.get(n, default) for n in names]
        if isinstance(spec, (list, tuple)) and what != "metrics":
            if len(spec) != len(names):
                raise ValueError(
                    f"When passing a list as {what}, it should have one entry per "
                    f"model output. The model has {len(names)} outputs, but you "
                    f"passed {what}={spec!r}"
                )
            return list(spec)
        if (
            what == "metrics"
            and isinstance(spec, (list, tuple))
            and spec
            and all(isinstance(m, (list, tuple)) for m in spec)
        ):
            if len(spec) != len(names):
                raise ValueError(f"metrics: expected one list per output ({len(names)}).")
            return list(spec)
        return [spec if spec is not None else default for _ in names]

    def _build_training(self):
        names = self._output_names()
        multi = len(names) > 1
        loss_fns = [
            None if spec is None else losses.get(spec)
            for spec in self._per_output(self._loss_spec, names, "loss")
        ]
        scales = self._per_output(self._loss_weights, names, "loss_weights", 1.0)
        metric_specs = [
            _as_list(m) for m in self._per_output(self._metric_spec, names, "metrics", [])
        ]
        graph = self.outputs[0].graph
        targets, terms, metric_names, metric_values, output_losses = [], [], [], [], []
        stateful = []
        with graph.as_default(), graph.name_scope(None):
            weights = array_ops.placeholder(
                self.outputs[0].dtype.base_dtype, shape=[None], name=f"{names[0]}_sample_weights"
            )
            for name, output, loss_fn, scale in zip(names, self.outputs, loss_fns, scales):
                target = array_ops.placeholder(
                    output.dtype.base_dtype, shape=None, name=f"{name}_target"
                )
                targets.append(target)
                if loss_fn is None:
                    continue
                with scopes.name_scope(f"{name}_loss" if multi else "loss"):
                    loss = _weighted_loss(loss_fn, target, output, weights)
                output_losses.append((f"{name}_loss", loss))
                terms.append(loss * scale if scale != 1.0 else loss)
            if not terms:
                raise ValueError("compile: no output has a loss.")
            with scopes.name_scope("loss"):
                total = math_ops.add_n(
                    terms + [math_ops.cast(x, terms[0].dtype) for x in self.losses]
                )
            if multi:
                metric_names += [n for n, _ in output_losses]
                metric_values += [v for _, v in output_losses]
            with scopes.name_scope("metrics"):
                for name, output, target, loss_fn, specs in zip(
                    names, self.outputs, targets, loss_fns, metric_specs
                ):
                    for spec in specs:
                        if isinstance(spec, type) and issubclass(spec, metrics.Metric):
                            spec = spec()
                        if isinstance(spec, metrics.Metric):  # stateful: reset per loop
                            metric_names.append(f"{name}_{spec.name}" if multi else spec.name)
                            stateful.append((len(metric_values), spec))
                            metric_values.append(spec(target, output))
                            continue
                        metric_name, fn = _metric_fn(spec, loss_fn, output)
                        metric_names.append(f"{name}_{metric_name}" if multi else metric_name)
                        metric_values.append(math_ops.reduce_mean(fn(target, output)))
            params = self.trainable_weights
            if not params:
                raise ValueError(f'Model "{self.name}" has no trainable weights to train.')
            with scopes.name_scope("training"):
                step = _minimize_in_replica(self.optimizer, total, params)
                with scopes.control_dependencies([step]):
                    projected = [
                        state_variable_ops.assign(v, v.constraint(v))
                        for v in params
                        if getattr(v, "constraint", None) is not None
                    ]
                train_op = control_flow_primitives.group(step, *projected, *self.updates)
        self._train = {
            "targets": targets,
            "weights": weights,
            "loss": total,
            "metrics": metric_values,
            "metric_names": metric_names,
            "stateful_metrics": stateful,
            "train_op": train_op,
            "loss_fns": loss_fns,
            "names": names,
        }

    def _ensure_training(self, x):
        if not self._compiled:
            raise RuntimeError(
                "You must compile your model before training/testing. Use "
                "`model.compile(optimizer, loss)`."
            )
        self._ensure_inputs(x)
        if self._train is None:
            self._build_training()

    def _ensure_inputs(self, x):
        if self.inputs is None and isinstance(x, dict) and hasattr(self, "_build_dict_input"):
            self._build_dict_input(x)
            return
        if self.inputs is None:
            x = self._input_arrays(x)
            first = np.asarray(_as_list(x)[0] if isinstance(x, (list, tuple)) else x)
            self._build_input(first.shape, None)

    def _input_names(self):
        names = []
        for tensor in self.inputs or []:
            history = keras_history(tensor)
            names.append(history[0].layer.name if history else tensor.op.name.split("/")[0])
        return names

    def _input_arrays(self, x):
        """`x` with a dict (keyed by input layer name) turned into the list of input arrays."""
        if not isinstance(x, dict):
            return x
        if self.inputs is None:
            return list(x.values()) if len(x) > 1 else next(iter(x.values()))
        names = self._input_names()
        missing = [n for n in names if n not in x]
        if missing:
            raise ValueError(f"No data provided for {missing}. Need data for each key in: {names}")
        return [x[n] for n in names]

    # -- feeding ---------------------------------------------------------------------------

    def _inputs_feed(self, x, index):
        x = self._input_arrays(x)
        arrays = _as_list(x) if isinstance(x, (list, tuple)) else [x]
        if len(arrays) != len(self.inputs):
            raise ValueError(
                f'Model "{self.name}" expects {len(self.inputs)} input array(s), '
                f"but it received {len(arrays)}."
            )
        feed = {}
        for tensor, array in zip(self.inputs, arrays):
            array = np.asarray(array)
            want = tensor.get_shape()
            if want.ndims is not None and (
                array.ndim != want.ndims
                or not all(d is None or d == a for d, a in zip(want.as_list()[1:], array.shape[1:]))
            ):
                raise ValueError(
                    f"Error when checking input: expected {tensor.op.name} to have "
                    f"shape {tuple(want.as_list()[1:])} but got array with shape "
                    f"{array.shape[1:]}"
                )
            feed[tensor] = array if index is None else array[index]
        return feed

    def _targets(self, y):
        """The target arrays, one per output (from an array, a list, or a dict by name)."""
        names = self._train["names"]
        if isinstance(y, dict):
            missing = [n for n in names if n not in y]
            if missing:
                raise ValueError(
                    f"No data provided for {missing}. Need data for each key in: {names}"
                )
            arrays = [y[n] for n in names]
        elif len(names) > 1:
            arrays = list(y) if isinstance(y, (list, tuple)) else [y]
            if len(arrays) != len(names):
                raise ValueError(
                    f"Expected {len(names)} target arrays (one per output), got {len(arrays)}."
                )
        else:
            arrays = [y[0] if isinstance(y, (list, tuple)) and len(y) == 1 else y]
        result = []
        for array, output, loss_fn in zip(arrays, self.outputs, self._train["loss_fns"]):
            array = np.asarray(array)
            out = output.get_shape()
            sparse = loss_fn is not None and "sparse" in losses.serialize(loss_fn)
            if out.ndims is not None and array.ndim == out.ndims - 1 and not sparse:
                array = array[..., None]
            result.append(array)
        return result

    def _sample_weights(self, y, sample_weight, class_weight):
        """Per-sample loss weights from `sample_weight` and/or `class_weight` (or None)."""
        if sample_weight is None and class_weight is None:
            return None
        y = y[0]
        count = len(y)
        weights = np.ones(count) if sample_weight is None else np.asarray(sample_weight, np.float64)
        if weights.shape != (count,):
            raise ValueError(f"sample_weight must have shape ({count},), got {weights.shape}.")
        if class_weight is not None:
            classes = (
                np.argmax(y, axis=-1)
                if y.ndim > 1 and y.shape[-1] > 1
                else np.asarray(y).reshape(count, -1)[:, 0]
            ).astype(np.int64)
            missing = set(np.unique(classes).tolist()) - set(class_weight)
            if missing:
                raise ValueError(f"class_weight has no weight for class(es) {sorted(missing)}.")
            table = np.zeros(max(max(class_weight), int(classes.max(initial=0))) + 1)
            table[list(class_weight)] = list(class_weight.values())
            weights = weights * table[classes]
        return weights

    def _num_samples(self, x):
        x = self._input_arrays(x)
        return len(np.asarray(_as_list(x)[0] if isinstance(x, (list, tuple)) else x))

    def _reset_metric_objects(self):
        """Zeroes the state of compile's metric objects (as each fit epoch/evaluate starts)."""
        for _, metric in (getattr(self, "_train", None) or {}).get("stateful_metrics", []):
            metric.reset_states()

    def _metric_states(self, means, last):
        """`means` (loss first) with each metric object's entry replaced by its value after
        the last batch (`last`): a metric object's state already covers every batch."""
        stateful = (getattr(self, "_train", None) or {}).get("stateful_metrics", [])
        if last is None or not stateful:
            return means
        means = np.array(means, dtype=np.float64)
        for index, _ in stateful:
            means[1 + index] = last[1 + index]
        return means

    def _run_batches(
        self, fetches, x, y, batch_size, training, order=None, callbacks=(), names=(), weights=None,
        reset_metrics=True,
    ):
        """Runs `fetches` per batch; returns the batch-size-weighted means of the scalars (a
        metric object's entry: its state after the last batch)."""
        session = backend.get_session()
        count = self._num_samples(x)
        order = np.arange(count) if order is None else order
        totals = np.zeros(len(fetches))
        if reset_metrics:
            self._reset_metric_objects()
        values = None
        phase = backend._learning_phase_placeholder()
        train_op = self._train["train_op"] if training else None
        for batch, start in enumerate(range(0, count, batch_size)):
            index = order[start : start + batch_size]
            for callback in callbacks:
                callback.on_batch_begin(batch, {"batch": batch, "size": len(index)})
            feed = self._inputs_feed(x, index)
            for target, array in zip(self._train["targets"], y):
                feed[target] = array[index]
            feed[self._train["weights"]] = (
                np.ones(len(index)) if weights is None else weights[index]
            )
            if phase is not None and training:
                feed[phase] = True
            run = list(fetches) + ([train_op] if train_op is not None else [])
            values = session.run(run, feed_dict=feed)
            totals += np.asarray(values[: len(fetches)], dtype=np.float64) * len(index)
            if callbacks:
                logs = {"batch": batch, "size": len(index)}
                logs.update(self._logs(names, values[: len(fetches)]))
                for callback in callbacks:
                    callback.on_batch_end(batch, logs)
                if self.stop_training:
                    break
        means = totals / max(count, 1)
        if values is not None and fetches and fetches[0] is self._train["loss"]:
            means = self._metric_states(means, values[: len(fetches)])
        return means

    def _logs(self, names, values, prefix=""):
        return {prefix + n: float(v) for n, v in zip(names, values)}

    # -- public loops ----------------------------------------------------------------------

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose=1,
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
    ):
        """Trains for `epochs` passes over (x, y) in batches; returns a `History`.

        `callbacks` (tf.keras.callbacks objects) see every epoch and batch; one that sets
        `model.stop_training = True` ends training after the current batch. A generator or
        `tf.keras.utils.Sequence` as `x` trains through `fit_generator`.
        """
        x = dataset_batches(x, steps_per_epoch, "fit") or x
        if is_generator_like(x):
            return self.fit_generator(
                x,
                steps_per_epoch=steps_per_epoch,
                epochs=epochs,
                verbose=verbose,
                callbacks=callbacks,
                validation_data=validation_data,
                class_weight=class_weight,
                initial_epoch=initial_epoch,
            )
        self._ensure_training(x)
        x = self._input_arrays(x)
        y = self._targets(y)
        weights = self._sample_weights(y, sample_weight, class_weight)
        batch_size = batch_size or 32
        if validation_data is None and validation_split:
            count = self._num_samples(x)
            cut = int(count * (1.0 - validation_split))
            xs = _as_list(x) if isinstance(x, (list, tuple)) else [x]
            val_x = [np.asarray(a)[cut:] for a in xs]
            validation_data = (
                val_x if isinstance(x, (list, tuple)) else val_x[0],
                [a[cut:] for a in y],
            )
            x = (
                [np.asarray(a)[:cut] for a in xs]
                if isinstance(x, (list, tuple))
                else np.asarray(x)[:cut]
            )
            y = [a[:cut] for a in y]
            weights = None if weights is None else weights[:cut]
        names = ["loss"] + self._train["metric_names"]
        fetches = [self._train["loss"]] + self._train["metrics"]
        history = History()
        callbacks = list(callbacks or []) + [history]
        params = {
            "batch_size": batch_size,
            "epochs": epochs,
            "samples": self._num_samples(x),
            "verbose": verbose,
            "do_validation": validation_data is not None,
            "metrics": names + (["val_" + n for n in names] if validation_data else []),
        }
        for callback in callbacks:
            callback.set_model(self)
            callback.set_params(params)
        self.stop_training = False
        for callback in callbacks:
            callback.on_train_begin({})
        count = self._num_samples(x)
        if verbose and validation_data is not None:
            sys.stdout.write(progress.train_header(count, self._num_samples(validation_data[0])))
        for epoch in range(initial_epoch, epochs):
            began = time.time()
            if verbose:
                sys.stdout.write(f"Epoch {epoch + 1}/{epochs}\n")
            for callback in callbacks:
                callback.on_epoch_begin(epoch, {})
            order = np.random.permutation(count) if shuffle else None
            logs = self._logs(
                names,
                self._run_batches(
                    fetches, x, y, batch_size, True, order, callbacks, names, weights
                ),
            )
            if validation_data is not None:
                val_x, val_y = validation_data[0], self._targets(validation_data[1])
                values = self._run_batches(fetches, val_x, val_y, batch_size, False)
                logs.update(self._logs(names, values, "val_"))
            for callback in callbacks:
                callback.on_epoch_end(epoch, logs)
            if verbose:
                sys.stdout.write(progress.epoch_line(count, time.time() - began, logs, verbose))
            if self.stop_training:
                break
        for callback in callbacks:
            callback.on_train_end({})
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None, steps=None):
        """The loss (and metrics) over (x, y): a scalar, or a list when there are metrics.
        `x` may be a tf.data Dataset of (x, y) elements, read for `steps` batches."""
        source = dataset_batches(x, steps, "evaluate")
        if source is not None:
            return self.evaluate_generator(source, steps, verbose=verbose)
        self._ensure_training(x)
        fetches = [self._train["loss"]] + self._train["metrics"]
        y = self._targets(y)
        began = time.time()
        values = self._run_batches(
            fetches,
            x,
            y,
            batch_size or 32,
            False,
            weights=self._sample_weights(y, sample_weight, None),
        )
        if verbose:
            names = ["loss"] + self._train["metric_names"]
            sys.stdout.write(progress.epoch_line(self._num_samples(x), time.time() - began,
                                                 dict(zip(names, values)), 1))
        values = [float(v) for v in values]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose=0, steps=None):
        """The model outputs for `x`, computed in batches of `batch_size` (32); `x` may be a
        tf.data Dataset, read for `steps` batches."""
        source = dataset_batches(x, steps, "predict")
        if source is not None:
            return self.predict_generator(source, steps)
        self._ensure_inputs(x)
        session = backend.get_session()
        count = self._num_samples(x)
        batch_size = batch_size or 32
        parts = [[] for _ in self.outputs]
        for start in range(0, count, batch_size):
            index = np.arange(start, min(start + batch_size, count))
            for part, value in zip(parts, session.run(self.outputs, self._inputs_feed(x, index))):
                part.append(value)
        results = [np.concatenate(p) if p else np.zeros((0,)) for p in parts]
        return results[0] if len(results) == 1 else results

    def _one_batch(self, x, y, training, sample_weight=None, class_weight=None):
        self._ensure_training(x)
        fetches = [self._train["loss"]] + self._train["metrics"]
        y = self._targets(y)
        values = self._run_batches(
            fetches,
            x,
            y,
            max(self._num_samples(x), 1),
            training,
            weights=self._sample_weights(y, sample_weight, class_weight),
        )
        values = [float(v) for v in values]
        return values[0] if len(values) == 1 else values

    def train_on_batch(self, x, y, sample_weight=None, class_weight=None):
        """One optimizer step on (x, y); returns the loss (and metrics) before the step."""
        return self._one_batch(x, y, True, sample_weight, class_weight)

    def test_on_batch(self, x, y, sample_weight=None):
        return self._one_batch(x, y, False, sample_weight)

    def predict_on_batch(self, x):
        self._ensure_inputs(x)
        values = backend.get_session().run(self.outputs, self._inputs_feed(x, None))
        return values[0] if len(values) == 1 else values


def _minimize_in_replica(optimizer, loss, params):
    """The optimizer step. Compiled inside `strategy.scope()`, the step is built in the
    strategy's replica (its one replica: Keras models are not cloned per replica here).

    Raises:
        NotImplementedError: the strategy has several replicas.
    """
    if not distribute_lib.has_strategy() or not distribute_lib.in_cross_replica_context():
        return optimizer.minimize(loss, var_list=params)
    strategy = distribute_lib.get_strategy()
    if strategy.num_replicas_in_sync > 1:
        raise NotImplementedError(
            f"Keras Model.compile under {type(strategy).__name__} with "
            f"{strategy.num_replicas_in_sync} replicas is not provided (Keras training is "
            f"built for one replica here); use one device, or "
            f"tf.keras.estimator.model_to_estimator with RunConfig(train_distribute=...).")
    return strategy.extended.call_for_each_replica(
        lambda: optimizer.minimize(loss, var_list=params))
