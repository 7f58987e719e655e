"""`tf.contrib.learn`: only `tf.contrib.learn.datasets` (local MNIST-style loaders) is provided.

Everything else of contrib.learn (Estimator, Experiment, learn_runner, ...) was superseded by
`tf.estimator` in TF 1.x; asking for it names that replacement.
"""

import importlib

from tensorflux.contrib.missing import ContribNotProvidedError

__all__ = ["datasets"]

_REPLACEMENTS = {
    "Estimator": "tf.estimator.Estimator",
    "Experiment": "tf.estimator.train_and_evaluate",
    "learn_runner": "tf.estimator.train_and_evaluate",
    "RunConfig": "tf.estimator.RunConfig",
    "DNNClassifier": "tf.estimator.DNNClassifier",
    "DNNRegressor": "tf.estimator.DNNRegressor",
    "LinearClassifier": "tf.estimator.LinearClassifier",
    "LinearRegressor": "tf.estimator.LinearRegressor",
    "ModeKeys": "tf.estimator.ModeKeys",
    "ModelFnOps": "tf.estimator.EstimatorSpec",
    "infer_real_valued_columns_from_input": "tf.feature_column.numeric_column",
    "preprocessing": "not supported (tf.keras.preprocessing / tf.strings)",
}


def __getattr__(name):  # noqa: N807 - module hook
    if name == "datasets":
        module = importlib.import_module("tensorflux.contrib.learn.datasets")
        globals()[name] = module
        return module
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'tensorflux.contrib.learn' has no attribute '{name}'")
    raise ContribNotProvidedError("contrib.learn", name, _REPLACEMENTS.get(name, "tf.estimator"))
