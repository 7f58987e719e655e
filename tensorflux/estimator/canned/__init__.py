"""The canned estimators: linear, DNN, wide & deep and baseline models with shared heads."""

from tensorflux.estimator.canned.baseline import (BaselineClassifier, BaselineEstimator,
                                                  BaselineRegressor)
from tensorflux.estimator.canned.dnn import DNNClassifier, DNNEstimator, DNNRegressor
from tensorflux.estimator.canned.dnn_linear_combined import (DNNLinearCombinedClassifier,
                                                             DNNLinearCombinedEstimator,
                                                             DNNLinearCombinedRegressor)
from tensorflux.estimator.canned.head import BinaryClassHead, MultiClassHead, RegressionHead
from tensorflux.estimator.canned.linear import (LinearClassifier, LinearEstimator, LinearRegressor)

__all__ = ["BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BinaryClassHead",
           "DNNClassifier", "DNNEstimator", "DNNLinearCombinedClassifier",
           "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor", "DNNRegressor",
           "LinearClassifier", "LinearEstimator", "LinearRegressor", "MultiClassHead",
           "RegressionHead"]
