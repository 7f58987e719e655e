"""`tensorflow.python.ops.metrics_impl`: the `tf.metrics` functions, and the two private helpers
TF1 metric libraries build on (`_streaming_confusion_matrix`, used by e.g. multi-class
precision/recall/F1 packages, and `metric_variable`), each the object tensorflux's
`tf.metrics` uses."""

from __future__ import annotations

from tensorflux.metrics import *  # noqa: F403
from tensorflux.metrics import __all__ as _metrics_all
from tensorflux.metrics.confusion import _streaming_confusion_matrix
from tensorflux.metrics.util import metric_variable

__all__ = list(_metrics_all) + ["_streaming_confusion_matrix", "metric_variable"]
