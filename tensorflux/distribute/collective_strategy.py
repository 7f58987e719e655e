"""`tf.distribute.experimental.MultiWorkerMirroredStrategy`: synchronous training over workers.

Between-graph replication, as TF 1.15: every worker of a TF_CONFIG cluster of workers (and an
optional chief; no ps) builds the same graph on its own devices and runs it in a session on
its own server. Every variable is mirrored on each worker: its initial value is broadcast from
the first worker (`CollectiveBcastSend` / `CollectiveBcastRecv` in the initializer), and
optimizers all-reduce the gradients across workers every step (`CollectiveReduce`, see
`collective_all_reduce`), so the copies stay equal. The loss of each replica counts 1/(global
replicas) under a MEAN reduction: N workers train as one device on the union of their
batches. The chief (task 0 of "chief", else worker 0) writes checkpoints and summaries.

Without a cluster it is a MirroredStrategy over this machine's devices, as TF's is; in a
cluster of one worker its replica is on that worker's task.
"""

from __future__ import annotations

import enum

from tensorflux.distribute import distribute_lib
from tensorflux.distribute.cluster_resolver import SimpleClusterResolver, TFConfigClusterResolver
from tensorflux.distribute.collective_all_reduce import CollectiveAllReduce, CollectiveKeys
from tensorflux.distribute.mirrored_strategy import MirroredExtended, MirroredStrategy
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.collective import collective_ops

__all__ = ["CollectiveCommunication", "MultiWorkerMirroredStrategy",
           "CollectiveAllReduceExtended"]


class CollectiveCommunication(enum.Enum):
    """The all-reduce implementation a collective strategy uses."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


def _workers_of(spec) -> list:
    """[(task type, index)] of the cluster's training tasks, chief first."""
    if spec is None:
        return []
    jobs = set(spec.jobs)
    return [(job, index) for job in ("chief", "worker") if job in jobs
            for index in spec.task_indices(job)]


class CollectiveAllReduceExtended(MirroredExtended):
    """Mirrored variables on this worker's devices, reductions across all workers.

    Raises:
        ValueError: a cluster with ps tasks, or this task's type/id missing or not a worker.
    """

    def __init__(self, container_strategy, cluster_resolver, num_gpus_per_worker=0):
        self._cluster_resolver = cluster_resolver
        spec = cluster_resolver.cluster_spec()
        workers = _workers_of(spec)
        self._workers = workers  # read once: TF_CONFIG may change later in the process
        self._num_workers = max(1, len(workers))
        self._collective_keys = CollectiveKeys()
        task_type = cluster_resolver.task_type
        task_id = cluster_resolver.task_id or 0
        if self._num_workers == 1 and (task_type, task_id) not in workers:
            self._task_type, self._task_id, self._is_chief = None, 0, True
            self._worker_index = 0
            super().__init__(container_strategy)
            return
        if self._num_workers > 1 and "ps" in spec.jobs:
            raise ValueError("MultiWorkerMirroredStrategy does not use ps tasks; the cluster "
                             f"has jobs {spec.jobs}. Use ParameterServerStrategy.")
        if (task_type, task_id) not in workers:
            raise ValueError(f"MultiWorkerMirroredStrategy: this task ({task_type!r}, "
                             f"{task_id}) is not a chief or worker task of the cluster "
                             f"{spec.as_dict()} (TF_CONFIG 'task')")
        self._task_type, self._task_id = task_type, task_id
        self._worker_index = workers.index((task_type, task_id))  # chief first
        self._is_chief = self._worker_index == 0
        worker = f"/job:{task_type}/replica:0/task:{task_id}"
        self._worker_device = worker
        super().__init__(container_strategy, (f"{worker}/device:CPU:0",),
                         CollectiveAllReduce(self._num_workers, num_gpus_per_worker,
                                             self._collective_keys))

    @property
    def _multi_worker(self) -> bool:
        return self._num_workers > 1

    @property
    def _num_replicas_in_sync(self) -> int:
        return len(self.worker_devices) * self._num_workers

    # -- variables: initial values broadcast from the first worker -------------------------

    def _create_variable(self, next_creator, **kwargs):
        if not self._multi_worker:
            return super()._create_variable(next_creator, **kwargs)
        initial_value = kwargs.get("initial_value")
        dtype = kwargs.get("dtype")
        group_size = self._num_workers * len(self.worker_devices)
        group_key = self._collective_keys.get_group_key(self.worker_devices)
        instance_key = self._collective_keys.get_variable_instance_key()
        is_chief = self._is_chief

        def broadcast_initial_value():
            value = initial_value() if callable(initial_value) else initial_value
            value = convert_to_tensor(value, dtype=dtype)
            shape = value.shape
            if not shape.is_fully_defined():
                raise ValueError(f"MultiWorkerMirroredStrategy needs variables of a known "
                                 f"shape (broadcast from the chief); "
                                 f"'{kwargs.get('name')}' has {shape}")
            if is_chief:
                return collective_ops.broadcast_send(value, shape, value.dtype, group_size,
                                                     group_key, instance_key)
            # The value is built (the same graph on every worker) but not run here.
            return collective_ops.broadcast_recv(shape, value.dtype, group_size, group_key,
                                                 instance_key)

        kwargs["initial_value"] = broadcast_initial_value
        return super()._create_variable(next_creator, **kwargs)

    # -- reductions across workers ---------------------------------------------------------

    def _reduce_to(self, reduce_op, value, destinations):
        if not self._multi_worker:
            return super()._reduce_to(reduce_op, value, destinations)
        return self._cross_device_ops.reduce(reduce_op, value, destinations)

    def batch_reduce_to(self, reduce_op, value_destination_pairs) -> list:
        if not self._multi_worker:
            return super().batch_reduce_to(reduce_op, value_destination_pairs)
        reduce_op = distribute_lib._reduce_op(reduce_op)
        return self._cross_device_ops.batch_reduce(reduce_op, list(value_destination_pairs))

    # -- cluster roles ---------------------------------------------------------------------

    @property
    def experimental_between_graph(self) -> bool:
        return self._multi_worker

    @property
    def experimental_should_init(self) -> bool:
        return True

    @property
    def should_checkpoint(self) -> bool:
        return self._is_chief

    @property
    def should_save_summary(self) -> bool:
        return self._is_chief

    def _make_input_fn_iterator(self, input_fn):
        # cycle: input_lib builds on distribute_lib, which this module's base imports
        from tensorflux.distribute import input_lib

        context = distribute_lib.InputContext(self._num_workers, self._worker_index,
                                              self._num_replicas_in_sync)
        return input_lib.DatasetIterator(input_fn(context), self, split_batch=False)

    def _configure(self, session_config, cluster_spec, task_type, task_id) -> None:
        """TF's `Strategy.configure`: a cluster given here replaces the resolver's (before any
        variable is created); `session_config` gets this worker's settings in place."""
        if cluster_spec:
            self.__init__(self._container_strategy(), SimpleClusterResolver(
                cluster_spec, task_type=task_type, task_id=task_id))
        if session_config is not None:
            session_config.CopyFrom(self._update_config_proto(session_config))

    def _update_config_proto(self, config_proto):
        if self._task_type is not None:
            leader_type, leader_id = self._workers[0]
            config_proto.experimental.collective_group_leader = \
                f"/job:{leader_type}/replica:0/task:{leader_id}"
            del config_proto.device_filters[:]
            config_proto.device_filters.append(self._worker_device)
        return config_proto


class MultiWorkerMirroredStrategy(MirroredStrategy):
    """Synchronous training over workers (see the module docstring).

    Args:
        communication: a CollectiveCommunication (every choice sums the same way here).
        cluster_resolver: where the cluster is described (default: TF_CONFIG).

    Raises:
        ValueError: `communication` is not a CollectiveCommunication, or the cluster does not
            fit (ps tasks, this task not a worker).
    """

    def __init__(self, communication=CollectiveCommunication.AUTO, cluster_resolver=None):
        if not isinstance(communication, CollectiveCommunication):
            raise ValueError(f"communication must be a CollectiveCommunication; got "
                             f"{communication!r}")
        distribute_lib.Strategy.__init__(self, CollectiveAllReduceExtended(
            self, cluster_resolver or TFConfigClusterResolver()))
        self._communication = communication

    def __repr__(self) -> str:
        return (f"<tf.distribute.experimental.MultiWorkerMirroredStrategy "
                f"workers={self.extended._num_workers} "
                f"devices={list(self.extended.worker_devices)}>")

