"""`tf.contrib.tpu`: TPUEstimator and its configuration (run on the CPU with
`use_tpu=False`), CrossShardOptimizer, bfloat16_scope; the TPU-only program transforms
(`rewrite`, `shard`, `replicate`, ...) raise, naming the CPU alternative."""

from tensorflux.estimator.tpu import (
    CrossShardOptimizer,
    InputPipelineConfig,
    RunConfig,
    TPUConfig,
    TPUEstimator,
    TPUEstimatorSpec,
)
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

__all__ = ["CrossShardOptimizer", "InputPipelineConfig", "RunConfig", "TPUConfig",
           "TPUEstimator", "TPUEstimatorSpec", "batch_parallel", "bfloat16_scope", "core",
           "cross_replica_sum", "initialize_system", "outside_compilation", "replicate",
           "rewrite", "shard", "shutdown_system"]
