"""Cluster resolvers (TF 1.15 `tf.distribute.cluster_resolver`).

A resolver answers: which tasks form the cluster (`cluster_spec()`), which one this process
is (`task_type`, `task_id`) and the session target of a task (`master()`).
`TFConfigClusterResolver` reads the `TF_CONFIG` environment variable set by cluster managers
(Kubeflow's TFJob, SageMaker, Vertex AI) each time it is asked, so it follows changes;
`SimpleClusterResolver` holds given values; `UnionResolver` merges several.
"""

from __future__ import annotations

import abc
import json
import os

from tensorflux.distributed.cluster_spec import ClusterSpec

__all__ = ["ClusterResolver", "SimpleClusterResolver", "TFConfigClusterResolver",
           "UnionResolver"]

_TF_CONFIG_ENV = "TF_CONFIG"


def _format_master(address: str, rpc_layer) -> str:
    return f"{rpc_layer}://{address}" if rpc_layer else address


class ClusterResolver(abc.ABC):
    """The resolver interface: cluster_spec(), master(), task_type, task_id, environment."""

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        ...

    @abc.abstractmethod
    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        ...

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        """Accelerators per type on a task: tensorflux runs on CPUs, so none."""
        return {}

    @property
    def environment(self) -> str:
        return ""

    def _master_of(self, task_type, task_id, rpc_layer) -> str:
        cluster = self.cluster_spec()
        if task_type is None or task_id is None or not cluster.jobs:
            return ""
        if task_type not in cluster.jobs:
            raise ValueError(f"{task_type} is not a job of the cluster {cluster.as_dict()}")
        return _format_master(cluster.task_address(task_type, int(task_id)), rpc_layer)


def load_tf_config() -> dict:
    """The parsed `TF_CONFIG` environment variable ({} when unset or empty).

    Raises:
        ValueError: TF_CONFIG is not a JSON object.
    """
    text = os.environ.get(_TF_CONFIG_ENV, "")
    if not text:
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"TF_CONFIG is not valid JSON: {err}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object; got {text!r}")
    return config


class TFConfigClusterResolver(ClusterResolver):
    """Reads the cluster, the task and the RPC layer from the `TF_CONFIG` JSON.

    Args:
        task_type, task_id: override TF_CONFIG's task.
        rpc_layer: override TF_CONFIG's "rpc_layer" (e.g. "grpc").
        environment: override TF_CONFIG's "environment".

    Raises (when used):
        ValueError: TF_CONFIG is not a JSON object.
    """

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    @staticmethod
    def _config() -> dict:
        return load_tf_config()

    @property
    def task_type(self):
        if self._task_type is not None:
            return self._task_type
        return (self._config().get("task") or {}).get("type")

    @task_type.setter
    def task_type(self, value):
        self._task_type = value

    @property
    def task_id(self):
        if self._task_id is not None:
            return self._task_id
        index = (self._config().get("task") or {}).get("index")
        return None if index is None else int(index)

    @task_id.setter
    def task_id(self, value):
        self._task_id = value

    @property
    def rpc_layer(self):
        if self._rpc_layer is not None:
            return self._rpc_layer
        return self._config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, value):
        self._rpc_layer = value

    @property
    def environment(self) -> str:
        if self._environment is not None:
            return self._environment
        return self._config().get("environment", "")

    def cluster_spec(self) -> ClusterSpec:
        """The ClusterSpec of TF_CONFIG's "cluster" (empty when there is none)."""
        return ClusterSpec(self._config().get("cluster") or {})

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """The target of a task (default: this task), e.g. "grpc://host:port"; "" without a
        cluster or task.

        Raises:
            ValueError: the task type is not a job of the cluster.
        """
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        return self._master_of(task_type, task_id, rpc_layer or self.rpc_layer)


class SimpleClusterResolver(ClusterResolver):
    """A resolver of the values it is given.

    Raises:
        TypeError: cluster_spec is not a ClusterSpec (or a dict, which is converted).
    """

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        if isinstance(cluster_spec, dict):
            cluster_spec = ClusterSpec(cluster_spec)
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError(f"cluster_spec must be a tf.train.ClusterSpec; got "
                            f"{type(cluster_spec).__name__}")
        self._cluster_spec = cluster_spec
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self._environment = environment
        self._num_accelerators = dict(num_accelerators or {})
        self.rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """The given master, or the target of the named task.

        Raises:
            ValueError: the task type is not a job of the cluster.
        """
        if task_type is not None and task_id is not None:
            return self._master_of(task_type, task_id, rpc_layer or self.rpc_layer)
        if not self._master or "://" in self._master:
            return self._master
        return _format_master(self._master, rpc_layer or self.rpc_layer)

    @property
    def environment(self) -> str:
        return self._environment

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return dict(self._num_accelerators)


class UnionResolver(ClusterResolver):
    """The union of several resolvers' clusters; task, master and environment come from the
    first.

    Raises:
        ValueError: no resolver, or two resolvers give the same task different addresses.
        TypeError: an argument that is not a ClusterResolver.
    """

    def __init__(self, *resolvers, **kwargs):
        if not resolvers:
            raise ValueError("At least one ClusterResolver is required.")
        for resolver in resolvers:
            if not isinstance(resolver, ClusterResolver):
                raise TypeError(f"All arguments must be a ClusterResolver; got {resolver}")
        self._resolvers = resolvers
        self.task_type = kwargs.pop("task_type", getattr(resolvers[0], "task_type", None))
        self.task_id = kwargs.pop("task_id", getattr(resolvers[0], "task_id", None))
        self.rpc_layer = kwargs.pop("rpc_layer", getattr(resolvers[0], "rpc_layer", None))
        if kwargs:
            raise ValueError(f"Unexpected kwargs provided {kwargs!r}")

    def cluster_spec(self) -> ClusterSpec:
        merged: dict = {}
        for resolver in self._resolvers:
            for job, tasks in resolver.cluster_spec().as_dict().items():
                items = tasks.items() if isinstance(tasks, dict) else enumerate(tasks)
                target = merged.setdefault(job, {})
                for index, address in items:
                    if index in target and target[index] != address:
                        raise ValueError(f"Duplicate task {job}:{index} with different "
                                         f"addresses: {target[index]} and {address}")
                    target[index] = address
        return ClusterSpec(merged)

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            return self._master_of(task_type, task_id, rpc_layer or self.rpc_layer)
        return self._resolvers[0].master(rpc_layer=rpc_layer)

    @property
    def environment(self) -> str:
        return self._resolvers[0].environment
