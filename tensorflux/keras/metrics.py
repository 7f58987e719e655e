"""`tf.keras.metrics`: per-sample metric functions used by `Model.compile(metrics=...)` and the
stateful metric objects of TF 1.13+ (`Metric`, `Mean`, `Accuracy`, `AUC`, ...; see
`metric_state` and `metrics_confusion`)."""

from __future__ import annotations

from tensorflux.framework import tensor_conversion
from tensorflux.keras import custom_objects as custom_object_registry
from tensorflux.keras import losses as _losses
from tensorflux.keras.metric_state import (
    Mean,
    MeanMetricWrapper,
    Metric,
    Reduce,
    Sum,
    broadcast_weights,
)
from tensorflux.keras.metrics_confusion import (
    AUC,
    FalseNegatives,
    FalsePositives,
    MeanIoU,
    Precision,
    Recall,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    TrueNegatives,
    TruePositives,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.nn import core as nn_core

binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
mean_squared_error = mse = MSE = _losses.mean_squared_error
mean_absolute_error = mae = MAE = _losses.mean_absolute_error
mean_absolute_percentage_error = mape = MAPE = _losses.mean_absolute_percentage_error
mean_squared_logarithmic_error = msle = MSLE = _losses.mean_squared_logarithmic_error
hinge, squared_hinge = _losses.hinge, _losses.squared_hinge
categorical_hinge = _losses.categorical_hinge
kullback_leibler_divergence = kld = KLD = kl_divergence = _losses.kullback_leibler_divergence
poisson, logcosh = _losses.poisson, _losses.logcosh
log_cosh = logcosh

__all__ = [
    "binary_accuracy",
    "categorical_accuracy",
    "sparse_categorical_accuracy",
    "top_k_categorical_accuracy",
    "mean_squared_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mse",
    "mae",
    "mape",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "get",
    "accuracy",
    "sparse_top_k_categorical_accuracy",
    "cosine_proximity",
    "mean_squared_logarithmic_error",
    "msle",
    "hinge",
    "squared_hinge",
    "categorical_hinge",
    "kullback_leibler_divergence",
    "kld",
    "poisson",
    "logcosh",
    "Metric",
    "Reduce",
    "Sum",
    "Mean",
    "MeanMetricWrapper",
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "SparseCategoricalAccuracy",
    "TopKCategoricalAccuracy",
    "SparseTopKCategoricalAccuracy",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError",
    "RootMeanSquaredError",
    "Hinge",
    "SquaredHinge",
    "CategoricalHinge",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "KLDivergence",
    "Poisson",
    "LogCoshError",
    "CosineSimilarity",
    "TruePositives",
    "FalsePositives",
    "TrueNegatives",
    "FalseNegatives",
    "Precision",
    "Recall",
    "AUC",
    "MeanIoU",
    "SensitivityAtSpecificity",
    "SpecificityAtSensitivity",
    "MSE", "MAE", "MAPE", "MSLE", "KLD", "kl_divergence", "log_cosh", "cosine",
    "MeanRelativeError",
    "MeanTensor",
    "serialize",
    "deserialize",
]


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Mean over the last axis of (y_pred > threshold) == y_true."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    dtype = y_pred.dtype.base_dtype
    hits = math_ops.equal(math_ops.cast(y_true, dtype), math_ops.cast(y_pred > threshold, dtype))
    return math_ops.reduce_mean(math_ops.cast(hits, dtype), axis=-1)


def categorical_accuracy(y_true, y_pred):
    """1 where argmax(y_pred) == argmax(y_true) (one-hot targets), else 0."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    hits = math_ops.equal(math_ops.argmax(y_true, axis=-1), math_ops.argmax(y_pred, axis=-1))
    return math_ops.cast(hits, y_pred.dtype.base_dtype)


def sparse_categorical_accuracy(y_true, y_pred):
    """1 where argmax(y_pred) equals the integer target, else 0."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    labels = array_ops.reshape(math_ops.cast(y_true, "int64"), [-1])
    hits = math_ops.equal(labels, array_ops.reshape(math_ops.argmax(y_pred, axis=-1), [-1]))
    return math_ops.cast(hits, y_pred.dtype.base_dtype)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    hits = nn_core.in_top_k(y_pred, math_ops.cast(math_ops.argmax(y_true, axis=-1), "int32"), k)
    return math_ops.cast(hits, y_pred.dtype.base_dtype)


def accuracy(y_true, y_pred):
    """1 where y_pred == y_true (elementwise), else 0."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    y_true = math_ops.cast(y_true, y_pred.dtype.base_dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), "float32")


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the integer target is among the k highest scores, else 0."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    labels = math_ops.cast(array_ops.reshape(y_true, [-1]), "int32")
    return math_ops.cast(nn_core.in_top_k(y_pred, labels, k), y_pred.dtype.base_dtype)


def cosine_proximity(y_true, y_pred, axis=-1):
    """cos(y_true, y_pred) along `axis` (the metric: higher is more similar)."""
    return -_losses.cosine_similarity(y_true, y_pred, axis=axis)


cosine = cosine_proximity


def _wrapper(fn, default_name, doc, **defaults):
    """A MeanMetricWrapper class of `fn` with keyword arguments `defaults`."""
    names = list(defaults)

    def __init__(self, *args, name=default_name, dtype=None, **kwargs):
        values = dict(defaults)
        values.update(zip(names, args))
        values.update(kwargs)
        unknown = set(values) - set(defaults)
        if unknown:
            raise TypeError(f"Unexpected argument(s) for {type(self).__name__}: "
                            f"{sorted(unknown)}")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **values)

    return {"__init__": __init__, "__doc__": doc}


def _metric_class(class_name, fn, default_name, doc, **defaults):
    cls = type(class_name, (MeanMetricWrapper,), _wrapper(fn, default_name, doc, **defaults))
    cls.__module__ = __name__
    return cls


Accuracy = _metric_class("Accuracy", accuracy, "accuracy",
                         "How often predictions equal labels.")
BinaryAccuracy = _metric_class("BinaryAccuracy", binary_accuracy, "binary_accuracy",
                               "How often (y_pred > threshold) equals the 0/1 label.",
                               threshold=0.5)
CategoricalAccuracy = _metric_class("CategoricalAccuracy", categorical_accuracy,
                                    "categorical_accuracy",
                                    "How often argmax(y_pred) is the one-hot label's class.")
SparseCategoricalAccuracy = _metric_class(
    "SparseCategoricalAccuracy", sparse_categorical_accuracy, "sparse_categorical_accuracy",
    "How often argmax(y_pred) equals the integer label.")
TopKCategoricalAccuracy = _metric_class(
    "TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy",
    "How often the one-hot label's class is among the k best scores.", k=5)
SparseTopKCategoricalAccuracy = _metric_class(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy",
    "How often the integer label is among the k best scores.", k=5)
MeanSquaredError = _metric_class("MeanSquaredError", mean_squared_error, "mean_squared_error",
                                 "The mean of the squared errors.")
MeanAbsoluteError = _metric_class("MeanAbsoluteError", mean_absolute_error,
                                  "mean_absolute_error", "The mean of the absolute errors.")
MeanAbsolutePercentageError = _metric_class(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "The mean absolute percentage error.")
MeanSquaredLogarithmicError = _metric_class(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "The mean squared logarithmic error.")
Hinge = _metric_class("Hinge", hinge, "hinge", "The mean hinge loss.")
SquaredHinge = _metric_class("SquaredHinge", squared_hinge, "squared_hinge",
                             "The mean squared hinge loss.")
CategoricalHinge = _metric_class("CategoricalHinge", categorical_hinge, "categorical_hinge",
                                 "The mean categorical hinge loss.")
BinaryCrossentropy = _metric_class("BinaryCrossentropy", binary_crossentropy,
                                   "binary_crossentropy", "The mean binary crossentropy.",
                                   from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _metric_class(
    "CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
    "The mean categorical crossentropy.", from_logits=False, label_smoothing=0.0)
SparseCategoricalCrossentropy = _metric_class(
    "SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "The mean sparse categorical crossentropy.",
    from_logits=False, axis=-1)
KLDivergence = _metric_class("KLDivergence", kullback_leibler_divergence,
                             "kullback_leibler_divergence", "The mean KL divergence.")
Poisson = _metric_class("Poisson", poisson, "poisson", "The mean Poisson loss.")
LogCoshError = _metric_class("LogCoshError", logcosh, "logcosh",
                             "The mean log(cosh(y_pred - y_true)).")
CosineSimilarity = _metric_class("CosineSimilarity", cosine_proximity, "cosine_similarity",
                                 "The mean cosine similarity of y_true and y_pred.", axis=-1)


class MeanRelativeError(Mean):
    """The (weighted) mean of |y_pred - y_true| / normalizer (0 where normalizer is 0)."""

    def __init__(self, normalizer, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.normalizer = normalizer

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = math_ops.cast(tensor_conversion.convert_to_tensor(y_pred), self.dtype)
        y_true = math_ops.cast(y_true, self.dtype)
        normalizer = math_ops.cast(self.normalizer, self.dtype)
        error = math_ops.div_no_nan(math_ops.abs(y_pred - y_true), normalizer)
        return super().update_state(error, sample_weight=sample_weight)

    def get_config(self):
        return {"normalizer": self.normalizer, "name": self.name, "dtype": self.dtype}


class MeanTensor(Metric):
    """The elementwise (weighted) mean of the tensors seen (all of one shape, known when the
    first update is built)."""

    def __init__(self, name="mean_tensor", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._shape = None

    def update_state(self, values, sample_weight=None):
        values = math_ops.cast(tensor_conversion.convert_to_tensor(values), self.dtype)
        shape = values.get_shape()
        if not shape.is_fully_defined():
            raise ValueError(f"MeanTensor needs a fully defined shape; got {shape}.")
        if self._shape is None:
            self._shape = tuple(shape.as_list())
            self.total = self.add_weight("total", self._shape)
            self.count = self.add_weight("count", self._shape)
        elif tuple(shape.as_list()) != self._shape:
            raise ValueError(f"MeanTensor input values must always have the same shape. "
                             f"Expected shape (set during the first call): {self._shape}. "
                             f"Got: {tuple(shape.as_list())}")
        weights = array_ops.ones_like(values)
        if sample_weight is not None:
            weights = broadcast_weights(sample_weight, values)
        return control_flow_primitives.group(self._assign_add(self.total, values * weights),
                                             self._assign_add(self.count, weights))

    def result(self):
        if self._shape is None:
            raise ValueError("MeanTensor does not have any result yet. Please call the "
                             "MeanTensor instance or use `.update_state(value)` before "
                             "retrieving the result.")
        return math_ops.div_no_nan(self.total, self.count)


class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean of the squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tensor_conversion.convert_to_tensor(y_pred)
        error = math_ops.squared_difference(y_pred, math_ops.cast(y_true, y_pred.dtype))
        return super().update_state(error, sample_weight=sample_weight)

    def result(self):
        return math_ops.sqrt(math_ops.div_no_nan(self.total, self.count))


_BY_NAME = {
    f.__name__: f
    for f in (
        binary_accuracy,
        categorical_accuracy,
        sparse_categorical_accuracy,
        top_k_categorical_accuracy,
        mean_squared_error,
        mean_absolute_error,
        mean_absolute_percentage_error,
        binary_crossentropy,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
    )
}
_BY_NAME.update({"mse": mse, "mae": mae, "mape": mape, "msle": msle, "kld": kld,
                 "accuracy": accuracy, "cosine_proximity": cosine_proximity,
                 "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
                 "mean_squared_logarithmic_error": msle, "hinge": hinge,
                 "squared_hinge": squared_hinge, "categorical_hinge": categorical_hinge,
                 "kullback_leibler_divergence": kld, "poisson": poisson, "logcosh": logcosh})


def serialize(metric):
    """`{"class_name", "config"}` of a metric object; a function's name."""
    if isinstance(metric, Metric):
        return {"class_name": type(metric).__name__, "config": metric.get_config()}
    return getattr(metric, "__name__", str(metric))


def deserialize(config, custom_objects=None):
    """The metric object of `serialize`'s dict (or the function named `config`)."""
    custom_objects = custom_object_registry.merged(custom_objects)
    if isinstance(config, str):
        return custom_objects.get(config) or get(config)
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret metric config: {config!r}")
    cls = custom_objects.get(config["class_name"]) or globals().get(config["class_name"])
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise ValueError(f"Unknown metric: {config['class_name']!r}")
    return cls.from_config(dict(config.get("config", {})))


def get(identifier):
    """The metric function named `identifier`, or the metric object of a `serialize` dict;
    callables (functions and metric objects) pass through."""
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        custom = custom_object_registry.lookup(identifier)
        if custom is not None:
            return custom
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown metric function: {identifier!r}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric function identifier: {identifier!r}")
