"""Control-flow primitives and tf.cond / tf.case: dead values, Merge, ControlTrigger, branch
side effects, nested structures, errors, and the TF-written while/cond GraphDef fixture."""

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.control_flow import primitives as cf

COVERED_OPS = {"NoOp", "Switch", "RefSwitch", "Merge", "RefMerge", "LoopCond", "ControlTrigger"}

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures")


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# -- the primitives ---------------------------------------------------------------------------

@pytest.mark.parametrize("pred", [True, False])
def test_switch_forwards_to_one_output_and_the_other_is_dead(pred):
    x = tf.constant([1.0, 2.0])
    p = tf.placeholder(tf.bool, [])
    out_false, out_true = cf.switch(x, p)
    assert out_false.shape.as_list() == [2] and out_true.dtype == tf.float32
    merged, index = cf.merge([out_false * 2.0, out_true * 3.0])
    value, chosen = _run([merged, index], {p: pred})
    np.testing.assert_array_equal(value, [3.0, 6.0] if pred else [2.0, 4.0])
    assert chosen == int(pred)


def test_dead_values_propagate_through_ops_and_control_edges():
    x = tf.constant(3.0)
    p = tf.placeholder(tf.bool, [])
    out_false, out_true = cf.switch(x, p)
    dead_chain = tf.sqrt(out_true * 2.0 + 1.0)  # never runs when p is False
    with tf.control_dependencies([dead_chain]):
        gated = tf.constant(5.0)  # a dead control input makes it dead too
    live = out_false + 1.0
    merged, index = cf.merge([gated, live])
    assert _run([merged, index], {p: False}) == [4.0, 1]
    value, index_value = _run([merged, index], {p: True})
    assert value == 5.0 and index_value == 0


def test_merge_of_two_live_inputs_forwards_the_first_to_arrive():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    merged, index = cf.merge([a, b])
    value, chosen = _run([merged, index])
    assert index.dtype == tf.int32 and merged.shape.as_list() == []
    assert (value, chosen) in ((1.0, 0), (2.0, 1))
    # The input that is ready strictly earlier is the one forwarded.
    slow = tf.identity(tf.identity(tf.identity(b)))
    merged2, index2 = cf.merge([slow, a])
    assert _run([merged2, index2]) == [1.0, 1]


def test_merge_of_all_dead_inputs_is_dead():
    p = tf.placeholder(tf.bool, [])
    f, t = cf.switch(tf.constant(1), p)
    merged, _ = cf.merge([t, t + 1])
    fallback, index = cf.merge([merged, f])
    assert _run([fallback, index], {p: False}) == [1, 1]


def test_merge_shape_function_keeps_what_inputs_share():
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [2, None])
    c = tf.placeholder(tf.float32, [4])
    assert cf.merge([a, b])[0].shape.as_list() == [2, None]
    assert cf.merge([a, c])[0].shape.ndims is None
    with pytest.raises(TypeError):
        cf.merge([a, tf.constant(1)])
    with pytest.raises(ValueError, match="None"):
        cf.merge([a, None])


def test_switch_needs_a_scalar_predicate():
    with pytest.raises(ValueError, match="rank 0"):
        cf.switch(tf.constant(1.0), tf.constant([True, False]))
    with pytest.raises(ValueError, match="rank 0"):
        cf.loop_cond(tf.constant([True]))


def test_loop_cond_and_merge_kernels_forward_live_values():
    assert _run(cf.loop_cond(tf.constant(True))) == np.True_
    assert cf.Merge.kernels["CPU"].fn(np.float32(4.0), np.float32(5.0)) == (4.0, 0)
    assert cf.Switch.kernels["CPU"].fn(np.float32(4.0), True) == (4.0, 4.0)


def test_control_trigger_fires_with_dead_inputs():
    p = tf.placeholder(tf.bool, [])
    _, out_true = cf.switch(tf.constant(1.0), p)
    dead = tf.identity(out_true)
    trigger = cf.control_trigger()
    trigger._add_control_input(dead.op)
    with tf.control_dependencies([trigger]):
        after = tf.constant(7.0)
    assert _run(after, {p: False}) == 7.0
    assert _run(after, {p: True}) == 7.0


def test_ref_switch_and_ref_merge_forward_a_variable():
    v = tf.Variable(5.0)
    p = tf.placeholder(tf.bool, [])
    f, t = cf.switch(v._ref() if hasattr(v, "_ref") else v, p)
    assert f.op.type == "RefSwitch" and f.dtype.is_ref_dtype
    merged, index = cf.merge([tf.assign_add(f, 1.0), tf.assign_add(t, 10.0)])
    assert merged.op.type == "RefMerge"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([merged, index], {p: True}) == [15.0, 1]
        assert sess.run([merged, index], {p: False}) == [16.0, 0]
        assert sess.run(v) == 16.0


def test_no_op_group_tuple_with_dependencies():
    v = tf.Variable(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        update = tf.group(tf.assign_add(v, 1), [tf.assign_add(v, 2)], name="g")
        assert update.type == "NoOp" and update.name == "g"
        sess.run(update)
        assert sess.run(v) == 3
        a, b = tf.tuple([tf.constant(1), tf.constant(2)])
        assert sess.run([a, b]) == [1, 2]
        gated = cf.with_dependencies([tf.assign_add(v, 10)], tf.constant(4))
        assert sess.run(gated) == 4 and sess.run(v) == 13
        assert sess.run(tf.no_op()) is None


# -- tf.cond ----------------------------------------------------------------------------------

def test_cond_runs_only_the_taken_branch_side_effects_included():
    pred = tf.placeholder(tf.bool, [])
    counter = tf.Variable(0)

    def taken():
        with tf.control_dependencies([tf.assign_add(counter, 1)]):
            return tf.constant(10)

    result = tf.cond(pred, taken, lambda: tf.constant(20))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(result, {pred: True}) == 10
        assert sess.run(result, {pred: False}) == 20
        assert sess.run(result, {pred: False}) == 20
        assert sess.run(counter) == 1


def test_cond_branch_ops_without_inputs_hang_off_the_pivot():
    pred = tf.placeholder(tf.bool, [])
    v = tf.Variable(0)
    out = tf.cond(pred, lambda: tf.assign(v, 7), lambda: tf.constant(1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out, {pred: False}) == 1 and sess.run(v) == 0
        assert sess.run(out, {pred: True}) == 7 and sess.run(v) == 7


@settings(max_examples=20, deadline=None)
@given(st.floats(-5, 5, allow_nan=False, width=32))
def test_cond_values_match_python(x_value):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.cond(x > 0, lambda: x * x, lambda: -x * 3.0)
        expected = x_value * x_value if x_value > 0 else -x_value * 3.0
        np.testing.assert_allclose(_run(y, {x: x_value}), np.float32(expected), rtol=1e-6)


def test_cond_nested_structures_and_strict():
    pred = tf.placeholder(tf.bool, [])
    out = tf.cond(pred, lambda: {"a": tf.constant(1), "b": (tf.constant(2.0), 3)},
                  lambda: {"a": tf.constant(4), "b": (tf.constant(5.0), 6)})
    assert set(out) == {"a", "b"} and isinstance(out["b"], tuple)
    assert _run(out, {pred: True}) == {"a": 1, "b": (2.0, 3)}
    assert _run(out, {pred: False}) == {"a": 4, "b": (5.0, 6)}
    single = tf.cond(pred, lambda: [tf.constant(1)], lambda: [tf.constant(2)])
    assert isinstance(single, tf.Tensor)
    strict = tf.cond(pred, lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
    assert isinstance(strict, list) and len(strict) == 1


def test_cond_returning_an_operation_gives_a_gated_bool():
    pred = tf.placeholder(tf.bool, [])
    v = tf.Variable(1)
    done = tf.cond(pred, lambda: tf.assign(v, 2).op, lambda: tf.assign(v, 3).op)
    assert done.dtype == tf.bool
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(done, {pred: False})
        assert sess.run(v) == 3
        sess.run(done, {pred: True})
        assert sess.run(v) == 2


def test_cond_reads_outer_tensors_and_external_values_once():
    pred = tf.placeholder(tf.bool, [])
    x = tf.constant([1.0, 2.0])
    out = tf.cond(pred, lambda: x + x * 2.0, lambda: x)
    assert _run(out, {pred: True}).tolist() == [3.0, 6.0]
    assert _run(out, {pred: False}).tolist() == [1.0, 2.0]
    switches = [op for op in tf.get_default_graph().get_operations() if op.type == "Switch"
                and op.inputs[0] is x]
    assert len(switches) == 2  # one per branch, reused within the branch


def test_nested_cond():
    a = tf.placeholder(tf.int32, [])
    out = tf.cond(a > 0, lambda: tf.cond(a > 10, lambda: a * 100, lambda: a * 10),
                  lambda: -a)
    assert [_run(out, {a: v}) for v in (20, 5, -3)] == [2000, 50, 3]


def test_cond_errors():
    pred = tf.placeholder(tf.bool, [])
    with pytest.raises(TypeError, match="Python bool"):
        tf.cond(True, lambda: 1, lambda: 2)
    with pytest.raises(TypeError, match="true_fn"):
        tf.cond(pred, None, lambda: 1)
    with pytest.raises(TypeError, match="callable"):
        tf.cond(pred, 1, lambda: 1)
    with pytest.raises(ValueError, match="same type"):
        tf.cond(pred, lambda: tf.constant(1), lambda: tf.constant(1.0))
    with pytest.raises(ValueError, match="return value"):
        tf.cond(pred, lambda: None, lambda: None)
    with pytest.raises((TypeError, ValueError), match="structure"):
        tf.cond(pred, lambda: (1, 2), lambda: 3)
    with pytest.raises(ValueError, match="rank 0"):
        tf.cond(tf.constant([True]), lambda: 1, lambda: 1)
    assert _run(tf.cond(pred, fn1=lambda: 1, fn2=lambda: 2), {pred: False}) == 2


# -- tf.case ----------------------------------------------------------------------------------

def test_case_picks_the_first_true_predicate_or_the_default():
    x = tf.placeholder(tf.int32, [])
    out = tf.case([(x < 0, lambda: tf.constant(-1)), (x > 10, lambda: tf.constant(1))],
                  default=lambda: tf.constant(0))
    assert [_run(out, {x: v}) for v in (-5, 50, 5)] == [-1, 1, 0]
    first = tf.case([(x > 0, lambda: tf.constant(1)), (x > 5, lambda: tf.constant(2))],
                    default=lambda: tf.constant(3))
    assert _run(first, {x: 7}) == 1
    no_default = tf.case([(x > 0, lambda: tf.constant(1)), (x > 5, lambda: tf.constant(2))])
    assert _run(no_default, {x: -1}) == 2


def test_case_dict_and_exclusive():
    x = tf.placeholder(tf.int32, [])
    out = tf.case({x > 0: lambda: tf.constant(1), x > 5: lambda: tf.constant(2)},
                  default=lambda: tf.constant(0), exclusive=True)
    assert _run(out, {x: 3}) == 1 and _run(out, {x: -3}) == 0
    with pytest.raises(errors.InvalidArgumentError, match="exclusive"):
        _run(out, {x: 7})


def test_case_errors():
    p = tf.placeholder(tf.bool, [])
    with pytest.raises(TypeError, match="callable"):
        tf.case([(p, 1)], default=lambda: 3)
    with pytest.raises(TypeError, match="2-tuple"):
        tf.case([p], default=lambda: 3)
    assert _run(tf.case([], default=lambda: tf.constant(3))) == 3


def test_switch_case():
    i = tf.placeholder(tf.int32, [])
    out = tf.switch_case(i, [lambda: tf.constant(10), lambda: tf.constant(20)],
                         default=lambda: tf.constant(-1))
    assert [_run(out, {i: k}) for k in (0, 1, 5, -1)] == [10, 20, -1, -1]
    sparse = tf.switch_case(i, {0: lambda: tf.constant(1.0), 3: lambda: tf.constant(3.0)})
    assert [_run(sparse, {i: k}) for k in (0, 3, 7)] == [1.0, 3.0, 3.0]
    with pytest.raises(ValueError, match="empty"):
        tf.switch_case(i, [])


# -- a TF-written GraphDef --------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists(f"{FIXTURES}/while_cond_graph.pb"), reason="no fixture")
def test_tensorflow_while_cond_graph_def_runs():
    from tensorflux.protos import graph_pb2

    graph_def = graph_pb2.GraphDef()
    with open(f"{FIXTURES}/while_cond_graph.pb", "rb") as handle:
        graph_def.ParseFromString(handle.read())
    with open(f"{FIXTURES}/while_cond_graph.json") as handle:
        meta = json.load(handle)
    types = {node.op for node in graph_def.node}
    assert {"Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond"} <= types
    tf.import_graph_def(graph_def, name="")
    g = tf.get_default_graph()
    x, n, y = (g.get_tensor_by_name(name) for name in ("x:0", "n:0", "y:0"))
    with tf.Session() as sess:
        for steps, expected in meta["y_by_n"].items():
            got = sess.run(y, {x: meta["feed_x"], n: int(steps)})
            np.testing.assert_allclose(got, expected)


# -- gradients --------------------------------------------------------------------------------

def _cond_case(branch):
    def build(tf):
        x = tf.placeholder(tf.float64, [3])
        p = tf.constant(branch)
        y = tf.cond(p, lambda: x * x * 2.0, lambda: tf.sin(x) + x)
        return y, [x], [np.array([0.5, -1.0, 2.0])]
    return build


def _switch_only_true(tf):
    x = tf.placeholder(tf.float64, [2])
    p = tf.placeholder_with_default(False, [])
    y = tf.cond(p, lambda: x * 3.0, lambda: tf.constant([1.0, 1.0], tf.float64))
    return y + x, [x], [np.array([0.3, 0.7])]


GRADIENT_CASES = [
    ("Switch", _cond_case(True)),
    ("Switch", _cond_case(False)),
    ("Switch", _switch_only_true),
    ("Merge", _cond_case(True)),
]


def test_cond_gradient_flows_only_through_the_taken_branch():
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0, lambda: x * x * x, lambda: -x)
    grad = tf.gradients(y, x)[0]
    assert _run(grad, {x: 2.0}) == 12.0 and _run(grad, {x: -2.0}) == -1.0
    w = tf.placeholder(tf.float32, [])
    z = tf.cond(x > 0, lambda: w * 2.0, lambda: tf.constant(0.0)) + w
    gw = tf.gradients(z, w)[0]
    assert _run(gw, {x: 1.0, w: 1.0}) == 3.0 and _run(gw, {x: -1.0, w: 1.0}) == 1.0
