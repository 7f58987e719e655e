"""`TPUClusterResolver` (TF 1.15): a TPU given by its `grpc://host:port` address resolves to a
one-worker cluster; a Cloud TPU *name* would need Google Cloud's APIs, which tensorflux does
not call, so it raises a ValueError saying so."""

from __future__ import annotations

from tensorflux.distribute.cluster_resolver.resolvers import SimpleClusterResolver

__all__ = ["TPUClusterResolver"]


class TPUClusterResolver(SimpleClusterResolver):
    """The cluster of a TPU worker at a `grpc://` address.

    Raises:
        ValueError: no TPU given, or a Cloud TPU name (not a grpc:// address).
    """

    def __init__(self, tpu=None, zone=None, project=None, job_name="worker",
                 coordinator_name=None, coordinator_address=None, credentials="default",
                 service=None, discovery_url=None):
        if isinstance(tpu, list):
            tpu = tpu[0] if len(tpu) == 1 else None
        if not tpu:
            raise ValueError("Please provide a TPU Name to connect to.")
        if isinstance(tpu, bytes):
            tpu = tpu.decode()
        if not str(tpu).startswith("grpc://"):
            raise ValueError(f"TPUClusterResolver: cannot resolve the Cloud TPU name {tpu!r}: "
                             f"tensorflux does not call Google Cloud APIs and has no TPUs; give "
                             f"a grpc://host:port address, or run with use_tpu=False.")
        address = str(tpu)[len("grpc://"):]
        cluster = {job_name: [address]}
        if coordinator_name is not None and coordinator_address is not None:
            cluster[coordinator_name] = [coordinator_address]
        super().__init__(cluster, master=str(tpu), task_type=job_name, task_id=0,
                         rpc_layer="grpc")
        self.tpu, self.zone, self.project = tpu, zone, project

    def get_master(self):
        return self.master()

    def get_job_name(self):
        return self.task_type
