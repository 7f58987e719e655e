"""`...learn.estimators.linear` (alias): LinearClassifier, LinearRegressor."""

from tensorflux.contrib.learn.canned import LinearClassifier, LinearRegressor

__all__ = ["LinearClassifier", "LinearRegressor"]
