"""`tf.estimator.tpu` (TF 1.15): TPUEstimator and its configuration, run on the CPU."""

from tensorflux.estimator.tpu.tpu_config import InputPipelineConfig, RunConfig, TPUConfig
from tensorflux.estimator.tpu import tpu_functions
from tensorflux.estimator.tpu.tpu_estimator import TPUEstimator, TPUEstimatorSpec
from tensorflux.estimator.tpu.tpu_optimizer import CrossShardOptimizer

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig", "TPUEstimator",
           "TPUEstimatorSpec", "CrossShardOptimizer"]
