"""State ops: variables, assignment and scatter updates in place, against NumPy references."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.state import variable_ops as state_ops

COVERED_OPS = {"VariableV2", "Variable", "Assign", "AssignAdd", "AssignSub", "ScatterUpdate",
               "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterMax",
               "ScatterMin", "ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub",
               "IsVariableInitialized", "CountUpTo", "TemporaryVariable",
               "DestroyTemporaryVariable"}
GRADIENT_CASES = []  # every state op is declared not differentiable

BASE = np.arange(1, 13, dtype=np.float32).reshape(4, 3)
IDX = np.array([0, 2, 0], np.int32)  # duplicate row 0
UPD = np.arange(9, dtype=np.float32).reshape(3, 3) + 2


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _ref(fn):
    out = BASE.copy()
    fn(out)
    return out


def _scatter_div(out):
    np.divide.at(out, IDX, UPD)


# (op type, build(var) -> ref tensor, expected value of the variable afterwards)
TABLE = [
    ("Assign", lambda v: tf.assign(v, BASE * 2), BASE * 2),
    ("AssignAdd", lambda v: tf.assign_add(v, BASE), BASE * 2),
    ("AssignSub", lambda v: tf.assign_sub(v, np.ones_like(BASE)), BASE - 1),
    ("ScatterUpdate", lambda v: tf.scatter_update(v, [1, 3], UPD[:2]),
     _ref(lambda o: o.__setitem__([1, 3], UPD[:2]))),
    ("ScatterAdd", lambda v: tf.scatter_add(v, IDX, UPD), _ref(lambda o: np.add.at(o, IDX, UPD))),
    ("ScatterSub", lambda v: tf.scatter_sub(v, IDX, UPD),
     _ref(lambda o: np.subtract.at(o, IDX, UPD))),
    ("ScatterMul", lambda v: tf.scatter_mul(v, IDX, UPD),
     _ref(lambda o: np.multiply.at(o, IDX, UPD))),
    ("ScatterDiv", lambda v: tf.scatter_div(v, IDX, UPD), _ref(_scatter_div)),
    ("ScatterMax", lambda v: tf.scatter_max(v, IDX, UPD),
     _ref(lambda o: np.maximum.at(o, IDX, UPD))),
    ("ScatterMin", lambda v: tf.scatter_min(v, IDX, UPD - 5),
     _ref(lambda o: np.minimum.at(o, IDX, UPD - 5))),
    ("ScatterNdUpdate", lambda v: tf.scatter_nd_update(v, [[1, 2], [3, 0]], [7.0, 8.0]),
     _ref(lambda o: o.__setitem__(([1, 3], [2, 0]), [7.0, 8.0]))),
    ("ScatterNdAdd", lambda v: tf.scatter_nd_add(v, [[0], [0]], UPD[:2]),
     _ref(lambda o: o.__setitem__(0, o[0] + UPD[0] + UPD[1]))),
    ("ScatterNdSub", lambda v: tf.scatter_nd_sub(v, [[0, 1], [0, 1]], [1.0, 2.0]),
     _ref(lambda o: o.__setitem__((0, 1), o[0, 1] - 3.0))),
]


@pytest.mark.parametrize("op_type,build,expected", TABLE, ids=[row[0] for row in TABLE])
def test_table_value_shape_and_dtype(graph, op_type, build, expected):
    v = tf.Variable(BASE, name="v")
    out = build(v)
    assert out.op.type == op_type
    assert out.dtype == tf.float32_ref
    assert out.shape.is_compatible_with(expected.shape)
    with tf.Session() as sess:
        sess.run(v.initializer)
        value = sess.run(out)
        np.testing.assert_allclose(value, expected, rtol=1e-6)
        assert value.dtype == np.float32 and value.shape == expected.shape
        np.testing.assert_allclose(sess.run(v), expected, rtol=1e-6)


def test_variable_ops_and_old_variable_alias(graph):
    ref = state_ops.VariableV2(shape=tf.TensorShape([2]), dtype=tf.int64, name="x")
    old = state_ops.Variable(shape=tf.TensorShape([2]), dtype=tf.int64, name="y")
    assert ref.dtype == tf.int64_ref and ref.shape.as_list() == [2]
    assert old.op.type == "Variable" and old.dtype == tf.int64_ref
    init = tf.group(tf.assign(ref, [1, 2]), tf.assign(old, [3, 4]))
    with tf.Session() as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(ref + old), [4, 6])
        assert sess.run(ref).dtype == np.int64


def test_uninitialized_read_is_failed_precondition_naming_the_variable(graph):
    v = tf.Variable(np.zeros(3, np.float32), name="weights")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value weights"):
            sess.run(v + 1.0)
        with pytest.raises(tf.errors.FailedPreconditionError, match="weights"):
            sess.run(tf.assign_add(v, [1.0, 1.0, 1.0]))
        assert not sess.run(tf.is_variable_initialized(v))
        sess.run(v.initializer)
        assert sess.run(tf.is_variable_initialized(v))


def test_assign_shape_checks(graph):
    v = tf.Variable(BASE, name="v")
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.assign(v, np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="mutable"):
        tf.assign(tf.constant(1.0), 2.0)
    wrong = tf.placeholder(tf.float32, [None, None])
    bad = tf.assign(v, wrong)
    grow = tf.assign(v, wrong, validate_shape=False)
    assert grow.shape.as_list() == [None, None]
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"lhs shape= \[4,3\] rhs shape= \[3,4\].*'v'"):
            sess.run(bad, {wrong: np.zeros((3, 4))})
        assert sess.run(grow, {wrong: np.ones((2, 5))}).shape == (2, 5)
        assert sess.run(v).shape == (2, 5)


def test_assign_to_uninitialized_checks_the_declared_shape(graph):
    ref = state_ops.variable_op_v2([2, 2], tf.float32, name="r")
    value = tf.placeholder(tf.float32)
    assign = tf.assign(ref, value)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"lhs shape= \[2,2\]"):
            sess.run(assign, {value: np.zeros(3)})
        np.testing.assert_array_equal(sess.run(assign, {value: np.eye(2)}), np.eye(2))


def test_reads_alias_the_buffer_so_updates_are_seen_later_in_the_step(graph):
    v = tf.Variable(1.0, name="v")
    with tf.control_dependencies([tf.assign_add(v, 1.0)]):
        after = tf.identity(v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(after) == 2.0
        assert sess.run(after) == 3.0


def test_fetched_values_are_copies(graph):
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        fetched = sess.run(v)
        fetched[0] = 99.0
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        from_assign = sess.run(v.assign_add([1.0, 1.0]))
        from_assign[1] = -1.0
        np.testing.assert_array_equal(sess.run(v), [2.0, 3.0])


def test_sessions_have_separate_values_and_state_ends_with_the_session(graph):
    v = tf.Variable(10, name="v")
    inc = tf.assign_add(v, 1)
    with tf.Session() as a, tf.Session() as b:
        a.run(v.initializer)
        b.run(v.initializer)
        a.run(inc)
        a.run(inc)
        assert a.run(v) == 12 and b.run(v) == 10
    with tf.Session() as c:
        assert not c.run(tf.is_variable_initialized(v))


def test_shared_name_and_container(graph):
    x = state_ops.variable_op_v2([], tf.float32, name="x", shared_name="shared")
    y = state_ops.variable_op_v2([], tf.float32, name="y", shared_name="shared")
    with tf.container("other"):
        z = state_ops.variable_op_v2([], tf.float32, name="z", shared_name="shared")
    assert z.op.get_attr("container") == b"other" and x.op.get_attr("container") == b""
    with tf.Session() as sess:
        sess.run(tf.assign(x, 3.0))
        assert sess.run(y) == 3.0
        assert not sess.run(tf.is_variable_initialized(z))


def test_sharing_a_name_with_another_dtype_fails(graph):
    x = state_ops.variable_op_v2([], tf.float32, name="x", shared_name="s")
    y = state_ops.variable_op_v2([], tf.int32, name="y", shared_name="s")
    with tf.Session() as sess:
        sess.run(tf.assign(x, 1.0))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Trying to share variable s"):
            sess.run(y)


def test_scatter_errors(graph):
    v = tf.Variable(BASE, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 4 is not in"):
            sess.run(tf.scatter_add(v, [0, 4], np.ones((2, 3), np.float32)))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"-1 is not in \[0, 4\)"):
            sess.run(tf.scatter_update(v, [-1], np.ones((1, 3), np.float32)))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"\[4, 0\] does not index into shape \[4,3\]"):
            sess.run(tf.scatter_nd_update(v, [[4, 0]], [1.0]))
        bad_updates = tf.placeholder(tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="updates.shape"):
            sess.run(tf.scatter_add(v, [0], bad_updates), {bad_updates: np.ones((1, 2))})
        np.testing.assert_array_equal(sess.run(v), BASE)  # failed updates changed nothing
    with pytest.raises(ValueError, match="updates shape"):
        tf.scatter_add(v, [0, 1], np.ones((3, 3), np.float32))


def test_scalar_updates_broadcast(graph):
    v = tf.Variable(BASE, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        expected = BASE.copy()
        expected[[0, 1]] = 5.0
        np.testing.assert_array_equal(sess.run(tf.scatter_update(v, [0, 1], 5.0)), expected)


def test_integer_scatter_div_truncates_like_c(graph):
    v = tf.Variable(np.array([7, -7, 9, 100], np.int32), name="v")
    out = tf.scatter_div(v, [0, 1, 0, 2, 3], [2, 2, -3, 4, 7])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(out), [-1, -3, 2, 14])


@settings(max_examples=25, deadline=None)
@given(indices=st.lists(st.integers(0, 4), min_size=1, max_size=8),
       kind=st.sampled_from(["add", "sub", "mul", "max", "min"]), seed=st.integers(0, 1000))
def test_scatter_with_duplicate_indices_matches_numpy(indices, kind, seed):
    rng = np.random.RandomState(seed)
    base = rng.uniform(-2, 2, size=(5, 2))
    updates = rng.uniform(-2, 2, size=(len(indices), 2))
    fns = {"add": (tf.scatter_add, np.add.at), "sub": (tf.scatter_sub, np.subtract.at),
           "mul": (tf.scatter_mul, np.multiply.at), "max": (tf.scatter_max, np.maximum.at),
           "min": (tf.scatter_min, np.minimum.at)}
    op, reference = fns[kind]
    expected = base.copy()
    reference(expected, np.array(indices), updates)
    with tf.Graph().as_default():
        v = tf.Variable(base, name="v")
        out = op(v, np.array(indices, np.int64), updates)
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_allclose(sess.run(out), expected, rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(indices=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=1,
                        max_size=6))
def test_scatter_nd_add_matches_numpy(indices):
    updates = np.arange(1, len(indices) + 1, dtype=np.float64)
    expected = np.zeros((3, 4))
    np.add.at(expected, tuple(np.array(indices).T), updates)
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((3, 4)), name="v")
        out = tf.scatter_nd_add(v, np.array(indices, np.int32), updates)
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_allclose(sess.run(out), expected)


def test_scatter_update_with_duplicates_takes_one_of_them(graph):
    v = tf.Variable(np.zeros((2, 2), np.float32), name="v")
    out = tf.scatter_update(v, [1, 1], [[1.0, 1.0], [2.0, 2.0]])
    with tf.Session() as sess:
        sess.run(v.initializer)
        row = sess.run(out)[1]
        assert row.tolist() in ([1.0, 1.0], [2.0, 2.0])


def test_count_up_to(graph):
    v = tf.Variable(np.int64(0), name="counter")
    step = tf.count_up_to(v, 2)
    assert step.dtype == tf.int64 and step.shape.as_list() == []
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(step), sess.run(step)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(step)
        assert sess.run(v) == 2


def test_temporary_variable_lives_for_one_step(graph):
    tmp = state_ops.TemporaryVariable(shape=[2], dtype=tf.float32, var_name="acc")
    filled = tf.assign_add(tf.assign(tmp, [1.0, 2.0]), [10.0, 10.0])
    with tf.control_dependencies([filled]):
        out = state_ops.DestroyTemporaryVariable(tmp, var_name="acc")
    assert out.dtype == tf.float32 and out.shape.as_list() == [2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out), [11.0, 12.0])
        np.testing.assert_array_equal(sess.run(out), [11.0, 12.0])  # a new one each step


def test_locked_updates_from_many_threads_are_all_applied(graph):
    v = tf.Variable(np.zeros(1000), name="v")
    inc = tf.assign_add(v, np.ones(1000), use_locking=True)
    with tf.Session() as sess:
        sess.run(v.initializer)

        def work():
            for _ in range(25):
                sess.run(inc.op)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        np.testing.assert_array_equal(sess.run(v), np.full(1000, 100.0))


def test_string_and_bool_variables(graph):
    s = tf.Variable([b"a", b"bc"], name="s")
    flag = tf.Variable(False, name="flag")
    with tf.Session() as sess:
        sess.run([s.initializer, flag.initializer])
        assert sess.run(tf.assign(s, [b"x", b"yz"])).tolist() == [b"x", b"yz"]
        assert sess.run(tf.assign(flag, True))
