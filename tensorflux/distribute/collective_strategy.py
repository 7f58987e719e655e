"""`tf.distribute.experimental.MultiWorkerMirroredStrategy` on one worker.

Across workers it needs collective all-reduce ops between tasks, which tensorflux does not
provide; on a single worker (no TF_CONFIG cluster, or a cluster of one worker) it is a
MirroredStrategy over this machine's devices, as TF's is.
"""

from __future__ import annotations

import enum

from tensorflux.distribute.cluster_resolver import TFConfigClusterResolver
from tensorflux.distribute.mirrored_strategy import MirroredStrategy

__all__ = ["CollectiveCommunication", "MultiWorkerMirroredStrategy"]


class CollectiveCommunication(enum.Enum):
    """The all-reduce implementation a collective strategy uses."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class MultiWorkerMirroredStrategy(MirroredStrategy):
    """Synchronous training over workers (see the module docstring).

    Raises:
        NotImplementedError: the cluster has more than one worker.
        ValueError: `communication` is not a CollectiveCommunication.
    """

    def __init__(self, communication=CollectiveCommunication.AUTO, cluster_resolver=None):
        if not isinstance(communication, CollectiveCommunication):
            raise ValueError(f"communication must be a CollectiveCommunication; got "
                             f"{communication!r}")
        resolver = cluster_resolver or TFConfigClusterResolver()
        spec = resolver.cluster_spec()
        jobs = set(spec.jobs) if spec is not None else set()
        workers = sum(spec.num_tasks(job) for job in ("chief", "worker") if job in jobs)
        if workers > 1:
            raise NotImplementedError(
                f"MultiWorkerMirroredStrategy over {workers} workers needs collective "
                f"all-reduce between tasks, which tensorflux does not provide; use "
                f"tf.distribute.experimental.ParameterServerStrategy or between-graph "
                f"replication (tf.train.replica_device_setter) with the same TF_CONFIG.")
        super().__init__()
        self._communication = communication
