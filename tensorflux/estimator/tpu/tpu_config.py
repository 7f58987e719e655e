"""`tf.estimator.tpu.RunConfig`, `TPUConfig` and `InputPipelineConfig` (TF 1.15).

tensorflux has no TPUs: these carry the settings TPU programs pass so that a `TPUEstimator`
with `use_tpu=False` runs them on the CPU, as TF 1.15 does.
"""

from __future__ import annotations

import collections

from tensorflux.estimator import run_config as run_config_lib

__all__ = ["InputPipelineConfig", "TPUConfig", "RunConfig"]


class InputPipelineConfig:
    """How input is fed to TPU cores (recorded; the CPU path reads the whole batch)."""

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


def _positive(value, name):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 1):
        raise ValueError(f"{name} must be positive integer; got {value}")


class TPUConfig(collections.namedtuple("TPUConfig", [
        "iterations_per_loop", "num_shards", "num_cores_per_replica",
        "per_host_input_for_training", "tpu_job_name", "initial_infeed_sleep_secs",
        "input_partition_dims", "eval_training_input_configuration",
        "experimental_host_call_every_n_steps"])):
    """TPU settings of a RunConfig (validated as TF does; used only on TPUs).

    Raises:
        ValueError: a non-positive `iterations_per_loop`, `num_shards`, ... or an unknown
            input pipeline configuration.
    """

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None,
                initial_infeed_sleep_secs=None, input_partition_dims=None,
                eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1):
        _positive(iterations_per_loop, "iterations_per_loop")
        _positive(num_shards, "num_shards")
        _positive(experimental_host_call_every_n_steps, "experimental_host_call_every_n_steps")
        if num_cores_per_replica is not None and num_cores_per_replica not in (1, 2, 4, 8):
            raise ValueError(f"num_cores_per_replica must be 1, 2, 4, or 8; got "
                             f"{num_cores_per_replica}")
        if per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        elif per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        valid = (InputPipelineConfig.PER_SHARD_V1, InputPipelineConfig.PER_HOST_V1,
                 InputPipelineConfig.PER_HOST_V2, InputPipelineConfig.BROADCAST)
        if per_host_input_for_training not in valid:
            raise ValueError(f"per_host_input_for_training must be one of {valid}; got "
                             f"{per_host_input_for_training}")
        if initial_infeed_sleep_secs is not None:
            _positive(initial_infeed_sleep_secs, "initial_infeed_sleep_secs")
        return super().__new__(cls, iterations_per_loop, num_shards, num_cores_per_replica,
                               per_host_input_for_training, tpu_job_name,
                               initial_infeed_sleep_secs, input_partition_dims,
                               eval_training_input_configuration,
                               experimental_host_call_every_n_steps)


class RunConfig(run_config_lib.RunConfig):
    """An Estimator RunConfig with TPU settings (`tpu_config`, `master`, `cluster`).

    Raises:
        ValueError: `cluster` given together with `master` or `evaluation_master`.
    """

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        if cluster is not None:
            if master is not None or evaluation_master is not None:
                raise ValueError("Both master and cluster are set.")
            master = cluster.master()
        if master is not None:
            self._master = master
        if evaluation_master is not None:
            self._evaluation_master = evaluation_master
        elif master is not None and not self._evaluation_master:
            self._evaluation_master = master

    @property
    def tpu_config(self):
        return self._tpu_config

    @property
    def cluster(self):
        return self._cluster

    def replace(self, **kwargs):
        """A copy with properties replaced (`tpu_config` too)."""
        tpu_config = kwargs.pop("tpu_config", self._tpu_config)
        new = super().replace(**kwargs)
        copy = RunConfig.__new__(RunConfig)
        copy.__dict__.update(new.__dict__)
        copy._tpu_config = tpu_config
        copy._cluster = self._cluster
        copy._master = self._master
        copy._evaluation_master = self._evaluation_master
        return copy
