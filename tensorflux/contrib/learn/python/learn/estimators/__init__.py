"""`tensorflow.contrib.learn.python.learn.estimators`: TF's module names (aliases)."""

from tensorflux.contrib.learn.python.learn.estimators import (dnn, dnn_linear_combined,
                                                              estimator, linear, model_fn,
                                                              prediction_key, run_config)

__all__ = ["dnn", "dnn_linear_combined", "estimator", "linear", "model_fn", "prediction_key",
           "run_config"]
