"""`tf.contrib.estimator` extenders (TF 1.15): wrap an Estimator's model_fn to add eval
metrics, forward input features into predictions, or clip gradients."""

from __future__ import annotations

from tensorflux.contrib.estimator.delegating_optimizer import DelegatingOptimizer
from tensorflux.estimator.estimator import Estimator
from tensorflux.estimator.export_output import PredictOutput
from tensorflux.estimator.model_fn import ModeKeys, fn_args
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.math import clip as clip_ops
from tensorflux.ops.sparse import core as sparse_ops
from tensorflux.train.optimizer import Optimizer

__all__ = ["add_metrics", "forward_features", "clip_gradients_by_norm"]

_METRIC_FN_ARGS = ("predictions", "features", "labels", "config")


def _warm_start(estimator):
    return getattr(estimator, "_warm_start_settings", None)


def add_metrics(estimator, metric_fn):
    """A new Estimator whose EVAL spec also has the metrics `metric_fn` returns.

    Args:
        estimator: a tf.estimator.Estimator.
        metric_fn: fn taking some of `predictions`, `features`, `labels`, `config` (by name)
            and returning {name: (value_op, update_op)}; its keys override the model's.

    Returns:
        An Estimator sharing model_dir and config with `estimator`.

    Raises:
        ValueError: metric_fn takes an argument other than those four.
        TypeError: (when evaluating) metric_fn returns something other than a dict.

    Example:
        >>> def my_auc(labels, predictions):
        ...     return {"auc": tf.metrics.auc(labels, predictions["logistic"])}
        >>> estimator = tf.contrib.estimator.add_metrics(estimator, my_auc)
    """
    args = fn_args(metric_fn)
    invalid = set(args) - set(_METRIC_FN_ARGS)
    if invalid:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: "
                         f"{sorted(invalid)}")

    def new_model_fn(features, labels, mode, config):
        spec = estimator.model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        values = {"predictions": spec.predictions, "features": features, "labels": labels,
                  "config": config}
        new_metrics = metric_fn(**{name: values[name] for name in args})
        if not isinstance(new_metrics, dict):
            raise TypeError(f"metric_fn must return a dict of metrics, got "
                            f"{type(new_metrics).__name__}")
        all_metrics = dict(spec.eval_metric_ops or {})
        all_metrics.update(new_metrics)
        return spec._replace(eval_metric_ops=all_metrics)

    return Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir,
                     config=estimator.config, warm_start_from=_warm_start(estimator))


def _key_list(keys):
    if keys is None:
        return None
    if isinstance(keys, str):
        return [keys]
    if not isinstance(keys, list):
        raise TypeError(f"keys should be either a string or a list of strings. Given: "
                        f"{type(keys)}")
    for key in keys:
        if not isinstance(key, str):
            raise TypeError(f"All items in the given keys list should be a string. There exist "
                            f"an item with type: {type(key)}")
    return keys


def forward_features(estimator, keys=None, sparse_default_values=None):
    """A new Estimator whose PREDICT outputs also carry input features (e.g. example ids).

    Args:
        estimator: a tf.estimator.Estimator whose predictions are a dict.
        keys: a feature key or list of keys to forward (default: every feature).
        sparse_default_values: {key: default} for SparseTensor features, made dense with it.

    Returns:
        An Estimator sharing model_dir and config; its predictions (and its "predict" /
        "serving_default" PredictOutput exports) include the forwarded features.

    Raises:
        TypeError: keys is not a string or a list of strings.
        ValueError: (when predicting) features not a dict, a key missing from features or
            already in predictions, a sparse feature without a default.
    """
    keys = _key_list(keys)

    def feature_keys(features):
        if features is None:
            raise ValueError("Features should not be None.")
        if not isinstance(features, dict):
            raise ValueError(f"Features should be a dictionary. Given: {type(features)}")
        return keys if keys is not None else list(features)

    def new_model_fn(features, labels, mode, config):
        spec = estimator.model_fn(features, labels, mode, config)
        if mode != ModeKeys.PREDICT or spec.predictions is None:
            return spec
        predictions = spec.predictions
        if not isinstance(predictions, dict):
            raise ValueError(f"Predictions should be a dict to be able to forward features. "
                             f"Given: {type(predictions)}")
        predictions = dict(predictions)
        for key in feature_keys(features):
            if key not in features:
                raise ValueError(f"keys given in forward_features should be in features dict. "
                                 f"Given keys: {keys}, features.keys: {sorted(features)}")
            if key in predictions:
                raise ValueError(f"Cannot forward feature key ({key}). Since it does exist in "
                                 f"predictions. Existing keys in predictions: "
                                 f"{sorted(predictions)}")
            feature = features[key]
            if not isinstance(feature, SparseTensor):
                feature = convert_to_tensor(feature)
            if sparse_default_values and key in sparse_default_values:
                if not isinstance(feature, SparseTensor):
                    raise ValueError(f"Feature ({key}) is expected to be a `SparseTensor`.")
                feature = sparse_ops.sparse_tensor_to_dense(
                    feature, default_value=sparse_default_values[key])
            if not isinstance(feature, Tensor):
                raise ValueError(f"Feature ({key}) should be a Tensor. Please use `keys` "
                                 f"argument of forward_features to filter unwanted features, or "
                                 f"add key to argument `sparse_default_values`. Type of "
                                 f"features[{key}] is {type(feature)}.")
            predictions[key] = feature
        export_outputs = dict(spec.export_outputs or {})
        for export_key in ("predict", "serving_default"):
            output = export_outputs.get(export_key)
            if isinstance(output, PredictOutput):
                merged = dict(output.outputs)
                merged.update({k: predictions[k] for k in feature_keys(features)})
                export_outputs[export_key] = PredictOutput(merged)
        return spec._replace(predictions=predictions,
                             export_outputs=export_outputs or spec.export_outputs)

    return Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir,
                     config=estimator.config, warm_start_from=_warm_start(estimator))


class _GradientClippingOptimizer(DelegatingOptimizer):
    """Delegates to `optimizer`, clipping each gradient to `clip_norm` first."""

    def __init__(self, optimizer, clip_norm, name="ClipByNorm"):
        super().__init__(optimizer, name)
        self._clip_norm = clip_norm

    def compute_gradients(self, *args, **kwargs):
        grads_and_vars = self._optimizer.compute_gradients(*args, **kwargs)
        return [(None if g is None else clip_ops.clip_by_norm(g, self._clip_norm), v)
                for g, v in grads_and_vars]


def clip_gradients_by_norm(optimizer, clip_norm):
    """An optimizer that clips each gradient to norm `clip_norm` before applying it.

    Raises:
        TypeError: optimizer is not a tf.train.Optimizer.
    """
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizer must be a tf.train.Optimizer, got "
                        f"{type(optimizer).__name__}")
    return _GradientClippingOptimizer(optimizer, clip_norm)
