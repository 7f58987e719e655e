"""`tensorflow.contrib.learn.python.learn`: the same names as `tf.contrib.learn` (aliases)."""

from tensorflux.contrib.learn import monitors, preprocessing
from tensorflux.contrib.learn.canned import (DNNClassifier, DNNLinearCombinedClassifier,
                                             DNNLinearCombinedRegressor, DNNRegressor,
                                             LinearClassifier, LinearRegressor)
from tensorflux.contrib.learn.estimator import (BaseEstimator, Estimator, MetricSpec, ModeKeys,
                                                ModelFnOps, PredictionKey, RunConfig, SKCompat)
from tensorflux.contrib.learn.experiment import Experiment
from tensorflux.contrib.learn.inference import (infer_real_valued_columns_from_input,
                                                infer_real_valued_columns_from_input_fn)
from tensorflux.contrib.learn.python.learn import (datasets, estimators, learn_runner,
                                                   metric_spec, utils)

__all__ = ["BaseEstimator", "DNNClassifier", "DNNLinearCombinedClassifier",
           "DNNLinearCombinedRegressor", "DNNRegressor", "Estimator", "Experiment",
           "LinearClassifier", "LinearRegressor", "MetricSpec", "ModeKeys", "ModelFnOps",
           "PredictionKey", "RunConfig", "SKCompat", "datasets", "estimators",
           "infer_real_valued_columns_from_input", "infer_real_valued_columns_from_input_fn",
           "learn_runner", "metric_spec", "monitors", "preprocessing", "utils"]
