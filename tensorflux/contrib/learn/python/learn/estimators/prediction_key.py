"""`...learn.estimators.prediction_key` (alias): PredictionKey."""

from tensorflux.contrib.learn.estimator import PredictionKey

__all__ = ["PredictionKey"]
