"""Tasks of a cluster that runs wholly on this machine share its cores (`one_host_cores`)."""

import pytest

from tensorflux.distributed import server as server_mod
from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.protos import config_pb2
from tensorflux.runtime import thread_budget

LOCAL = {"ps": ["localhost:2222"], "worker": ["127.0.0.1:2223", "localhost:2224"]}


@pytest.fixture
def eight_cores(monkeypatch):
    monkeypatch.delenv("TFX_SHARE_CORES", raising=False)
    monkeypatch.setattr(thread_budget, "_PROCESS_THREADS", [])
    monkeypatch.setattr(thread_budget, "process_cores", lambda: 8)


def test_local_cluster_shares_the_cores(eight_cores):
    spec = ClusterSpec(LOCAL)
    # 8 cores: the PS gets one, the two workers (8 - 1) // 2 each.
    assert server_mod.one_host_cores(spec, "ps") == 1
    assert server_mod.one_host_cores(spec, "worker") == 3
    chief = ClusterSpec({"chief": ["localhost:1"], "worker": ["localhost:2", "[::1]:3"]})
    assert server_mod.one_host_cores(chief, "chief") == 2  # 8 // 3 tasks without a PS


def test_budget_left_alone(eight_cores, monkeypatch):
    assert server_mod.one_host_cores(ClusterSpec({"worker": ["localhost:1"]}), "worker") is None
    remote = ClusterSpec({"ps": ["10.1.2.3:2222"], "worker": ["localhost:1"]})
    assert server_mod.one_host_cores(remote, "worker") is None
    spec = ClusterSpec(LOCAL)
    config = config_pb2.ConfigProto(intra_op_parallelism_threads=4)
    assert server_mod.one_host_cores(spec, "worker", config) is None
    config = config_pb2.ConfigProto(inter_op_parallelism_threads=2)
    assert server_mod.one_host_cores(spec, "worker", config) is None
    monkeypatch.setenv("TFX_SHARE_CORES", "0")
    assert server_mod.one_host_cores(spec, "worker") is None
    monkeypatch.delenv("TFX_SHARE_CORES")
    monkeypatch.setattr(thread_budget, "_PROCESS_THREADS", [4])  # `--threads 4`
    assert server_mod.one_host_cores(spec, "worker") is None


def test_server_budget_uses_the_share(eight_cores):
    spec = ClusterSpec({"ps": ["localhost:0"], "worker": ["localhost:0", "localhost:0"]})
    ps = server_mod.Server(spec, "ps", 0, start=False)
    worker = server_mod.Server(spec, "worker", 1, start=False)
    try:
        assert (ps._threads.budget.cores, ps._threads.budget.intra_op) == (1, 1)
        assert (worker._threads.budget.cores, worker._threads.budget.intra_op) == (3, 3)
    finally:
        ps._threads.close()
        worker._threads.close()
