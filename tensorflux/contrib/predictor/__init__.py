"""`tf.contrib.predictor`: from_saved_model and from_estimator (TF 1.15)."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.predictor.predictor import (CoreEstimatorPredictor, Predictor,
                                                   SavedModelPredictor, from_estimator,
                                                   from_saved_model)

__all__ = ["from_saved_model", "from_estimator", "Predictor", "SavedModelPredictor",
           "CoreEstimatorPredictor"]

__getattr__ = _missing.module_getattr("contrib.predictor", {
    "from_contrib_estimator": "tf.contrib.predictor.from_estimator with a tf.estimator.Estimator",
})
