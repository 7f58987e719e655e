"""The canned estimators: linear, DNN, wide & deep and baseline models with shared heads."""

from tensorflux.estimator.canned.baseline import BaselineClassifier, BaselineRegressor
from tensorflux.estimator.canned.dnn import DNNClassifier, DNNRegressor
from tensorflux.estimator.canned.dnn_linear_combined import (DNNLinearCombinedClassifier,
                                                             DNNLinearCombinedRegressor)
from tensorflux.estimator.canned.linear import LinearClassifier, LinearRegressor

__all__ = ["BaselineClassifier", "BaselineRegressor", "DNNClassifier", "DNNRegressor",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor", "LinearClassifier",
           "LinearRegressor"]
