"""`tf.contrib.distribute` (TF 1.15): the contrib spellings of the distribution strategies.

Differences from `tf.distribute`, as TF 1.15 had them: contrib's MirroredStrategy takes
`num_gpus` and treats each batch of `make_dataset_iterator`'s dataset as one replica's batch
(the core strategy splits global batches); `DistributeConfig` carries the strategies of an
Estimator's `RunConfig(experimental_distribute=...)`.
"""

from __future__ import annotations

import collections

from tensorflux.contrib import missing as _missing
from tensorflux.distribute import distribute_lib
from tensorflux.distribute import input_lib as _input_lib
from tensorflux.distribute import mirrored_strategy as _mirrored
from tensorflux.distribute.cluster_resolver import TFConfigClusterResolver
from tensorflux.distribute.collective_strategy import MultiWorkerMirroredStrategy
from tensorflux.distribute.cross_device_ops import (AllReduceCrossDeviceOps, CrossDeviceOps,
                                                    ReductionToOneDevice)
from tensorflux.distribute.distribute_lib import (ReplicaContext, get_cross_replica_context,
                                                  get_loss_reduction, get_replica_context,
                                                  get_strategy, has_strategy,
                                                  in_cross_replica_context)
from tensorflux.distribute.one_device_strategy import OneDeviceStrategy
from tensorflux.distribute.parameter_server_strategy import (
    ParameterServerStrategy as _CoreParameterServerStrategy)
from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.distributed.server import Server

__all__ = ["MirroredStrategy", "OneDeviceStrategy", "ParameterServerStrategy",
           "CollectiveAllReduceStrategy", "CrossDeviceOps", "AllReduceCrossDeviceOps",
           "ReductionToOneDevice", "DistributeConfig", "DistributionStrategy", "ReplicaContext",
           "get_cross_replica_context", "get_distribution_strategy", "get_loss_reduction",
           "get_replica_context", "get_strategy", "has_distribution_strategy", "has_strategy",
           "in_cross_replica_context", "require_replica_context",
           "run_standard_tensorflow_server"]

DistributionStrategy = distribute_lib.Strategy
get_distribution_strategy = get_strategy
has_distribution_strategy = has_strategy


class DistributeConfig(collections.namedtuple(
        "DistributeConfig", ["train_distribute", "eval_distribute", "remote_cluster"])):
    """The strategies of an Estimator (`RunConfig(experimental_distribute=...)`)."""

    def __new__(cls, train_distribute=None, eval_distribute=None, remote_cluster=None):
        return super().__new__(cls, train_distribute, eval_distribute, remote_cluster)


def _no_gpus(num_gpus, argument: str) -> None:
    if num_gpus:
        raise ValueError(f"{argument}={num_gpus}: this machine has no GPU; give CPU devices "
                         f"with `devices=` instead.")


class _ContribMirroredExtended(_mirrored.MirroredExtended):
    def _make_dataset_iterator(self, dataset):
        return _input_lib.DatasetIterator(dataset, self, split_batch=False)


class MirroredStrategy(_mirrored.MirroredStrategy):
    """TF 1.15 contrib's MirroredStrategy: per-replica dataset batches, `num_gpus` (must be 0
    or None here), `cross_tower_ops` as the old name of `cross_device_ops`.

    Raises:
        ValueError: GPUs requested; bad devices or cross_device_ops.
    """

    def __init__(self, devices=None, num_gpus=None, num_gpus_per_worker=None,
                 cross_device_ops=None, auto_shard_dataset=False, cross_tower_ops=None):
        _no_gpus(num_gpus, "num_gpus")
        _no_gpus(num_gpus_per_worker, "num_gpus_per_worker")
        distribute_lib.Strategy.__init__(
            self, _ContribMirroredExtended(self, devices, cross_device_ops or cross_tower_ops))
        self._auto_shard_dataset = auto_shard_dataset


class ParameterServerStrategy(_CoreParameterServerStrategy):
    """TF 1.15 contrib's ParameterServerStrategy (configured from TF_CONFIG)."""

    def __init__(self, num_gpus_per_worker=0):
        _no_gpus(num_gpus_per_worker, "num_gpus_per_worker")
        super().__init__()


class CollectiveAllReduceStrategy(MultiWorkerMirroredStrategy):
    """TF 1.15 contrib's name of MultiWorkerMirroredStrategy."""

    def __init__(self, num_gpus_per_worker=0):
        _no_gpus(num_gpus_per_worker, "num_gpus_per_worker")
        super().__init__()


def require_replica_context(replica_ctx) -> None:
    """Raises RuntimeError unless `replica_ctx` is the replica context in force."""
    context = get_replica_context()
    if context is None:
        raise RuntimeError("Need to be inside `call_for_each_replica()`")
    if context is not replica_ctx:
        raise RuntimeError("Mismatching ReplicaContext.")


def run_standard_tensorflow_server(session_config=None):
    """Starts (and returns) the tf.train.Server of this task as TF_CONFIG describes it.

    Raises:
        ValueError: TF_CONFIG names no cluster or no task.
    """
    resolver = TFConfigClusterResolver()
    spec = resolver.cluster_spec()
    if not spec.jobs or resolver.task_type is None:
        raise ValueError("run_standard_tensorflow_server needs TF_CONFIG with a 'cluster' "
                         "and a 'task'.")
    return Server(ClusterSpec(spec.as_dict()), job_name=resolver.task_type,
                  task_index=resolver.task_id or 0, config=session_config, start=True)


__getattr__ = _missing.module_getattr("contrib.distribute", {
    "TPUStrategy": "not supported (no TPUs)",
    "initialize_tpu_system": "not supported (no TPUs)",
    "*": "tf.distribute",
})
