"""`...learn.estimators.estimator` (alias): Estimator, BaseEstimator, SKCompat."""

from tensorflux.contrib.learn.estimator import BaseEstimator, Estimator, SKCompat

__all__ = ["BaseEstimator", "Estimator", "SKCompat"]
