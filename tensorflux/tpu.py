"""`tf.tpu` (TF 1.15): CrossShardOptimizer and bfloat16_scope work on the CPU; the
transforms that compile for TPU cores raise NotImplementedError (tensorflux has no TPUs)."""

from tensorflux.estimator.tpu.tpu_functions import (
    batch_parallel,
    bfloat16_scope,
    core,
    cross_replica_sum,
    initialize_system,
    outside_compilation,
    replicate,
    rewrite,
    shard,
    shutdown_system,
)
from tensorflux.estimator.tpu.tpu_optimizer import CrossShardOptimizer

__all__ = ["CrossShardOptimizer", "batch_parallel", "bfloat16_scope", "core",
           "cross_replica_sum", "initialize_system", "outside_compilation", "replicate",
           "rewrite", "shard", "shutdown_system"]
