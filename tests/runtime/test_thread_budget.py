"""The process thread budget: ConfigProto settings, cores from affinity and cgroup quotas,
BLAS limits applied during steps and restored, inter-op pools per session, no deadlocks."""

import threading

import numpy as np
import pytest
import threadpoolctl

import tensorflux as tf
from tensorflux.runtime import thread_budget as tb


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.fixture
def fresh_process(monkeypatch):
    """A process state of its own, so sessions other tests left open do not count."""
    process = tb._Process()
    monkeypatch.setattr(tb, "_PROCESS", process)
    return process


def _blas_threads() -> int:
    info = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    return info[0]["num_threads"]


# -- values of the budget ------------------------------------------------------------------

def test_budget_from_config_values():
    config = tf.ConfigProto(intra_op_parallelism_threads=3, inter_op_parallelism_threads=5)
    assert tb.ThreadBudget.from_config(config, cores=2) == tb.ThreadBudget(2, 3, 5)
    assert tb.ThreadBudget.from_config(tf.ConfigProto(), cores=6) == tb.ThreadBudget(6, 6, 6)
    assert tb.ThreadBudget.from_config(None, cores=1).pool_workers == 0
    assert tb.ThreadBudget.from_config(None, cores=4).pool_workers == 3
    caller_only = tb.ThreadBudget.from_config(tf.ConfigProto(inter_op_parallelism_threads=-1),
                                              cores=4)
    assert caller_only.inter_op == -1 and caller_only.pool_workers == 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="intra_op_parallelism_threads"):
        tb.ThreadBudget.from_config(tf.ConfigProto(intra_op_parallelism_threads=-2), cores=2)


def _cgroup(tmp_path, membership, files):
    (tmp_path / "self_cgroup").write_text(membership)
    for rel, text in files.items():
        path = tmp_path / "fs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(tmp_path / "fs"), str(tmp_path / "self_cgroup")


def test_cores_from_affinity_and_cgroup_v2_quota(tmp_path):
    root, me = _cgroup(tmp_path, "0::/job/task\n", {"job/task/cpu.max": "150000 100000\n",
                                                   "job/cpu.max": "max 100000\n"})
    assert tb.cgroup_cpu_quota(root, me) == pytest.approx(1.5)
    assert tb.detect_cores(root, me, getaffinity=lambda pid: {0, 1, 2, 3}) == 2
    assert tb.detect_cores(root, me, getaffinity=lambda pid: {5}) == 1


def test_cgroup_v2_parent_quota_limits_an_unlimited_child(tmp_path):
    root, me = _cgroup(tmp_path, "0::/a/b\n", {"a/b/cpu.max": "max 100000\n",
                                               "a/cpu.max": "300000 100000\n"})
    assert tb.detect_cores(root, me, getaffinity=lambda pid: set(range(8))) == 3


def test_cores_from_cgroup_v1_quota(tmp_path):
    root, me = _cgroup(tmp_path, "4:memory:/x\n2:cpu,cpuacct:/x\n",
                       {"cpu,cpuacct/x/cpu.cfs_quota_us": "50000\n",
                        "cpu,cpuacct/x/cpu.cfs_period_us": "100000\n"})
    assert tb.cgroup_cpu_quota(root, me) == pytest.approx(0.5)
    assert tb.detect_cores(root, me, getaffinity=lambda pid: {0, 1}) == 1


def test_no_quota_leaves_the_affinity(tmp_path):
    root, me = _cgroup(tmp_path, "2:cpu:/\n", {"cpu/cpu.cfs_quota_us": "-1\n",
                                                "cpu/cpu.cfs_period_us": "100000\n"})
    assert tb.cgroup_cpu_quota(root, me) is None
    assert tb.detect_cores(root, me, getaffinity=lambda pid: {0, 1, 2}) == 3
    assert tb.detect_cores(str(tmp_path / "missing"), str(tmp_path / "none"),
                           getaffinity=lambda pid: {0, 1}) == 2


def test_process_threads_override_and_share_among_tasks(monkeypatch):
    monkeypatch.setattr(tb, "_PROCESS_THREADS", [])
    tb.set_process_threads(3)
    assert tb.process_cores() == 3
    assert tb.ThreadBudget.from_config(None) == tb.ThreadBudget(3, 3, 3)
    with pytest.raises(ValueError, match="positive"):
        tb.set_process_threads(0)
    tb.set_process_threads(None)
    assert tb.process_cores() == tb.detect_cores()
    assert tb.share_cores(2, 1, 2) == (1, 1)
    assert tb.share_cores(8, 1, 2) == (1, 3)
    assert tb.share_cores(1, 1, 1) == (1, 1)


def test_blas_threads_policy():
    assert tb.blas_threads(2, 2) == 2
    assert tb.blas_threads(8, 2) == 2  # never more than the cores
    assert tb.blas_threads(2, 2, others=1.0) == 1  # a core taken by another process
    assert tb.blas_threads(4, 4, others=1.0) == 3
    assert tb.blas_threads(4, 4, concurrent=2) == 2  # two kernels at once split the threads
    assert tb.blas_threads(4, 4, concurrent=3) == 1
    assert tb.blas_threads(2, 2, others=5.0, concurrent=4) == 1


def test_load_of_other_processes_from_proc_files(tmp_path):
    (tmp_path / "stat").write_text("cpu  1 2 3\nprocs_running 5\nprocs_blocked 0\n")
    tasks = tmp_path / "task"
    for tid, state in ((11, "R"), (12, "S"), (13, "R")):
        (tasks / str(tid)).mkdir(parents=True)
        (tasks / str(tid) / "stat").write_text(f"{tid} (py (x) y) {state} 1 2 3\n")
    files = {"stat_path": str(tmp_path / "stat"), "task_dir": str(tasks)}
    assert tb.others_running(2, cpu_count=2, **files) == 3.0
    assert tb.others_running(2, cpu_count=4, **files) == 1.5  # half the machine is ours
    assert tb.others_running(2, stat_path=str(tmp_path / "missing")) == 0.0


class _FakeBlas:
    def __init__(self):
        self.calls = []
        self.current = None

    def set(self, threads):
        if threads != self.current:
            self.calls.append(threads)
            self.current = threads

    def restore(self):
        self.calls.append("restore")
        self.current = None


def test_concurrent_kernels_and_load_lower_the_blas_threads():
    load = [0.0]
    blas = _FakeBlas()
    process = tb._Process(probe=lambda cores: load[0], blas=blas)
    budget = tb.ThreadBudget(4, 4, 4)
    process.acquire(budget)
    process.kernel_started()
    process.kernel_started()
    process.kernel_finished()
    process.kernel_finished()
    assert blas.calls == [4, 2, 1, 2, 4]
    load[0] = 2.0
    process.next_probe = 0.0
    process.refresh(budget)
    assert blas.calls[-1] == 2
    load[0] = 0.0
    process.next_probe = 0.0
    process.refresh(budget)  # the larger of the last two samples: still 2
    assert blas.calls[-1] == 2
    process.next_probe = 0.0
    process.refresh(budget)
    assert blas.calls[-1] == 4
    process.release()
    assert blas.calls[-1] == "restore"



def test_a_release_inside_acquire_on_the_same_thread_does_not_deadlock():
    # A session collected while another is being set up: its __del__ releases from inside
    # the probe that `acquire` runs (the suite once hung here).
    blas = _FakeBlas()
    box = []

    def probe(cores):
        if box:
            box.pop().release()
        return 0.0

    process = tb._Process(probe=probe, blas=blas)
    budget = tb.ThreadBudget(4, 4, 4)
    process.acquire(budget)  # the first session
    box.append(process)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (process.acquire(budget), done.set()), daemon=True)
    worker.start()
    assert done.wait(5.0), "acquire deadlocked on a nested release"
    assert process.users == 1 and blas.calls[-1] == 4


# -- BLAS limits in real steps ---------------------------------------------------------------

def test_blas_limit_applies_during_a_step_and_is_restored(graph, fresh_process):
    seen = []

    def probe(x):
        seen.append((_blas_threads(), tb.intra_op_threads()))
        return x

    x = tf.placeholder(tf.float64, [3])
    y = tf.py_func(probe, [x], tf.float64)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        config = tf.ConfigProto(intra_op_parallelism_threads=1)
        with tf.Session(config=config) as sess:
            np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])
        assert seen == [(1, 1)]
        assert _blas_threads() == 2  # restored when the last session closed
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
            sess.run(y, {x: [0.0, 0.0, 0.0]})
        blas, intra = seen[-1]
        assert blas == intra and 1 <= blas <= min(2, tb.process_cores())
        assert _blas_threads() == 2


# -- pools -----------------------------------------------------------------------------------

def test_per_session_pools_are_distinct_and_the_global_one_shared(graph):
    per = tf.ConfigProto(use_per_session_threads=True, inter_op_parallelism_threads=3)
    with tf.Session(config=per) as a, tf.Session(config=per) as b, \
            tf.Session() as c, tf.Session() as d:
        pool_a, pool_b = a._backend.threads.pools[0], b._backend.threads.pools[0]
        assert pool_a is not pool_b and pool_a.num_threads == pool_b.num_threads == 2
        assert c._backend.threads.pools[0] is d._backend.threads.pools[0] is tb.default_pool()
    assert pool_a.try_run(lambda: None) is False  # closed with its session


def test_named_pools_are_shared_by_name_and_keep_their_size(graph):
    pools = [{"num_threads": 2, "global_name": "test-shared"}, {"num_threads": 1}]
    config = tf.ConfigProto(session_inter_op_thread_pool=pools)
    x = tf.constant(np.arange(4.0).reshape(2, 2))
    y = tf.matmul(x, x)
    with tf.Session(config=config) as a, tf.Session(config=config) as b:
        assert a._backend.threads.pools[0] is b._backend.threads.pools[0]
        assert a._backend.threads.pools[1] is not b._backend.threads.pools[1]
        expected = np.arange(4.0).reshape(2, 2) @ np.arange(4.0).reshape(2, 2)
        for index in (0, 1, -1):
            out = a.run(y, options=tf.RunOptions(inter_op_thread_pool=index))
            np.testing.assert_array_equal(out, expected)
        with pytest.raises(tf.errors.InvalidArgumentError, match="inter_op_thread_pool: 2"):
            a.run(y, options=tf.RunOptions(inter_op_thread_pool=2))
    other = tf.ConfigProto(session_inter_op_thread_pool=[{"num_threads": 3,
                                                          "global_name": "test-shared"}])
    with pytest.raises(tf.errors.InvalidArgumentError, match="test-shared"):
        tf.Session(config=other)


def _parallel_loop_graph(n_branches=4, size=64):
    """Independent MatMuls inside a while loop (so the dataflow executor runs them)."""
    x = tf.placeholder(tf.float64, [size, size])

    def body(i, acc):
        branches = [tf.matmul(acc, x) * (0.5 / size) for _ in range(n_branches)]
        return i + 1, tf.add_n(branches) / n_branches

    _, out = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), x])
    return x, out


def _reference(value, size=64):
    acc = value
    for _ in range(3):
        acc = acc @ value * (0.5 / size)
    return acc


def test_pool_on_this_machine_stays_within_the_budget(graph):
    x, out = _parallel_loop_graph()
    value = np.random.RandomState(1).rand(64, 64)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out, {x: value}), _reference(value), rtol=1e-12)
        budget = sess._backend.threads.budget
        pool = sess._backend.threads.pools[0]
    assert budget.cores <= tb.affinity_cores()
    assert pool.num_threads <= max(0, tb.process_cores() - 1)
    assert pool.started <= pool.num_threads
    config = tf.ConfigProto(use_per_session_threads=True, inter_op_parallelism_threads=3)
    with tf.Session(config=config) as sess:
        np.testing.assert_allclose(sess.run(out, {x: value}), _reference(value), rtol=1e-12)
        own = sess._backend.threads.pools[0]
    assert own.num_threads == 2 and 1 <= own.started <= 2  # four MatMuls ready at once


@pytest.mark.parametrize("inter", [1, 2, -1])
def test_many_concurrent_blocked_steps_do_not_deadlock(graph, inter):
    queue = tf.FIFOQueue(100, tf.float64, shapes=[[64, 64]])
    x, out = _parallel_loop_graph()
    take = queue.dequeue() + tf.reduce_sum(out)
    put = queue.enqueue(x)
    value = np.random.RandomState(2).rand(64, 64)
    expected = value + _reference(value).sum()
    config = tf.ConfigProto(inter_op_parallelism_threads=inter, use_per_session_threads=True)
    results, failures = [], []
    with tf.Session(config=config) as sess:
        def consume():
            try:
                results.append(sess.run(take, {x: value}))
            except Exception as err:  # noqa: BLE001 - reported below
                failures.append(err)

        threads = [threading.Thread(target=consume) for _ in range(12)]
        for t in threads:
            t.start()
        for _ in range(12):
            sess.run(put, {x: value})
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads)
    assert not failures
    assert len(results) == 12
    for result in results:
        np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_a_blocking_offloaded_kernel_cannot_starve_its_step():
    pool = tb.KernelPool(1)
    release = threading.Event()
    assert pool.try_run(release.wait)
    assert pool.try_run(lambda: None) is False  # busy: the caller runs it inline
    release.set()
    done = threading.Event()
    for _ in range(200):
        if pool.try_run(done.set):
            break
        threading.Event().wait(0.01)
    assert done.wait(5)
    assert pool.started == 1
    pool.close()


def test_server_threads_flag_rejects_a_bad_count():
    from tensorflux import cli

    with pytest.raises(SystemExit, match="threads"):
        cli.main(["server", "--cluster-json", '{"worker": ["localhost:0"]}', "--job",
                  "worker", "--threads", "0"])
