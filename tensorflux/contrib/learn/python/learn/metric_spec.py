"""`tensorflow.contrib.learn.python.learn.metric_spec` (alias)."""

from tensorflux.contrib.learn.estimator import MetricSpec

__all__ = ["MetricSpec"]
