"""`...learn.estimators.dnn_linear_combined` (alias): the wide & deep estimators."""

from tensorflux.contrib.learn.canned import DNNLinearCombinedClassifier, DNNLinearCombinedRegressor

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor"]
