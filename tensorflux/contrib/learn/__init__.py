"""`tf.contrib.learn` (TF 1.0-1.4) on top of `tf.estimator`: Estimator/ModelFnOps, the canned
DNN/linear/wide-and-deep estimators with fit/evaluate/predict over NumPy arrays, SKCompat,
RunConfig, monitors, Experiment/learn_runner, `io`, `preprocessing`, `datasets`, and the skflow-era
`models` (logistic/linear regression) and `ops` (categorical_variable).

Submodules load on first access. Names not provided (KMeansClustering, SVM, the dynamic RNN
estimators, ...) raise ContribNotProvidedError naming the core replacement.
"""

import importlib

from tensorflux.contrib.learn.canned import (DNNClassifier, DNNLinearCombinedClassifier,
                                             DNNLinearCombinedRegressor, DNNRegressor,
                                             LinearClassifier, LinearRegressor)
from tensorflux.contrib.learn.estimator import (BaseEstimator, Estimator, MetricSpec, ModeKeys,
                                                ModelFnOps, PredictionKey, RunConfig,
                                                SKCompat)
from tensorflux.contrib.learn.inference import (infer_real_valued_columns_from_input,
                                                infer_real_valued_columns_from_input_fn)
from tensorflux.contrib.missing import ContribNotProvidedError

__all__ = ["BaseEstimator", "DNNClassifier", "DNNLinearCombinedClassifier",
           "DNNLinearCombinedRegressor", "DNNRegressor", "Estimator", "LinearClassifier",
           "LinearRegressor", "MetricSpec", "ModeKeys", "ModelFnOps", "PredictionKey",
           "RunConfig", "SKCompat",
           "infer_real_valued_columns_from_input", "infer_real_valued_columns_from_input_fn",
           "datasets", "preprocessing", "monitors", "io", "learn_runner", "Experiment",
           "models", "ops", "utils", "python"]

_SUBMODULES = {
    "datasets": "tensorflux.contrib.learn.datasets",
    "preprocessing": "tensorflux.contrib.learn.preprocessing",
    "monitors": "tensorflux.contrib.learn.monitors",
    "io": "tensorflux.contrib.learn.learn_io",
    "learn_runner": "tensorflux.contrib.learn.learn_runner",
    "models": "tensorflux.contrib.learn.models",
    "ops": "tensorflux.contrib.learn.learn_ops",
    "utils": "tensorflux.contrib.learn.utils",
    "python": "tensorflux.contrib.learn.python",
}

_REPLACEMENTS = {
    "KMeansClustering": "not supported (write k-means with core ops)",
    "SVM": "tf.estimator.LinearClassifier",
    "DynamicRnnEstimator": "tf.nn.dynamic_rnn in a tf.estimator.Estimator model_fn",
    "LogisticRegressor": "tf.contrib.learn.LinearClassifier",
    "TensorForestEstimator": "not supported",
}


def __getattr__(name):  # noqa: N807 - module hook
    if name in _SUBMODULES:
        module = importlib.import_module(_SUBMODULES[name])
        globals()[name] = module
        return module
    if name == "Experiment":
        module = importlib.import_module("tensorflux.contrib.learn.experiment")
        globals()[name] = module.Experiment
        return module.Experiment
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'tensorflux.contrib.learn' has no attribute '{name}'")
    raise ContribNotProvidedError("contrib.learn", name, _REPLACEMENTS.get(name, "tf.estimator"))
