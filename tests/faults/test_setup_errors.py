"""Mistakes in a program's or a cluster's setup fail at once with an error naming the cause.

A 2 GB constant or GraphDef is a ValueError as in TF (checked before anything that large is
allocated); a port in use is TF's UnknownError "Could not start gRPC server" naming the
address; a session waiting for a task that is not up logs every WAITING_LOG_SECS which task
and address it waits for (TF's "CreateSession still waiting for response from worker");
NanTensorHook names the global step; a Supervisor's session can be made again after an error
(the recovery loop of TF1 programs)."""

import logging
import os
import socket

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import cli
from tensorflux.distributed import master as master_mod
from tensorflux.framework import graph_io
from tensorflux.summary import summary_iterator  # the function, as tf.train's
from tensorflux.train import session_manager


def test_a_constant_of_2gb_is_a_value_error_without_allocating_it():
    view = np.broadcast_to(np.zeros(1, np.float32), (1 << 29,))  # 2 GiB, no memory
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"larger than 2GB.*\[536870912\].*float32"):
            tf.constant(view)
        with pytest.raises(ValueError, match=r"larger than 2GB.*\[1048576, 256\].*float64"):
            tf.constant(0.0, shape=[1 << 20, 1 << 8], dtype=tf.float64)
        with pytest.raises(ValueError, match="larger than 2GB"):
            tf.make_tensor_proto(view)
        just_under = tf.constant(1.5, shape=[3, 2])  # the check keeps small constants
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(just_under), np.full((3, 2), 1.5, np.float32))


def test_a_graph_def_over_the_limit_is_a_value_error_naming_its_largest_node(monkeypatch):
    with tf.Graph().as_default() as graph:
        tf.constant(np.zeros(100, np.float32), name="small")
        tf.constant(np.zeros(3000, np.float32), name="embedding_table")
        tf.constant(1.0, name="after")
        assert graph.as_graph_def().ByteSize() > 12000
        monkeypatch.setattr(graph_io, "MAX_GRAPH_DEF_BYTES", 12000)  # the table alone is 12 KB
        with pytest.raises(ValueError) as info:
            graph.as_graph_def()
    message = str(info.value)
    assert "GraphDef cannot be larger than 2GB" in message
    assert "the largest node is 'embedding_table' with 12" in message, message


def test_a_port_in_use_is_tf_unknown_error_naming_the_address():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        with pytest.raises(tf.errors.UnknownError) as info:
            tf.train.Server({"worker": [f"127.0.0.1:{port}"]}, "worker", 0)
        assert "Could not start gRPC server" in str(info.value)
        assert f"127.0.0.1:{port}" in str(info.value)
    finally:
        holder.close()


def test_a_session_waiting_for_a_missing_task_logs_it(monkeypatch, caplog):
    monkeypatch.setattr(master_mod, "WAITING_LOG_SECS", 0.3)
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    spec = {"worker": [f"127.0.0.1:{ports[0]}"], "ps": [f"127.0.0.1:{ports[1]}"]}
    config = tf.ConfigProto(operation_timeout_in_ms=1200)
    server = tf.train.Server(spec, "worker", 0, config=config)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0)
            with caplog.at_level(logging.WARNING):
                with tf.Session(server.target, config=config) as sess:
                    with pytest.raises(tf.errors.UnavailableError) as info:
                        sess.run(v.initializer)
    finally:
        server.stop()
    waiting = [r.getMessage() for r in caplog.records
               if "CreateSession still waiting" in r.getMessage()]
    assert len(waiting) >= 2, waiting
    assert all(f"/job:ps/replica:0/task:0 at 127.0.0.1:{ports[1]}" in m for m in waiting)
    assert f"127.0.0.1:{ports[1]}" in str(info.value)


def test_nan_tensor_hook_names_the_global_step(caplog):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        loss = tf.where(step >= 3, tf.constant(np.nan), tf.constant(1.0))
        with tf.control_dependencies([loss]):
            train = tf.assign_add(step, 1)
        hook = tf.train.NanTensorHook(loss)
        with caplog.at_level(logging.ERROR):
            with pytest.raises(tf.train.NanLossDuringTrainingError) as info:
                with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
                    for _ in range(10):
                        sess.run(train)
    # The hook reads the global step in the same run as the step's increment (as TF's
    # hooks do), so it sees the value from before or after the step that produced the NaN.
    step = info.value.step
    assert step in (3, 4) and str(info.value) == f"NaN loss during training. (global step {step})"
    assert any(f"loss = NaN at global step {step}." in r.getMessage() for r in caplog.records)
    with tf.Graph().as_default():  # without a global step: TF's message unchanged
        nan, noop = tf.constant(np.nan), tf.no_op()
        hook = tf.train.NanTensorHook(nan, fail_on_nan_loss=False)
        with caplog.at_level(logging.WARNING):
            with tf.train.MonitoredSession(hooks=[hook]) as sess:
                sess.run(noop)
                assert sess.should_stop()
    assert any(r.getMessage() == "Model diverged with loss = NaN." for r in caplog.records)
    assert str(tf.train.NanLossDuringTrainingError()) == "NaN loss during training."


def test_a_supervisor_session_is_made_again_after_an_error(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        sv = tf.train.Supervisor(logdir=str(tmp_path), global_step=step, save_model_secs=0,
                                 save_summaries_secs=0)
        with pytest.raises(tf.errors.AbortedError):
            with sv.managed_session() as sess:
                sess.run(train)
                sv.saver.save(sess, os.path.join(str(tmp_path), "model.ckpt"),
                              global_step=step)
                raise tf.errors.AbortedError(None, None, "the PS restarted")
        with sv.managed_session() as sess:  # restores from the checkpoint, writes events
            assert sess.run(train) == 2
    graphs = 0
    for name in os.listdir(tmp_path):
        if name.startswith("events.out"):
            graphs += sum(bool(e.graph_def) for e in
                          summary_iterator(str(tmp_path / name)))
    assert graphs == 2


@pytest.mark.parametrize("argv, tf_config, expected", [
    (["--cluster-json", '{"worker": ['], None, "--cluster-json is not valid JSON"),
    (["--cluster-json", '{"worker": ["127.0.0.1:0"]}', "--job", "worker", "--task", "3"], None,
     "No task with index 3 in job worker (the cluster of --cluster-json"),
    (["--cluster-json", '{"worker": ["127.0.0.1:0"]}', "--job", "ps"], None,
     "No such job in cluster: 'ps'"),
    ([], '{"cluster": {"worker": ["127.0.0.1:0"]}, "task": {"type": "worker", "index": 5}}',
     "No task with index 5 in job worker (the cluster of TF_CONFIG"),
    ([], '{"cluster": {"worker": ["127.0.0.1:0"]}, "task": {"type": "worker", "index": "x"}}',
     "the task index 'x' is not an integer (TF_CONFIG)"),
    ([], "{bad", "TF_CONFIG is not valid JSON"),
])
def test_tensorflux_server_names_a_setup_mistake_in_one_line(monkeypatch, argv, tf_config,
                                                             expected):
    if tf_config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", tf_config)
    with pytest.raises(SystemExit) as info:
        cli.main(["server", *argv])
    assert expected in str(info.value.code), info.value.code


def test_tensorflux_server_on_a_port_in_use_names_it_in_one_line():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        with pytest.raises(SystemExit) as info:
            cli.main(["server", "--cluster-json", f'{{"ps": ["127.0.0.1:{port}"]}}', "--job",
                      "ps"])
    finally:
        holder.close()
    assert str(info.value.code).startswith(
        f"tensorflux server ps:0: Could not start gRPC server: cannot bind 127.0.0.1:{port}")


def test_a_worker_waiting_for_the_chief_says_so(monkeypatch, caplog):
    monkeypatch.setattr(session_manager, "WAIT_REPORT_SECS", 0.3)
    with tf.Graph().as_default():
        tf.Variable(1.0, name="never_initialized")
        manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                          recovery_wait_secs=0.1)
        with caplog.at_level(logging.WARNING):
            with pytest.raises(tf.errors.DeadlineExceededError, match="never_initialized"):
                manager.wait_for_session("", max_wait_secs=1.0)
    reports = [r.getMessage() for r in caplog.records if "Still waiting" in r.getMessage()]
    assert 2 <= len(reports) <= 4, reports
    assert all("never_initialized" in m and "the chief" in m for m in reports), reports


def test_two_tasks_at_one_address_are_named_instead_of_missing_devices():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = {"worker": [f"127.0.0.1:{port}"], "ps": [f"127.0.0.1:{port}"]}
    worker = tf.train.Server(spec, "worker", 0)
    try:
        with pytest.raises(tf.errors.UnknownError, match=f"cannot bind 127.0.0.1:{port}"):
            tf.train.Server(spec, "ps", 0)
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(3.0)
            with tf.Session(worker.target) as sess:
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run(v.initializer)
        assert (f"Task /job:ps/replica:0/task:0 at 127.0.0.1:{port} answered as "
                "/job:worker/replica:0/task:0: two tasks of the cluster spec have the same "
                "address") in str(info.value)
    finally:
        worker.stop()
