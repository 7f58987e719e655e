"""tf.config: devices, threading, optimizer and placement settings, and their effect on the
sessions created afterwards."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.config import devices
from tensorflux.protos import config_pb2, rewriter_config_pb2
from tensorflux.runtime import process_config, thread_budget


@pytest.fixture(autouse=True)
def _restore_process_settings():
    saved = {k: v for k, v in vars(process_config.defaults).items() if not k.startswith("_")}
    saved["rewriter"] = dict(saved["rewriter"])   # set_experimental_options updates it in place
    visible, virtual = list(devices._visible), dict(devices._virtual)
    yield
    for key, value in saved.items():
        setattr(process_config.defaults, key, value)
    devices._visible[:] = visible
    devices._virtual.clear()
    devices._virtual.update(virtual)


def test_device_listing_has_one_cpu_and_no_gpu():
    cpu = tf.config.experimental.list_physical_devices("CPU")
    assert cpu == [tf.config.PhysicalDevice("/physical_device:CPU:0", "CPU")]
    assert tf.config.experimental.list_physical_devices("GPU") == []
    assert tf.config.list_physical_devices() == cpu
    assert tf.config.list_logical_devices("CPU")[0].name == \
        "/job:localhost/replica:0/task:0/device:CPU:0"
    assert tf.config.experimental_list_devices() == [
        "/job:localhost/replica:0/task:0/device:CPU:0"]
    assert tf.config.experimental.get_visible_devices() == cpu
    with pytest.raises(TypeError, match="device_type"):
        tf.config.list_physical_devices(0)


def test_gpu_only_settings_raise_value_error_naming_the_device():
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="non-GPU.*CPU:0"):
        tf.config.experimental.set_memory_growth(cpu, True)
    with pytest.raises(ValueError, match="non-GPU"):
        tf.config.experimental.get_memory_growth(cpu)
    with pytest.raises(ValueError, match="must stay visible"):
        tf.config.experimental.set_visible_devices([], "CPU")
    with pytest.raises(ValueError, match="Unrecognized device"):
        tf.config.experimental.set_visible_devices(
            [tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")])
    with pytest.raises(ValueError, match="memory limit"):
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration(memory_limit=100)])


def test_thread_settings_become_the_session_budget_defaults():
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(3)
    assert tf.config.threading.get_intra_op_parallelism_threads() == 1
    budget = thread_budget.ThreadBudget.from_config(None, cores=2)
    assert (budget.intra_op, budget.inter_op) == (1, 3)
    explicit = config_pb2.ConfigProto(intra_op_parallelism_threads=2)
    assert thread_budget.ThreadBudget.from_config(explicit, cores=2).intra_op == 2
    with pytest.raises(ValueError, match="non-negative"):
        tf.config.threading.set_intra_op_parallelism_threads(-1)


def test_soft_placement_default_lets_a_gpu_op_run_on_the_cpu():
    with tf.Graph().as_default():
        with tf.device("/device:GPU:0"):
            x = tf.constant(2.0) * 3.0
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.Session().run(x)
        tf.config.set_soft_device_placement(True)
        assert tf.config.get_soft_device_placement()
        assert tf.Session().run(x) == 6.0


def test_logical_cpus_are_devices_of_later_sessions():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    assert len(tf.config.list_logical_devices("CPU")) == 2
    with tf.Graph().as_default():
        with tf.device("/device:CPU:1"):
            y = tf.constant(np.arange(3.0)) + 1
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), [1.0, 2.0, 3.0])
            names = [d.name for d in sess.list_devices()]
    assert any(name.endswith("CPU:1") for name in names)
    tf.config.set_logical_device_configuration(cpu, None)
    assert len(tf.config.list_logical_devices()) == 1


def test_optimizer_options_fill_in_what_the_config_leaves_unset():
    assert process_config.rewrite_options_for(None) is None
    tf.config.optimizer.set_experimental_options({"constant_folding": False,
                                                  "disable_meta_optimizer": True})
    assert tf.config.optimizer.get_experimental_options() == {
        "constant_folding": False, "disable_meta_optimizer": True}
    rewriter = process_config.rewrite_options_for(None)
    assert rewriter.constant_folding == rewriter_config_pb2.RewriterConfig.OFF
    assert rewriter.disable_meta_optimizer
    own = config_pb2.ConfigProto()
    own.graph_options.rewrite_options.constant_folding = rewriter_config_pb2.RewriterConfig.ON
    assert process_config.rewrite_options_for(own).constant_folding == \
        rewriter_config_pb2.RewriterConfig.ON
    with pytest.raises(ValueError, match="Unknown optimizer option 'fold'"):
        tf.config.optimizer.set_experimental_options({"fold": True})
    tf.config.optimizer.set_jit(True)
    assert tf.config.optimizer.get_jit()
    assert process_config.optimizer_options_for(None).global_jit_level == \
        config_pb2.OptimizerOptions.ON_1
    with tf.Graph().as_default():   # values unchanged with the options applied
        a = tf.constant([1.0, 2.0])
        assert list(tf.Session().run(tf.exp(a) * 2 + a)) == pytest.approx(
            list(np.exp([1.0, 2.0]) * 2 + [1.0, 2.0]))


def test_eager_only_switches():
    with pytest.raises(ValueError, match="eager"):
        tf.config.experimental_run_functions_eagerly(True)
    tf.config.experimental_run_functions_eagerly(False)
    assert not tf.config.experimental_functions_run_eagerly()
    tf.config.experimental.set_device_policy("silent")
    assert tf.config.experimental.get_device_policy() == "silent"
    with pytest.raises(ValueError, match="device policy"):
        tf.config.experimental.set_device_policy("loud")
    tf.config.experimental.set_device_policy(None)
