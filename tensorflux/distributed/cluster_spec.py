"""`tf.train.ClusterSpec`: jobs of tasks, each a `host:port` address."""

from __future__ import annotations

from tensorflux.protos import cluster_pb2

__all__ = ["ClusterSpec"]


class ClusterSpec:
    """A cluster: job name -> tasks (a list of addresses, or a dict task index -> address).

    Example:
        >>> ClusterSpec({"ps": ["localhost:2222"], "worker": ["localhost:2223", "w1:2222"]})
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._jobs = {job: dict(tasks) for job, tasks in cluster._jobs.items()}
        elif isinstance(cluster, dict):
            self._jobs = {}
            for job, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    self._jobs[str(job)] = {i: str(addr) for i, addr in enumerate(tasks)}
                elif isinstance(tasks, dict):
                    self._jobs[str(job)] = {int(i): str(addr) for i, addr in tasks.items()}
                else:
                    raise TypeError(f"The tasks for job {job!r} must be a list or a dict "
                                    f"from integers to strings, not {type(tasks).__name__}.")
        elif hasattr(cluster, "job"):  # ClusterDef proto
            self._jobs = {job.name: {int(i): a for i, a in job.tasks.items()}
                          for job in cluster.job}
        else:
            raise TypeError("cluster must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a ClusterDef protocol buffer")

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __ne__(self, other) -> bool:
        return not self == other

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"

    @property
    def jobs(self) -> list:
        return sorted(self._jobs)

    def as_dict(self) -> dict:
        """{job: [addresses]} when task indices are dense from 0, else {job: {index: addr}}."""
        result = {}
        for job, tasks in self._jobs.items():
            if sorted(tasks) == list(range(len(tasks))):
                result[job] = [tasks[i] for i in range(len(tasks))]
            else:
                result[job] = dict(tasks)
        return result

    def as_cluster_def(self):
        proto = cluster_pb2.ClusterDef()
        for job in self.jobs:
            entry = proto.job.add(name=job)
            for index, address in self._jobs[job].items():
                entry.tasks[index] = address
        return proto

    def num_tasks(self, job_name: str) -> int:
        return len(self._tasks(job_name))

    def task_indices(self, job_name: str) -> list:
        return sorted(self._tasks(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._tasks(job_name)
        try:
            return tasks[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index} in job {job_name}") from None

    def job_tasks(self, job_name: str) -> list:
        """Addresses by task index (None for missing indices)."""
        tasks = self._tasks(job_name)
        if not tasks:
            return []
        return [tasks.get(i) for i in range(max(tasks) + 1)]

    def _tasks(self, job_name: str) -> dict:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def task_names(self) -> list:
        """Every task as '/job:J/replica:0/task:T', sorted."""
        return [f"/job:{job}/replica:0/task:{i}" for job in self.jobs
                for i in sorted(self._jobs[job])]
