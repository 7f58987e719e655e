"""`tf.keras.estimator.model_to_estimator`: an Estimator training a compiled Keras model.

The Estimator's model_fn rebuilds the model from its config in each graph it builds, calls
it on the input_fn's features (a Tensor for one input, else a dict keyed by input layer
name), and uses the model's compiled loss and optimizer; EVAL adds the mean loss and the
compiled metrics' means, PREDICT returns the outputs keyed by output layer name. The Keras
model's current weights are the initial values (used when model_dir has no checkpoint).
"""

from __future__ import annotations

from tensorflux import metrics as metrics_lib
from tensorflux.estimator.estimator import Estimator
from tensorflux.estimator.export_output import PredictOutput
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux.framework.graph import Tensor
from tensorflux.keras import losses as keras_losses
from tensorflux.keras import metrics as keras_metrics
from tensorflux.keras import optimizers as keras_optimizers
from tensorflux.keras.saving import load_model, model_from_config
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.train import training_util
from tensorflux.train.monitored_session import Scaffold

__all__ = ["model_to_estimator"]


def _fresh_optimizer(optimizer):
    """A new optimizer with the same settings (each graph gets its own state)."""
    if isinstance(optimizer, keras_optimizers.Optimizer):
        config = optimizer.get_config()
        return type(optimizer)(**{k: v for k, v in config.items()})
    return optimizer


def _named(value, names, what):
    if isinstance(value, dict):
        missing = [n for n in names if n not in value]
        if missing:
            raise ValueError(f"model_to_estimator: {what} lacks keys {missing}; the model's "
                             f"{what} are {names}.")
        return [value[n] for n in names]
    if len(names) != 1:
        raise ValueError(f"model_to_estimator: the model has {len(names)} {what} {names}; "
                         f"give them as a dict keyed by these names.")
    return [value]


def _loss_fns(loss_spec, names):
    if isinstance(loss_spec, dict):
        return [keras_losses.get(loss_spec[n]) for n in names]
    if isinstance(loss_spec, (list, tuple)):
        return [keras_losses.get(spec) for spec in loss_spec]
    return [keras_losses.get(loss_spec)] * len(names)


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None,
                       model_dir=None, config=None, checkpoint_format="saver"):
    """An Estimator for a compiled Keras model (TF 1.15 `tf.keras.estimator`).

    Args:
        keras_model: a compiled `tf.keras.Model`.
        keras_model_path: instead of keras_model, a file written by `model.save`.
        custom_objects: for loading `keras_model_path`.
        model_dir, config: as for `tf.estimator.Estimator`.
        checkpoint_format: "saver" (the only format tensorflux writes).

    Returns:
        A `tf.estimator.Estimator`.

    Raises:
        ValueError: neither or both of keras_model and keras_model_path; a model that is not
            compiled; another checkpoint_format.
    """
    if keras_model is None and keras_model_path is None:
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if keras_model is not None and keras_model_path is not None:
        raise ValueError("Please specity either `keras_model` or `keras_model_path`, but not "
                         "both.")
    if checkpoint_format != "saver":
        raise ValueError(f"checkpoint_format must be 'saver' in tensorflux; got "
                         f"{checkpoint_format!r}")
    if keras_model is None:
        keras_model = load_model(keras_model_path, custom_objects)
    if not getattr(keras_model, "_compiled", False) or keras_model.optimizer is None:
        raise ValueError("The given keras model has not been compiled yet. Please compile the "
                         "model with `model.compile()` before calling "
                         "`model_to_estimator()`.")
    model_config = keras_model.get_config()
    weights = keras_model.get_weights()
    input_names = keras_model._input_names()
    output_names = keras_model._output_names()
    loss_spec = keras_model._loss_spec
    metric_specs = keras_model._metric_spec
    optimizer = keras_model.optimizer

    def model_fn(features, labels, mode):
        model = model_from_config(model_config, custom_objects)
        inputs = _named(features, input_names, "inputs")
        outputs = model(inputs[0] if len(inputs) == 1 else inputs)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        predictions = dict(zip(output_names, outputs))

        def init_fn(scaffold, session):
            for variable, value in zip(model.weights, weights):
                variable.load(value, session)

        scaffold = Scaffold(init_fn=init_fn)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions, scaffold=scaffold,
                                 export_outputs={"serving_default": PredictOutput(predictions)})
        targets = [cast_ops.cast(t, o.dtype.base_dtype) if isinstance(t, Tensor) else t
                   for t, o in zip(_named(labels, output_names, "outputs"), outputs)]
        terms = [reduction_ops.reduce_mean(fn(t, o))
                 for fn, t, o in zip(_loss_fns(loss_spec, output_names), targets, outputs)]
        terms += list(model.losses)
        loss = terms[0] if len(terms) == 1 else math_ops.add_n(terms)
        if mode == ModeKeys.EVAL:
            eval_metrics = {}
            for name, target, output in zip(output_names, targets, outputs):
                for spec in metric_specs or []:
                    label = spec if isinstance(spec, str) else spec.__name__
                    fn = _metric(spec, loss_spec, output)
                    key = label if len(output_names) == 1 else f"{name}_{label}"
                    eval_metrics[key] = metrics_lib.mean(fn(target, output))
            return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                 eval_metric_ops=eval_metrics, scaffold=scaffold)
        train_op = _fresh_optimizer(optimizer).minimize(
            loss, var_list=model.trainable_weights,
            global_step=training_util.get_global_step())
        updates = list(model.updates)
        if updates:
            train_op = control_flow_ops.group(train_op, *updates)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op,
                             scaffold=scaffold)

    return Estimator(model_fn=model_fn, model_dir=model_dir, config=config)


def _metric(spec, loss_spec, output):
    if spec in ("accuracy", "acc"):
        last = output.shape.as_list()[-1] if output.shape.ndims else None
        loss_name = loss_spec if isinstance(loss_spec, str) else ""
        if loss_name == "binary_crossentropy" or last == 1:
            return keras_metrics.binary_accuracy
        if loss_name == "sparse_categorical_crossentropy":
            return keras_metrics.sparse_categorical_accuracy
        return keras_metrics.categorical_accuracy
    return keras_metrics.get(spec)
