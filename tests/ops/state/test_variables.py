"""tf.Variable (TF1 reference semantics), variable collections and initialization helpers."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _ops(graph):
    return [f"{op.name}:{op.type}" for op in graph.get_operations()]


def test_variable_builds_the_tf1_ops(graph):
    v = tf.Variable(1.0, name="v")
    assert _ops(graph) == ["v/initial_value:Const", "v:VariableV2", "v/Assign:Assign",
                           "v/read:Identity"]
    assert v.name == "v:0" and v.op.name == "v" and v.dtype == tf.float32_ref
    assert v.shape.as_list() == [] and v.get_shape().as_list() == []
    assert v.initializer.name == "v/Assign" and v.value().name == "v/read:0"
    assert v.initial_value.name == "v/initial_value:0" and v.graph is graph
    assert v.initializer.get_attr("_class") == [b"loc:@v"]
    assert repr(v) == "<tf.Variable 'v:0' shape=() dtype=float32_ref>"
    assert tf.Variable(2, name="v").name == "v_1:0"
    assert tf.Variable(0.5).name == "Variable:0"


def test_callable_initial_value_is_colocated(graph):
    w = tf.Variable(lambda: tf.zeros([2, 3]), name="w")
    init = w.initial_value.op
    assert init.name == "w/Initializer/zeros"
    assert init.get_attr("_class") == [b"loc:@w"]
    assert w.shape.as_list() == [2, 3]
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(w), np.zeros((2, 3)))


def test_variable_created_under_control_dependencies_ignores_them(graph):
    c = tf.constant(1.0)
    with tf.control_dependencies([c.op]):
        v = tf.Variable(2.0, name="v")
    assert v.initializer.control_inputs == [] and v.op.control_inputs == []


def test_conversion_gives_snapshot_or_ref(graph):
    v = tf.Variable([1.0, 2.0], name="v")
    assert tf.convert_to_tensor(v) is v.value()
    assert tf.convert_to_tensor(v, as_ref=True) is v._ref()
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)
    assert graph.as_graph_element(v) is v._ref()


def test_operators_and_slicing_read_the_value(graph):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v")
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    exprs = [v + 1.0, 1.0 + v, v - 1.0, 2.0 * v, -v, v[1], v[:, 0], tf.matmul(v, v), v @ v,
             v > 2.0, abs(-v)]
    expected = [m + 1, 1 + m, m - 1, 2 * m, -m, m[1], m[:, 0], m @ m, m @ m, m > 2, m]
    with tf.Session() as sess:
        sess.run(v.initializer)
        for got, want in zip(sess.run(exprs), expected):
            np.testing.assert_allclose(got, want)
    assert bool(v) is True
    assert v == v and v != tf.Variable(0.0)
    with pytest.raises(TypeError):
        iter(v)


def test_assign_methods_return_the_ref_or_the_op(graph):
    v = tf.Variable([1.0, 2.0], name="v")
    a = v.assign([5.0, 6.0])
    b = v.assign_add([1.0, 1.0], read_value=False)
    c = v.assign_sub([0.5, 0.5])
    assert a.dtype == tf.float32_ref and a.op.type == "Assign"
    assert isinstance(b, tf.Operation) and b.type == "AssignAdd"
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(a), [5.0, 6.0])
        sess.run(b)
        np.testing.assert_array_equal(sess.run(c), [5.5, 6.5])
        np.testing.assert_array_equal(sess.run(v.read_value()), [5.5, 6.5])
        np.testing.assert_array_equal(v.eval(session=sess), [5.5, 6.5])


def test_scatter_methods_take_indexed_slices(graph):
    v = tf.Variable(np.zeros((3, 2), np.float32), name="v")
    delta = tf.IndexedSlices(tf.constant([[1.0, 1.0], [2.0, 2.0]]), tf.constant([0, 0]))
    add = v.scatter_add(delta)
    upd = v.scatter_update(tf.IndexedSlices(tf.constant([[7.0, 7.0]]), tf.constant([2])))
    nd = v.scatter_nd_add([[1, 1]], [4.0])
    with pytest.raises(TypeError, match="IndexedSlices"):
        v.scatter_sub([1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run([add.op])
        sess.run(upd.op)
        np.testing.assert_array_equal(sess.run(nd), [[3, 3], [0, 4], [7, 7]])


def test_load_and_count_up_to(graph):
    v = tf.Variable([0.0, 0.0], name="v")
    n = tf.Variable(0, name="n")
    up = n.count_up_to(1)
    with tf.Session() as sess:
        v.load([3.0, 4.0], sess)
        np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])
        with sess.as_default():
            v.load([1.0, 1.0])
        np.testing.assert_array_equal(sess.run(v), [1.0, 1.0])
        sess.run(n.initializer)
        assert sess.run(up) == 0
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(up)
    with pytest.raises(ValueError, match="session"):
        v.load([1.0, 1.0])


def test_feeding_a_variable_replaces_its_value(graph):
    v = tf.Variable(1.0, name="v")
    y = v * 2.0
    with tf.Session() as sess:
        assert sess.run(y, {v: 5.0}) == 10.0


def test_collections_and_trainable(graph):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(1.0, name="b", trainable=False)
    c = tf.Variable(1.0, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    d = tf.Variable(1.0, name="scope/d",
                    collections=[tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES])
    assert tf.global_variables() == [a, b, d] and tf.all_variables() == [a, b, d]
    assert tf.trainable_variables() == [a, c, d]
    assert tf.local_variables() == [c] and tf.model_variables() == [d]
    assert tf.global_variables(scope="scope") == [d]
    assert a.trainable is True and b.trainable is False
    with pytest.raises(ValueError, match="collections argument"):
        tf.Variable(1.0, collections="bad")


def test_initializers_and_reports(graph):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable([2.0], name="b")
    loc = tf.Variable(3, name="loc", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    init = tf.global_variables_initializer()
    assert init.name == "init" and init.type == "NoOp"
    report = tf.report_uninitialized_variables()
    assert report.dtype == tf.string
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(report), [b"a", b"b", b"loc"])
        sess.run(tf.variables_initializer([b]))
        np.testing.assert_array_equal(sess.run(report), [b"a", b"loc"])
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value a"):
            sess.run(tf.assert_variables_initialized([a, b]))
        sess.run(init)
        sess.run(tf.local_variables_initializer())
        assert sess.run(report).size == 0
        assert sess.run(tf.assert_variables_initialized([a])) == 0
        assert sess.run([a, b, loc]) == [1.0, [2.0], 3]
    assert tf.variables_initializer([]).type == "NoOp"
    assert tf.assert_variables_initialized([]) is None


def test_report_with_no_variables_is_empty(graph):
    with tf.Session() as sess:
        assert sess.run(tf.report_uninitialized_variables()).shape == (0,)


def test_validate_shape_false_and_explicit_shape(graph):
    x = tf.placeholder_with_default(np.zeros(3, np.float32), [None])
    v = tf.Variable(x, validate_shape=False, name="v")
    assert v.shape.ndims is None
    w = tf.Variable(np.zeros(3, np.float32), shape=[3], name="w")
    assert w.shape.as_list() == [3]
    with pytest.raises(ValueError, match="initial_value must have a shape specified"):
        tf.Variable(x, name="u")
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()
    with pytest.raises(ValueError, match="not compatible"):
        tf.Variable(np.zeros(3, np.float32), shape=[4])
    with tf.Session() as sess:
        sess.run(v.initializer, {x: np.ones(5, np.float32)})
        np.testing.assert_array_equal(sess.run(v), np.ones(5))


def test_dtype_argument_converts_the_initial_value(graph):
    v = tf.Variable([1, 2], dtype=tf.float64, name="v")
    assert v.dtype == tf.float64_ref
    with pytest.raises(ValueError):
        tf.Variable(tf.constant([1, 2]), dtype=tf.float32)


def test_variable_def_wraps_existing_ops(graph):
    v = tf.Variable(3.0, name="v")

    class Def:
        variable_name = "v:0"
        initializer_name = "v/Assign"
        snapshot_name = "v/read:0"
        initial_value_name = "v/initial_value:0"
        trainable = True

    again = tf.Variable(variable_def=Def())
    assert again._ref() is v._ref() and again.initializer is v.initializer
    with tf.Session() as sess:
        sess.run(again.initializer)
        assert sess.run(again) == 3.0


def test_device_scope_and_caching_device(graph):
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
    c = tf.Variable(1.0, name="c", caching_device="/cpu:0")
    assert v.device == "/device:CPU:0" and v.value().device == "/device:CPU:0"
    assert c.value().device == "/device:CPU:0"


def test_initialized_value_reads_after_initialization(graph):
    if not hasattr(tf, "cond"):
        pytest.skip("tf.cond is not available yet")
    v = tf.Variable(5.0, name="v")
    w = tf.Variable(v.initialized_value() * 2.0, name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        assert sess.run(w) == 10.0
