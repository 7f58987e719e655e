"""TF1 programs' imports of TensorFlow-private paths (`from tensorflow.python.client import
device_lib`, ...) resolve, under `tensorflux.python`, to the very modules of the public API;
other private paths raise ModuleNotFoundError naming the path."""

import importlib

import numpy as np
import pytest

import tensorflux as tf
import tensorflux.python as private


@pytest.mark.parametrize("path", sorted(private._ALIASES))
def test_each_private_path_is_the_serving_module(path):
    module = importlib.import_module(f"tensorflux.python.{path}")
    assert module is importlib.import_module(private._ALIASES[path])


def test_device_lib_lists_the_session_devices():
    from tensorflux.python.client import device_lib

    devices = device_lib.list_local_devices()
    assert [(d.name, d.device_type) for d in devices] == [("/device:CPU:0", "CPU")]
    assert not any(d.device_type == "GPU" for d in devices)
    config = tf.ConfigProto(device_count={"CPU": 2})
    assert [d.name for d in device_lib.list_local_devices(config)] == [
        "/device:CPU:0", "/device:CPU:1"]


def test_a_program_using_private_paths_runs():
    from tensorflux.python.framework import graph_util, ops
    from tensorflux.python.platform import gfile
    from tensorflux.python.saved_model import tag_constants
    from tensorflux.python.util import nest

    with ops.Graph().as_default() as graph:
        assert ops.get_default_graph() is graph is tf.get_default_graph()
        x = tf.Variable([1.0, 2.0], name="x")
        tf.identity(x * 3.0, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["y"])
    with ops.Graph().as_default():
        (out,) = tf.import_graph_def(frozen, return_elements=["y:0"])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), [3.0, 6.0])
    assert tag_constants.SERVING == "serve" and gfile.Exists is tf.gfile.Exists
    assert nest.flatten({"a": (1, 2)}) == [1, 2]


def test_other_private_paths_are_refused_by_name():
    with pytest.raises(ModuleNotFoundError, match="tensorflux.python.ops.no_such_ops"):
        importlib.import_module("tensorflux.python.ops.no_such_ops")


@pytest.mark.parametrize("path", sorted(private.private_names.facade_paths()))
def test_each_facade_holds_the_public_objects(path):
    module = importlib.import_module(f"tensorflux.python.{path}")
    expected = private.private_names.facade_attributes(path)
    assert expected and all(getattr(module, name) is obj for name, obj in expected.items())


def test_facade_names_are_the_public_api_objects():
    from tensorflux.python.data.ops import dataset_ops
    from tensorflux.python.lib.io import file_io
    from tensorflux.python.ops import control_flow_ops, data_flow_ops, state_ops
    from tensorflux.python.training import training

    assert control_flow_ops.cond is tf.cond and control_flow_ops.while_loop is tf.while_loop
    assert control_flow_ops.group is tf.group and state_ops.assign_sub is tf.assign_sub
    assert data_flow_ops.FIFOQueue is tf.FIFOQueue
    assert training.AdamOptimizer is tf.train.AdamOptimizer
    assert file_io.file_exists is tf.gfile.Exists and dataset_ops.Dataset is tf.data.Dataset


def test_paths_below_an_aliased_module_resolve_to_its_submodules():
    from tensorflux.python.estimator.canned import dnn
    from tensorflux.python.keras import layers

    from tensorflux.keras import layers as public_layers

    assert layers is public_layers and dnn.DNNClassifier is tf.estimator.DNNClassifier
    with pytest.raises(ModuleNotFoundError, match="tensorflux.python.keras.no_such_module"):
        importlib.import_module("tensorflux.python.keras.no_such_module")


def test_an_aliased_module_keeps_its_own_spec():
    nest = importlib.import_module("tensorflux.python.util.nest")
    assert nest.__spec__.name == "tensorflux.framework.nest"
    importlib.reload(nest)


def test_with_dependencies_orders_the_update_before_the_read():
    from tensorflux.python.ops import control_flow_ops, state_ops

    with tf.Graph().as_default():
        counter = tf.Variable(1.0)
        bumped = control_flow_ops.with_dependencies(
            [state_ops.assign_add(counter, 2.0)], tf.identity(counter) * 10.0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(bumped) == 30.0 and sess.run(counter) == 3.0


def test_a_custom_optimizer_written_on_private_modules_trains():
    """An era-typical optimizer: slots through `_zeros_slot`, `_prepare`/`_apply_dense`/`_finish`
    overridden, updates built from state_ops/math_ops/control_flow_ops; checked against NumPy."""
    from tensorflux.python.framework import ops
    from tensorflux.python.ops import control_flow_ops, math_ops, state_ops
    from tensorflux.python.training import optimizer

    class MaxMomentum(optimizer.Optimizer):
        def __init__(self, learning_rate, decay):
            super().__init__(False, "MaxMomentum")
            self._lr, self._decay = learning_rate, decay

        def _create_slots(self, var_list):
            for var in var_list:
                self._zeros_slot(var, "peak", self._name)

        def _prepare(self):
            self._lr_t = ops.convert_to_tensor(self._lr, name="lr")

        def _apply_dense(self, grad, var):
            peak = self.get_slot(var, "peak")
            peak_t = state_ops.assign(peak, math_ops.maximum(peak * self._decay, abs(grad)))
            step = state_ops.assign_sub(var, self._lr_t * grad / (peak_t + 1.0))
            return control_flow_ops.group(step, peak_t)

        _resource_apply_dense = _apply_dense

    start = np.array([2.0, -1.0, 0.5], np.float32)
    value, peak = start.astype(np.float64), np.zeros(3)
    for _ in range(4):
        grad = 2.0 * value
        peak = np.maximum(peak * 0.5, np.abs(grad))
        value = value - 0.3 * grad / (peak + 1.0)
    with tf.Graph().as_default():
        var = tf.Variable(start)
        train = MaxMomentum(0.3, 0.5).minimize(tf.reduce_sum(var * var))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                sess.run(train)
            np.testing.assert_allclose(sess.run(var), value, rtol=1e-5)


def test_deprecation_decorators_warn_once_and_can_be_silenced(caplog):
    from tensorflux.python.util import deprecation

    @deprecation.deprecated("2019-01-01", "Use twice() instead.")
    def double(x):
        return 2 * x

    @deprecation.deprecated_args(None, "Pass nothing.", "scale")
    def shift(x, scale=None):
        return x + 1

    with caplog.at_level("WARNING"):
        assert double(3) == 6 and double(4) == 8
        assert shift(1) == 2 and shift(1, scale=3) == 2
    messages = [r.getMessage() for r in caplog.records]
    assert sum("double is deprecated" in m and "after 2019-01-01" in m for m in messages) == 1
    assert sum("with scale is deprecated" in m for m in messages) == 1
    caplog.clear()

    @deprecation.deprecated(None, "Gone.")
    def quiet():
        return 1

    deprecation._PRINT_DEPRECATION_WARNINGS = False
    try:
        assert quiet() == 1
    finally:
        deprecation._PRINT_DEPRECATION_WARNINGS = True
    assert not caplog.records
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        deprecation.deprecated("2019/01/01", "x")
    with pytest.raises(ValueError, match="not present"):
        deprecation.deprecated_args(None, "x", "nope")(shift.__wrapped__)


def test_tf_inspect_getargspec_is_the_tf1_named_tuple():
    from tensorflux.python.util import tf_inspect

    def f(a, b=2, *rest, **options):
        return a

    assert tf_inspect.getargspec(f) == tf_inspect.ArgSpec(["a", "b"], "rest", "options", (2,))
    assert tf_inspect.getargspec(f).keywords == "options"

    def g(a, *, b):
        return a

    with pytest.raises(ValueError, match="getfullargspec"):
        tf_inspect.getargspec(g)


def _trained_checkpoint(directory):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="input")
        weights = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        bias = tf.Variable([0.5, -1.0], name="b")
        y = tf.add(tf.matmul(x, weights), bias, name="output")
        step = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(y))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step, {x: np.ones((2, 3))})
            expected = sess.run(y, {x: [[1.0, 2.0, 3.0]]})
            prefix = saver.save(sess, str(directory / "model.ckpt"))
            tf.train.write_graph(sess.graph_def, str(directory), "graph.pbtxt")
            saver.export_meta_graph(str(directory / "model.meta"))
    return prefix, expected


def _run_frozen(graph_def):
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            return sess.run("output:0", {"input:0": [[1.0, 2.0, 3.0]]})


def test_freeze_graph_from_a_graph_file_and_a_checkpoint(tmp_path):
    from tensorflux.python.tools import freeze_graph

    prefix, expected = _trained_checkpoint(tmp_path)
    frozen = freeze_graph.freeze_graph(
        str(tmp_path / "graph.pbtxt"), "", False, prefix, "output", "save/restore_all",
        "save/Const:0", str(tmp_path / "frozen.pb"), True, "")
    assert not any(node.op.startswith("Variable") or "Adam" in node.name
                   for node in frozen.node)
    np.testing.assert_allclose(_run_frozen(frozen), expected)
    written = tf.GraphDef()
    written.ParseFromString((tmp_path / "frozen.pb").read_bytes())
    assert written == frozen
    from_meta = freeze_graph.freeze_graph(
        "", "", True, prefix, "output", "", "", "", True, "",
        input_meta_graph=str(tmp_path / "model.meta"))
    np.testing.assert_allclose(_run_frozen(from_meta), expected)
    with pytest.raises(ValueError, match="doesn't exist"):
        freeze_graph.freeze_graph(str(tmp_path / "graph.pbtxt"), "", False,
                                  str(tmp_path / "missing"), "output", "", "", "", True, "")
    with pytest.raises(ValueError, match="output_node_names"):
        freeze_graph.freeze_graph(str(tmp_path / "graph.pbtxt"), "", False, prefix, "", "",
                                  "", "", True, "")
    assert freeze_graph.main([f"--input_graph={tmp_path / 'graph.pbtxt'}",
                              f"--input_checkpoint={prefix}", "--output_node_names=output",
                              f"--output_graph={tmp_path / 'cli.pb'}"]) == 0
    assert (tmp_path / "cli.pb").read_bytes() == (tmp_path / "frozen.pb").read_bytes()


def test_inspect_checkpoint_prints_names_values_and_counts(tmp_path, capsys):
    from tensorflux.python.tools import inspect_checkpoint

    prefix, _ = _trained_checkpoint(tmp_path)
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, "", False)
    listing = capsys.readouterr().out
    assert "w (DT_FLOAT) [3,2]" in listing and "b/Adam (DT_FLOAT) [2]" in listing
    # w, b and their two Adam slots each, and the two beta powers.
    assert listing.rstrip().endswith("# Total number of params: 26")
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, "b", False)
    value_lines = capsys.readouterr().out.splitlines()
    assert value_lines[0] == "tensor_name:  b" and value_lines[1].startswith("[")
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, "", False, True, "Adam")
    names = capsys.readouterr().out.splitlines()
    assert names[:2] == ["tensor_name:  b", "tensor_name:  b/Adam"]
    assert names[-1] == "# Total number of params: 10"
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix + ".index", "", False)
    assert f"--file_name={prefix}" in capsys.readouterr().out


def test_tf_debug_imports_its_filter_works_and_its_wrappers_say_they_are_absent():
    from tensorflux.python import debug as tf_debug

    assert tf_debug.has_inf_or_nan(None, np.array([1.0, np.inf]))
    assert tf_debug.has_inf_or_nan(None, np.array([[np.nan]], np.float16))
    assert not tf_debug.has_inf_or_nan(None, np.array([1.0, 2.0]))
    assert not tf_debug.has_inf_or_nan(None, np.array([1, 2])) and \
        not tf_debug.has_inf_or_nan(None, None)
    with tf.Graph().as_default(), tf.Session() as sess:
        for wrapper in (tf_debug.LocalCLIDebugWrapperSession, tf_debug.DumpingDebugHook):
            with pytest.raises(tf.errors.UnimplementedError, match="add_check_numerics_ops"):
                wrapper(sess)


def test_generated_op_modules_take_inputs_then_attrs_by_position():
    from tensorflux.python.framework import ops
    from tensorflux.python.ops import gen_math_ops, gen_nn_ops
    from tensorflux.python.training import training_ops

    from tensorflux.python import gen_ops

    assert [gen_ops.snake_case(t) for t in ("ReluGrad", "Conv2DBackpropInput", "LRN",
                                            "BatchMatMulV2", "MatMul")] == [
        "relu_grad", "conv2d_backprop_input", "lrn", "batch_mat_mul_v2", "mat_mul"]
    graph = tf.Graph()
    with graph.as_default():
        @ops.RegisterGradient("TfxGuidedReluProbe")
        def _guided(op, grad):
            # Guided backprop as 2017 visualisation code wrote it (TF 1.x's hidden name).
            return tf.where(grad > 0.0, gen_nn_ops._relu_grad(grad, op.outputs[0]),
                            tf.zeros_like(grad))

        x = tf.constant([-1.0, 2.0, 3.0])
        with graph.gradient_override_map({"Relu": "TfxGuidedReluProbe"}):
            y = tf.nn.relu(x)
        guided = tf.gradients(y * tf.constant([1.0, -1.0, 2.0]), x)[0]
        var = tf.Variable([1.0, 2.0])
        step = training_ops.apply_gradient_descent(var, 0.5, tf.constant([1.0, -2.0]))
        pooled = gen_nn_ops.max_pool_grad(tf.constant([[[[1.0], [4.0]], [[2.0], [3.0]]]]),
                                          tf.constant([[[[4.0]]]]), tf.constant([[[[7.0]]]]),
                                          [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        product = gen_math_ops.mat_mul([[1.0, 2.0]], [[3.0], [4.0]], transpose_a=False)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(guided), [0.0, 0.0, 2.0])
            np.testing.assert_array_equal(sess.run(step), [0.5, 3.0])
            np.testing.assert_array_equal(sess.run(pooled).ravel(), [0.0, 7.0, 0.0, 0.0])
            assert sess.run(product).tolist() == [[11.0]]
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        gen_math_ops.mat_mul([[1.0]], [[1.0]], a=[[2.0]])
    assert not hasattr(gen_nn_ops, "no_such_op")


def test_metrics_impl_serves_the_streaming_confusion_matrix():
    from tensorflux.python.ops import metrics_impl

    assert metrics_impl.accuracy is tf.metrics.accuracy
    labels = np.array([0, 2, 1, 2, 2])
    preds = np.array([0, 1, 1, 2, 0])
    weights = np.array([1.0, 1.0, 0.0, 2.0, 1.0])
    with tf.Graph().as_default():
        total, update = metrics_impl._streaming_confusion_matrix(labels, preds, 3, weights)
        unweighted, update_all = metrics_impl._streaming_confusion_matrix(labels, preds, 3)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run([update, update_all])
            got, got_all = sess.run(update), sess.run(unweighted)
    ref = np.zeros((3, 3))
    np.add.at(ref, (labels, preds), weights)
    np.testing.assert_array_equal(got, 2 * ref)
    ref_all = np.zeros((3, 3))
    np.add.at(ref_all, (labels, preds), 1.0)
    np.testing.assert_array_equal(got_all, ref_all)
