"""`...learn.estimators.dnn` (alias): DNNClassifier, DNNRegressor."""

from tensorflux.contrib.learn.canned import DNNClassifier, DNNRegressor

__all__ = ["DNNClassifier", "DNNRegressor"]
