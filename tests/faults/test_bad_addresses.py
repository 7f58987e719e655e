"""Fault probes, round four: task addresses and session targets with a port gRPC cannot take
fail naming the address (gRPC alone bound port 99999 as 34463, and called 'abc' a port in use)."""

import os
import subprocess
import sys

import pytest

import tensorflux as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("address", ["127.0.0.1:99999", "127.0.0.1:abc", "127.0.0.1", "host:"])
def test_a_server_address_without_a_valid_port_is_invalid_argument_naming_it(address):
    spec = tf.train.ClusterSpec({"worker": [address]})
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.train.Server(spec, job_name="worker", task_index=0)
    assert f'Could not parse port for local server from "{address}"' in str(info.value)
    assert "/job:worker/task:0" in str(info.value)


def test_a_session_target_with_a_port_out_of_range_names_it():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.Session("grpc://127.0.0.1:99999")
    assert "'grpc://127.0.0.1:99999': port 99999 is out of range" in str(info.value)


def test_the_server_command_reports_a_bad_port_in_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "tensorflux.cli", "server", "--cluster-json",
         '{"ps": ["127.0.0.1:99999"]}', "--job", "ps", "--task", "0"],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert 'tensorflux server ps:0: Could not parse port for local server from ' \
        '"127.0.0.1:99999"' in proc.stderr
