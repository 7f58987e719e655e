"""`tf.train.experimental` (TF 1.15): loss scaling and the mixed-precision switch."""

from tensorflux.train.loss_scale import DynamicLossScale, FixedLossScale, LossScale
from tensorflux.train.loss_scale_optimizer import (
                                                   MixedPrecisionLossScaleOptimizer,
                                                   disable_mixed_precision_graph_rewrite,
                                                   enable_mixed_precision_graph_rewrite,
)

__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale", "MixedPrecisionLossScaleOptimizer",
           "disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite"]
