"""`tf.distribute.experimental.ParameterServerStrategy` (TF 1.15): between-graph replication.

With a cluster (TF_CONFIG or a cluster resolver naming "ps" and "worker" tasks) every worker
builds its own graph: variables go round robin to the ps tasks, computation to the worker's
CPU, and each worker applies its gradients on its own (asynchronous training, one replica per
worker). Without a cluster everything stays on this machine: variables on the CPU, computation
on the local compute devices.
"""

from __future__ import annotations

from tensorflux.distribute import distribute_lib
from tensorflux.distribute.central_storage_strategy import CentralStorageExtended
from tensorflux.distribute.cluster_resolver import TFConfigClusterResolver

__all__ = ["ParameterServerStrategy"]


class _ParameterServerExtended(CentralStorageExtended):
    def __init__(self, container_strategy, cluster_resolver):
        self._cluster_resolver = cluster_resolver or TFConfigClusterResolver()
        spec = self._cluster_resolver.cluster_spec()
        jobs = set(spec.jobs) if spec is not None else set()
        self._between_graph = "ps" in jobs
        self._is_chief = True
        if self._between_graph:
            task_type = self._cluster_resolver.task_type
            task_id = self._cluster_resolver.task_id or 0
            if task_type is None:
                raise ValueError("ParameterServerStrategy: the cluster has ps tasks but this "
                                 "task's type is not set (TF_CONFIG 'task').")
            ps_tasks = spec.num_tasks("ps")
            parameter_devices = tuple(f"/job:ps/task:{i}/device:CPU:0"
                                      for i in range(ps_tasks))
            compute = (f"/job:{task_type}/task:{task_id}/device:CPU:0",)
            self._is_chief = task_type == "chief" or (
                task_type == "worker" and task_id == 0 and "chief" not in jobs)
        else:
            parameter_devices = ("/device:CPU:0",)
            compute = ("/device:CPU:0",)
        super().__init__(container_strategy, compute if not self._between_graph else None,
                         parameter_devices)
        if self._between_graph:
            self._devices = compute

    @property
    def experimental_between_graph(self) -> bool:
        return self._between_graph

    @property
    def should_checkpoint(self) -> bool:
        return self._is_chief

    @property
    def should_save_summary(self) -> bool:
        return self._is_chief

    @property
    def experimental_should_init(self) -> bool:
        return self._is_chief


class ParameterServerStrategy(distribute_lib.Strategy):
    """Variables on the ps tasks, one replica per worker (see the module docstring).

    Args:
        cluster_resolver: where the cluster is described (default: TF_CONFIG).

    Raises:
        ValueError: a cluster with ps tasks but no task type for this process.
    """

    def __init__(self, cluster_resolver=None):
        super().__init__(_ParameterServerExtended(self, cluster_resolver))

    def __repr__(self) -> str:
        return (f"<tf.distribute.experimental.ParameterServerStrategy "
                f"parameters={list(self.extended.parameter_devices)}>")
