"""`tf.estimator.{classifier,regressor}_parse_example_spec` and `tf.estimator.add_metrics`."""

from __future__ import annotations

from tensorflux.estimator.estimator import Estimator
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys, fn_args
from tensorflux.feature_column.dense import make_parse_example_spec
from tensorflux.framework import dtypes
from tensorflux.ops.io.parsing import FixedLenFeature

__all__ = ["classifier_parse_example_spec", "regressor_parse_example_spec", "add_metrics"]


def _parse_spec(feature_columns, label_key, label_spec, weight_column):
    spec = make_parse_example_spec(feature_columns)
    if label_key in spec:
        raise ValueError(f"label should not be used as feature. label_key: {label_key}, "
                         f"features: {sorted(spec)}")
    spec[label_key] = label_spec
    if weight_column is not None:
        if isinstance(weight_column, str):
            spec.setdefault(weight_column, FixedLenFeature((1,), dtypes.float32))
        else:
            spec.update(make_parse_example_spec([weight_column]))
    return spec


def classifier_parse_example_spec(feature_columns, label_key, label_dtype=dtypes.int64,
                                  label_default=None, weight_column=None):
    """The parse_example spec of the feature columns plus a `(1,)` label (and weight).

    Raises:
        ValueError: the label key is also a feature, or label_dtype is not int64/string.
    """
    if label_dtype not in (dtypes.int64, dtypes.string):
        raise ValueError(f"label_dtype should be tf.int64 or tf.string; got {label_dtype}")
    return _parse_spec(feature_columns, label_key,
                       FixedLenFeature((1,), label_dtype, label_default), weight_column)


def regressor_parse_example_spec(feature_columns, label_key, label_dtype=dtypes.float32,
                                 label_default=None, label_dimension=1, weight_column=None):
    """The parse_example spec of the feature columns plus a `(label_dimension,)` label.

    Raises:
        ValueError: the label key is also a feature.
    """
    return _parse_spec(feature_columns, label_key,
                       FixedLenFeature((label_dimension,), label_dtype, label_default),
                       weight_column)


def add_metrics(estimator, metric_fn):
    """A new Estimator whose evaluation adds the metrics of `metric_fn`.

    `metric_fn` takes any of (labels, predictions, features, config) and returns
    `{name: (value, update_op)}`; its names override the estimator's.

    Raises:
        ValueError: metric_fn takes another argument, or does not take predictions.
    """
    args = fn_args(metric_fn)
    unknown = set(args) - {"labels", "predictions", "features", "config"}
    if unknown:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: "
                         f"{sorted(unknown)}")
    if "predictions" not in args:
        raise ValueError(f"metric_fn ({metric_fn}) must include predictions argument.")

    def new_model_fn(features, labels, mode, config):
        spec = estimator.model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        kwargs = {"predictions": spec.predictions}
        if "labels" in args:
            kwargs["labels"] = labels
        if "features" in args:
            kwargs["features"] = features
        if "config" in args:
            kwargs["config"] = config
        metrics = dict(spec.eval_metric_ops)
        metrics.update(metric_fn(**kwargs))
        return EstimatorSpec(**{**spec._asdict(), "eval_metric_ops": metrics})

    return Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir,
                     config=estimator.config)
