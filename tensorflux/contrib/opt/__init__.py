"""`tf.contrib.opt`: LazyAdamOptimizer, AdaMaxOptimizer, NadamOptimizer, MovingAverageOptimizer,
decoupled weight decay and ScipyOptimizerInterface."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.opt.external_optimizer import (ExternalOptimizerInterface,
                                                      ScipyOptimizerInterface)
from tensorflux.contrib.opt.lazy_adam import LazyAdamOptimizer
from tensorflux.contrib.opt.moving_average_optimizer import MovingAverageOptimizer
from tensorflux.contrib.opt.weight_decay import *  # noqa: F403
from tensorflux.train.adam_variants import AdaMaxOptimizer, NadamOptimizer

__getattr__ = _missing.module_getattr("contrib.opt", {
    "*": "the tf.train optimizer it extends",
    "LARSOptimizer": "not supported",
    "ShampooOptimizer": "not supported",
    "GGTOptimizer": "not supported",
    "AddSignOptimizer": "not supported",
    "PowerSignOptimizer": "not supported",
    "ElasticAverageOptimizer": "not supported (tf.train.SyncReplicasOptimizer)",
    "ModelAverageOptimizer": "not supported (tf.train.SyncReplicasOptimizer)",
    "DropStaleGradientOptimizer": "not supported",
    "MultitaskOptimizerWrapper": "not supported",
    "LazyAdamGSOptimizer": "tf.contrib.opt.LazyAdamOptimizer",
    "AdamGSOptimizer": "tf.train.AdamOptimizer",
})
