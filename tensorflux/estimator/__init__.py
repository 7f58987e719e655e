"""`tf.estimator` (TF 1.15): Estimator, specs, RunConfig, train_and_evaluate, canned models,
exporters, input functions and the session hook names."""

from tensorflux.estimator import experimental, export, inputs, tpu
from tensorflux.estimator.boosted_trees import BoostedTreesClassifier, BoostedTreesRegressor
from tensorflux.estimator.canned import *  # noqa: F403
from tensorflux.estimator.canned import __all__ as _canned_names
from tensorflux.estimator.estimator import Estimator, VocabInfo, WarmStartSettings
from tensorflux.estimator.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from tensorflux.estimator.hooks import *  # noqa: F403
from tensorflux.estimator.hooks import __all__ as _hook_names
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux.estimator.parsing import (add_metrics, classifier_parse_example_spec,
                                          regressor_parse_example_spec)
from tensorflux.estimator.run_config import RunConfig
from tensorflux.estimator.training import EvalSpec, TrainSpec, train_and_evaluate

__all__ = ["experimental", "export", "inputs", "tpu", "BoostedTreesClassifier",
           "BoostedTreesRegressor", "Estimator", "VocabInfo", "WarmStartSettings",
           "BestExporter", "Exporter", "FinalExporter", "LatestExporter", "EstimatorSpec",
           "ModeKeys", "add_metrics", "classifier_parse_example_spec",
           "regressor_parse_example_spec", "RunConfig", "EvalSpec", "TrainSpec",
           "train_and_evaluate"] + list(_hook_names) + list(_canned_names)
