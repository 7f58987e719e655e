"""`tf.estimator.RunConfig`: where and how an Estimator runs, including the cluster.

The cluster comes from the `TF_CONFIG` environment variable (read once, when the RunConfig is
built), the JSON the cluster managers (Kubeflow's TFJob, SageMaker, Vertex AI) set:

    {"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222"], "ps": ["h2:2222"]},
     "task": {"type": "worker", "index": 0}}

Without a cluster the task is the local chief (`task_type` "worker", `master` ""). The
"evaluator" task is not part of the training cluster: it gets no master and no replicas.
"""

from __future__ import annotations

import copy
import os

from tensorflux.distribute import distribute_lib
from tensorflux.distribute.cluster_resolver.resolvers import load_tf_config
from tensorflux.distribute.collective_strategy import CollectiveAllReduceExtended
from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import config_pb2

__all__ = ["RunConfig", "TaskType"]

_USE_DEFAULT = object()
_TF_CONFIG_ENV = "TF_CONFIG"
_GRPC_SCHEME = "grpc://"

_REPLACEABLE = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
                "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute",
                "device_fn", "protocol", "eval_distribute", "experimental_distribute",
                "experimental_max_worker_delay_secs", "session_creation_timeout_secs")


class TaskType:
    """The task types of a TF_CONFIG cluster."""

    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _count(cluster: ClusterSpec, *jobs) -> int:
    return sum(cluster.num_tasks(job) for job in jobs if job in cluster.jobs)


def _training_cluster(cluster_dict: dict) -> ClusterSpec:
    """The cluster the servers form: TF_CONFIG's cluster without the evaluator."""
    return ClusterSpec({job: tasks for job, tasks in cluster_dict.items()
                        if job != TaskType.EVALUATOR})


def _distributed_setting(tf_config: dict, worker_chief: bool = False) -> dict:
    """cluster_spec, task_type, task_id, master, num_ps/num_worker replicas, is_chief and
    global_id_in_cluster from a parsed TF_CONFIG (TF 1.15 rules). `worker_chief`: a cluster
    of workers only is allowed, worker 0 being the chief (MultiWorkerMirroredStrategy, as TF's
    distribute coordinator does)."""
    cluster_dict = tf_config.get("cluster") or {}
    if not isinstance(cluster_dict, dict):
        raise ValueError(f"TF_CONFIG 'cluster' must be a JSON object; got {cluster_dict!r}")
    task = tf_config.get("task") or {}
    task_type = task.get("type")
    task_id = task.get("index")
    if not cluster_dict:
        return dict(cluster_spec=ClusterSpec({}), task_type=task_type or TaskType.WORKER,
                    task_id=int(task_id or 0), master="", evaluation_master="",
                    num_ps_replicas=0, num_worker_replicas=1,
                    is_chief=task_type in (None, TaskType.WORKER, TaskType.CHIEF),
                    global_id_in_cluster=0)
    cluster = _training_cluster(cluster_dict)
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, it must have one "task" node, '
                         'with a "type".')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, "task" must have an "index".')
    try:
        task_id = int(task_id)
    except (TypeError, ValueError):
        raise ValueError(f"TF_CONFIG task index must be an integer; got {task_id!r}") from None
    chief_type = TaskType.MASTER if TaskType.MASTER in cluster.jobs else TaskType.CHIEF
    if worker_chief and chief_type == TaskType.CHIEF and TaskType.CHIEF not in cluster.jobs \
            and TaskType.WORKER in cluster.jobs:
        chief_type = None  # worker 0 is the chief
    if chief_type == TaskType.CHIEF:
        if TaskType.CHIEF not in cluster.jobs:
            raise ValueError('If "cluster" is set in TF_CONFIG, it must have one "chief" node.')
        if cluster.num_tasks(TaskType.CHIEF) != 1:
            raise ValueError(f'The "cluster" in TF_CONFIG must have only one "chief" node; '
                             f"got {cluster.num_tasks(TaskType.CHIEF)}.")
    if task_type == TaskType.EVALUATOR:
        if task_id != 0:
            raise ValueError(f"evaluator task index must be 0 (there is one evaluator); got "
                             f"{task_id}.")
        return dict(cluster_spec=cluster, task_type=task_type, task_id=task_id, master="",
                    evaluation_master="", num_ps_replicas=0, num_worker_replicas=0,
                    is_chief=False, global_id_in_cluster=None)
    if task_type not in cluster.jobs:
        raise ValueError(f"{task_type} is not a valid task_type in the cluster_spec:\n"
                         f"{cluster.as_dict()}\n\nNote that these values may be coming from "
                         f"the TF_CONFIG environment variable.")
    if task_id not in cluster.task_indices(task_type):
        raise ValueError(f"{task_id} is not a valid task_id for task_type {task_type} in the "
                         f"cluster_spec:\n{cluster.as_dict()}\n\nNote that these values may be "
                         f"coming from the TF_CONFIG environment variable.")
    order = [chief_type, TaskType.WORKER] + sorted(
        job for job in cluster.jobs if job not in (chief_type, TaskType.WORKER))
    offset = 0
    for job in order:
        if job == task_type:
            break
        offset += _count(cluster, job)
    return dict(cluster_spec=cluster, task_type=task_type, task_id=task_id,
                master=_GRPC_SCHEME + cluster.task_address(task_type, task_id),
                evaluation_master="", num_ps_replicas=_count(cluster, TaskType.PS),
                num_worker_replicas=_count(cluster, chief_type, TaskType.WORKER),
                is_chief=task_type == chief_type or (
                    chief_type is None and task_type == TaskType.WORKER and task_id == 0),
                global_id_in_cluster=offset + task_id)


class RunConfig:
    """Configuration of an Estimator's run (TF 1.15 `tf.estimator.RunConfig`).

    Checkpoints are saved every 600 seconds unless `save_checkpoints_steps` or
    `save_checkpoints_secs` says otherwise (they cannot both be set). The cluster properties
    (`cluster_spec`, `task_type`, `task_id`, `master`, `num_ps_replicas`,
    `num_worker_replicas`, `is_chief`, `global_id_in_cluster`) come from TF_CONFIG.

    Raises:
        ValueError: both checkpoint frequencies set; a negative count; TF_CONFIG malformed
            (no task, no chief, task not in the cluster, index out of range); TF_CONFIG's
            model_dir differs from `model_dir`; a `train_distribute`/`eval_distribute` that
            is not a tf.distribute.Strategy.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("`save_checkpoints_steps` and `save_checkpoints_secs` cannot be "
                             "both set.")
        for name, value in (("save_summary_steps", save_summary_steps),
                            ("save_checkpoints_steps", save_checkpoints_steps),
                            ("save_checkpoints_secs", save_checkpoints_secs),
                            ("keep_checkpoint_max", keep_checkpoint_max),
                            ("keep_checkpoint_every_n_hours", keep_checkpoint_every_n_hours),
                            ("log_step_count_steps", log_step_count_steps),
                            ("session_creation_timeout_secs", session_creation_timeout_secs)):
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0, given: {value}")
        if experimental_distribute is not None:  # a tf.contrib.distribute.DistributeConfig
            train_distribute = train_distribute or getattr(experimental_distribute,
                                                           "train_distribute", None)
            eval_distribute = eval_distribute or getattr(experimental_distribute,
                                                         "eval_distribute", None)
        for name, value in (("train_distribute", train_distribute),
                            ("eval_distribute", eval_distribute)):
            if value is not None and not isinstance(value, distribute_lib.Strategy):
                raise ValueError(f"`{name}` must be a tf.distribute.Strategy; got {value!r}")
        if protocol not in (None, "grpc"):
            raise ValueError(f"protocol must be None or 'grpc'; got {protocol!r}")
        tf_config = load_tf_config()
        env_model_dir = tf_config.get("model_dir")
        if env_model_dir and model_dir and os.path.normpath(str(env_model_dir)) != \
                os.path.normpath(str(model_dir)):
            raise ValueError(f"`model_dir` provided in RunConfig construct, if set, must have "
                             f"the same value as the model_dir in TF_CONFIG. model_dir: "
                             f"{model_dir}\nTF_CONFIG['model_dir']: {env_model_dir}.\n")
        self._model_dir = model_dir or env_model_dir or None
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        if session_config is None and isinstance(
                getattr(train_distribute, "extended", None), CollectiveAllReduceExtended) and \
                train_distribute.extended.experimental_between_graph:
            # A worker's sessions see only its own task (TF: the strategy's device filters).
            session_config = train_distribute.update_config_proto(config_pb2.ConfigProto())
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._eval_distribute = eval_distribute
        self._experimental_distribute = experimental_distribute
        self._device_fn = device_fn
        self._protocol = protocol
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._environment = tf_config.get("environment", "local")
        setting = _distributed_setting(tf_config, worker_chief=isinstance(
            getattr(train_distribute, "extended", None), CollectiveAllReduceExtended))
        self._cluster_spec = setting["cluster_spec"]
        self._task_type = setting["task_type"]
        self._task_id = setting["task_id"]
        self._master = setting["master"]
        self._evaluation_master = setting["evaluation_master"]
        self._num_ps_replicas = setting["num_ps_replicas"]
        self._num_worker_replicas = setting["num_worker_replicas"]
        self._is_chief = setting["is_chief"]
        self._global_id_in_cluster = setting["global_id_in_cluster"]
        if self._cluster_spec.jobs:
            logging.info(f"TF_CONFIG environment variable: {tf_config}")

    # -- cluster ----------------------------------------------------------------------------

    @property
    def cluster_spec(self):
        return self._cluster_spec

    @property
    def task_type(self):
        return self._task_type

    @property
    def task_id(self):
        return self._task_id

    @property
    def master(self):
        return self._master

    @property
    def evaluation_master(self):
        return self._evaluation_master

    @property
    def num_ps_replicas(self):
        return self._num_ps_replicas

    @property
    def num_worker_replicas(self):
        return self._num_worker_replicas

    @property
    def is_chief(self):
        return self._is_chief

    @property
    def global_id_in_cluster(self):
        """The task's index among all training tasks: the chief is 0, then the workers, then
        the other jobs in name order (None for the evaluator)."""
        return self._global_id_in_cluster

    @property
    def environment(self):
        return self._environment

    # -- run ----------------------------------------------------------------------------------

    @property
    def model_dir(self):
        return self._model_dir

    @property
    def tf_random_seed(self):
        return self._tf_random_seed

    @property
    def save_summary_steps(self):
        return self._save_summary_steps

    @property
    def save_checkpoints_steps(self):
        return self._save_checkpoints_steps

    @property
    def save_checkpoints_secs(self):
        return self._save_checkpoints_secs

    @property
    def session_config(self):
        return self._session_config

    @property
    def keep_checkpoint_max(self):
        return self._keep_checkpoint_max

    @property
    def keep_checkpoint_every_n_hours(self):
        return self._keep_checkpoint_every_n_hours

    @property
    def log_step_count_steps(self):
        return self._log_step_count_steps

    @property
    def train_distribute(self):
        return self._train_distribute

    @property
    def eval_distribute(self):
        return self._eval_distribute

    @property
    def experimental_distribute(self):
        return self._experimental_distribute

    @property
    def device_fn(self):
        """The device function given to the constructor (None: a replica_device_setter is
        used when the cluster has ps tasks)."""
        return self._device_fn

    @property
    def protocol(self):
        return self._protocol

    @property
    def experimental_max_worker_delay_secs(self):
        return self._experimental_max_worker_delay_secs

    @property
    def session_creation_timeout_secs(self):
        return self._session_creation_timeout_secs

    def replace(self, **kwargs) -> RunConfig:
        """A copy with the given properties replaced (the cluster properties stay).

        Raises:
            ValueError: a property that cannot be replaced, or an invalid combination.
        """
        for key in kwargs:
            if key not in _REPLACEABLE:
                raise ValueError(f"{key} is not in the list of allowed properties: "
                                 f"{list(_REPLACEABLE)}")
        values = {key: getattr(self, "_" + key) for key in _REPLACEABLE}
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            values["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
            values["save_checkpoints_steps"] = None
        values.update(kwargs)
        if values["save_checkpoints_steps"] is not None and \
                values["save_checkpoints_secs"] is not None:
            raise ValueError("`save_checkpoints_steps` and `save_checkpoints_secs` cannot be "
                             "both set.")
        new = copy.copy(self)
        for key, value in values.items():
            setattr(new, "_" + key, value)
        return new

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, '_' + k)!r}" for k in
                           ("model_dir", "task_type", "task_id", "master", "is_chief",
                            "save_checkpoints_steps", "save_checkpoints_secs"))
        return f"RunConfig({fields})"
