"""`tf.contrib.metrics`: the streaming_* metrics and metric aggregation helpers."""

from tensorflux.contrib.metrics.streaming import *  # noqa: F403
from tensorflux.contrib import missing as _missing

__getattr__ = _missing.module_getattr("contrib.metrics", {
    "*": "the tf.metrics equivalent (labels first: tf.metrics.NAME(labels, predictions))",
    "confusion_matrix": "tf.confusion_matrix",
    "cohen_kappa": "not supported",
})
