"""tf.while_loop: values, nested structures, frames and overlapping iterations, nested loops,
stateful bodies (variables, queues), shape invariants, maximum_iterations, and errors and
cancellation inside a loop."""

import collections
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.control_flow import primitives as cf
from tensorflux.ops.data_flow.queues import FIFOQueue

COVERED_OPS = {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"}


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None, options=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed, options=options)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 60))
def test_sum_loop_matches_python(n_value):
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        _, total = tf.while_loop(lambda i, s: i <= n, lambda i, s: (i + 1, s + i), [1, 0])
        assert _run(total, {n: n_value}) == sum(range(1, n_value + 1))


def test_loop_structure_and_frame():
    out = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], name="myloop")
    assert isinstance(out, tf.Tensor) and out.op.type == "Exit" and out.op.name == "myloop/Exit"
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"Enter", "Merge", "LoopCond", "Switch", "NextIteration", "Exit"} <= types
    enter = tf.get_default_graph().get_operation_by_name("myloop/Enter")
    assert enter.get_attr("frame_name") == b"myloop/while_context"
    assert enter.get_attr("is_constant") is False and enter.get_attr("parallel_iterations") == 10
    assert _run(out) == 3


def test_fibonacci_int64_and_python_loop_vars():
    n = tf.placeholder(tf.int32, [])
    fib = tf.while_loop(lambda i, a, b: i < n, lambda i, a, b: (i + 1, b, a + b),
                        [0, tf.constant(0, tf.int64), tf.constant(1, tf.int64)])[1]
    assert _run(fib, {n: 90}) == 2880067194370816120
    out = tf.while_loop(lambda x: x < 10.0, lambda x: x * 2.0, [1.5])
    assert out.dtype == tf.float32 and _run(out) == 12.0


def test_nested_structures_namedtuple_dict_and_single_var():
    Pair = collections.namedtuple("Pair", "a b")
    loop_vars = [Pair(tf.constant(0), tf.constant(1.0)), {"k": tf.constant([1, 2])}]

    def body(pair, d):
        return [Pair(pair.a + 1, pair.b * 2.0), {"k": d["k"] + pair.a}]

    pair, d = tf.while_loop(lambda pair, d: pair.a < 4, body, loop_vars)
    assert isinstance(pair, Pair) and set(d) == {"k"}
    a, b, k = _run([pair.a, pair.b, d["k"]])
    assert (a, b, k.tolist()) == (4, 16.0, [7, 8])
    same = tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,), return_same_structure=True)
    assert isinstance(same, tuple) and _run(same[0]) == 3
    bare = tf.while_loop(lambda i: i < 3, lambda i: [i + 1], [0])
    assert isinstance(bare, tf.Tensor)


def test_loop_reads_outer_tensors_as_invariants():
    x = tf.constant([1.0, 2.0])
    scale = tf.placeholder(tf.float32, [])
    _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + x * scale),
                           [0, tf.zeros([2])])
    np.testing.assert_allclose(_run(acc, {scale: 2.0}), [6.0, 12.0])
    constants = [op for op in tf.get_default_graph().get_operations()
                 if op.type == "Enter" and op.get_attr("is_constant")]
    assert len(constants) == 2


def test_nested_loops_three_deep():
    def level3(j):
        return tf.while_loop(lambda k, s: k <= j, lambda k, s: (k + 1, s + k * j), [0, 0])[1]

    def level2(i):
        return tf.while_loop(lambda j, s: j <= i, lambda j, s: (j + 1, s + level3(j)),
                             [0, 0])[1]

    n = tf.placeholder(tf.int32, [])
    total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + level2(i)), [0, 0])[1]
    expected = sum(k * j for i in range(5) for j in range(i + 1) for k in range(j + 1))
    assert _run(total, {n: 5}) == expected
    frames = {op.get_attr_str("frame_name") for op in tf.get_default_graph().get_operations()
              if op.type == "Enter"}
    assert len(frames) == 3


def test_ten_thousand_iterations():
    n = tf.placeholder(tf.int32, [])
    i, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 2.0),
                         [0, tf.constant(0.0, tf.float64)])
    start = time.perf_counter()
    assert _run([i, s], {n: 10_000}) == [10_000, 20_000.0]
    assert time.perf_counter() - start < 20.0  # microseconds per iteration, not milliseconds


def _ordered_loop(parallel_iterations):
    """A loop whose iterations log (i) when they start and (i + 100) when they finish."""
    queue = FIFOQueue(100, tf.int32, shapes=[[]])

    def body(i, token):
        start = queue.enqueue(i)
        with tf.control_dependencies([start]):
            x = tf.identity(i)
        for _ in range(5):
            x = tf.identity(x)
        end = queue.enqueue(x + 100)
        with tf.control_dependencies([end]):
            token = tf.identity(token)
        return i + 1, token  # the next iteration does not wait for this one's tail

    out = tf.while_loop(lambda i, t: i < 4, body, [0, 0],
                        parallel_iterations=parallel_iterations)
    with tf.control_dependencies(out):
        size = queue.size()
    return queue.dequeue_many(size)


def test_parallel_iterations_overlap():
    serial = _run(_ordered_loop(1)).tolist()
    assert serial == [0, 100, 1, 101, 2, 102, 3, 103]
    with tf.Graph().as_default():
        overlapped = _run(_ordered_loop(10)).tolist()
    assert sorted(overlapped) == sorted(serial)
    assert overlapped.index(1) < overlapped.index(100)  # iteration 1 began before 0 ended
    with tf.Graph().as_default():
        two = _run(_ordered_loop(2)).tolist()
    # At most two iterations alive at once: iteration 2 starts only after 0 is done.
    assert two.index(2) > two.index(100) and two.index(1) < two.index(100)


def test_body_enqueues_to_a_queue():
    queue = FIFOQueue(20, tf.float32, shapes=[[]])

    def body(i):
        with tf.control_dependencies([queue.enqueue(tf.cast(i, tf.float32) * 1.5)]):
            return i + 1

    n = tf.while_loop(lambda i: i < 6, body, [0])
    with tf.control_dependencies([n]):
        got = queue.dequeue_many(6)
    np.testing.assert_allclose(_run(got), np.arange(6) * 1.5)


def test_stateful_body_runs_once_per_iteration():
    v = tf.Variable(0)

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 1)]):
            return i + 1

    out = tf.while_loop(lambda i: i < 5, body, [0])
    assert any(op.type == "RefEnter" for op in tf.get_default_graph().get_operations())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out) == 5
        assert sess.run(v) == 5
        sess.run(out)
        assert sess.run(v) == 10


def test_invariant_only_ops_do_not_run_when_the_loop_exits():
    v = tf.Variable(0)

    def body(i):
        bump = tf.assign_add(v, tf.constant(1))  # inputs: a ref invariant and a constant
        with tf.control_dependencies([bump]):
            return i + 1

    out = tf.while_loop(lambda i: i < 3, body, [0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(out)
        assert sess.run(v) == 3


def test_external_control_dependency_enters_the_loop():
    v = tf.Variable(1)
    with tf.control_dependencies([tf.assign(v, 10)]):
        out = tf.while_loop(lambda i: i < 3, lambda i: i + tf.constant(1), [0])
    read_after = tf.while_loop(lambda i, s: i < 1, lambda i, s: (i + 1, s + v.value()),
                               [0, 0])[1]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out) == 3
        assert sess.run(v) == 10
        assert sess.run(read_after) == 10


def test_maximum_iterations():
    capped = tf.while_loop(lambda i: True, lambda i: i + 1, [0], maximum_iterations=7)
    assert _run(capped) == 7
    limit = tf.placeholder(tf.int64, [])
    early = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + 1.0), [0, 0.0],
                          maximum_iterations=limit)
    assert list(_run(early, {limit: 10})) == [3, 3.0]
    assert _run(early[1], {limit: 2}) == 2.0
    with pytest.raises(ValueError, match="scalar"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=[2])


def test_shape_invariants():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match=r"enters the loop with shape \(2,\), but has shape "
                                         r"\(4,\) after one iteration"):
        tf.while_loop(lambda v: tf.size(v) < 10, lambda v: tf.concat([v, v], 0), [x])
    grown = tf.while_loop(lambda v: tf.size(v) < 10, lambda v: tf.concat([v, v], 0), [x],
                          shape_invariants=[tf.TensorShape([None])])
    assert grown.shape.as_list() == [None]
    assert _run(grown).tolist() == [1.0, 2.0] * 8
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(1)],
                      shape_invariants=[tf.TensorShape([2])])


def test_tensor_array_loop_var():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    def body(i, arr):
        return i + 1, arr.write(i, tf.cast(i * i, tf.float32))

    _, ta = tf.while_loop(lambda i, a: i < 5, body, [0, ta])
    assert isinstance(ta, tf.TensorArray)
    np.testing.assert_allclose(_run(ta.stack()), [0, 1, 4, 9, 16])


def test_loops_inside_conds_and_conds_inside_loops():
    p = tf.placeholder(tf.bool, [])
    inner = tf.cond(p, lambda: tf.while_loop(lambda i: i < 5, lambda i: i + 2, [0]),
                    lambda: tf.constant(-1))
    assert _run(inner, {p: True}) == 6 and _run(inner, {p: False}) == -1

    def body(i, s):
        return i + 1, s + tf.cond(tf.equal(i % 2, 0), lambda: i, lambda: -i)

    _, s = tf.while_loop(lambda i, s: i < 6, body, [0, 0])
    assert _run(s) == 0 - 1 + 2 - 3 + 4 - 5


def test_loop_errors():
    with pytest.raises(TypeError, match="callable"):
        tf.while_loop(lambda i: i < 3, 4, [1])
    with pytest.raises(TypeError, match="list or tuple"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, 1)
    with pytest.raises(ValueError, match="must be provided"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [])
    with pytest.raises(ValueError, match="parallel_iterations"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=0)
    with pytest.raises(ValueError, match="structure"):
        tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, (j, j)), [1, 2])
    with pytest.raises(TypeError, match="int32"):
        tf.while_loop(lambda x: x < 3.0, lambda x: tf.cast(x, tf.int32), [1.0])
    with pytest.raises(TypeError, match="bool"):
        tf.while_loop(lambda i: i, lambda i: i + 1, [1])
    out = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    scope = out.op.name.rsplit("/", 1)[0]
    inside = tf.get_default_graph().get_operation_by_name(f"{scope}/Identity")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="not fetchable"):
            sess.run(inside.outputs[0])
        assert sess.run(out) == 3


def test_error_inside_a_loop_aborts_the_step_cleanly():
    n = tf.placeholder(tf.int32, [])

    def body(i, x):
        checked = tf.check_numerics(tf.sqrt(x - tf.cast(i, tf.float32)), "negative sqrt")
        return i + 1, x + checked * 0.0

    out = tf.while_loop(lambda i, x: i < n, body, [0, tf.constant(3.0)])
    before = threading.active_count()
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="negative sqrt"):
            sess.run(out, {n: 10})
        assert sess.run(out, {n: 3})[0] == 3  # the session still works
    assert threading.active_count() <= before + 1


def test_blocked_op_inside_a_loop_is_cancelled_by_the_deadline():
    queue = FIFOQueue(5, tf.float32, shapes=[[]])

    def body(i, s):
        return i + 1, s + queue.dequeue()

    out = tf.while_loop(lambda i, s: i < 3, body, [0, 0.0])
    before = threading.active_count()
    options = tf.RunOptions(timeout_in_ms=300)
    with tf.Session() as sess:
        sess.run(queue.enqueue(2.0))
        start = time.perf_counter()
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(out, options=options)
        assert time.perf_counter() - start < 10
        sess.run(queue.enqueue_many([[1.0, 1.0, 1.0]]))
        assert list(sess.run(out)) == [3, 3.0]
    assert threading.active_count() <= before + 1


def test_closing_the_session_cancels_a_blocked_loop():
    queue = FIFOQueue(5, tf.float32, shapes=[[]])
    out = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + queue.dequeue()),
                        [0, 0.0])
    sess = tf.Session()
    failures = []

    def run():
        try:
            sess.run(out)
        except errors.OpError as err:
            failures.append(err)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.3)
    sess.close()
    worker.join(10)
    assert not worker.is_alive()
    assert failures and isinstance(failures[0], (errors.CancelledError, errors.AbortedError))


def test_manual_loop_with_ref_enter_exit_and_next_iteration():
    """The Ref* variants keep a variable's reference across a hand-built loop."""
    v = tf.Variable(1.0)
    ref = v._ref() if hasattr(v, "_ref") else v
    frame = "manual_frame"
    i0 = cf.enter(tf.constant(0), frame)
    r0 = cf.enter(ref, frame)
    assert r0.op.type == "RefEnter"
    three, one, two = (cf.enter(tf.constant(c), frame, is_constant=True) for c in (3, 1, 2.0))
    i_merge = cf.merge([i0, i0])[0]
    r_merge = cf.merge([r0, r0])[0]
    keep_going = cf.loop_cond(i_merge < three)
    i_false, i_true = cf.switch(i_merge, keep_going)
    r_false, r_true = cf.switch(r_merge, keep_going)
    bumped = tf.assign_add(r_true, two)
    next_i = cf.next_iteration(i_true + one)
    next_r = cf.next_iteration(bumped)
    assert next_r.op.type == "RefNextIteration"
    i_merge.op._update_input(1, next_i)
    r_merge.op._update_input(1, next_r)
    done = cf.exit(r_false)
    count = cf.exit(i_false)
    assert done.op.type == "RefExit" and done.dtype.is_ref_dtype
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([count, done]) == [3, 7.0]
        assert sess.run(v) == 7.0


# -- gradient cases (checked against finite differences by the op contract test) -----------

def _power_loop(tf):
    x = tf.placeholder(tf.float64, [])
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), [0, x])[1]
    return y, [x], [np.array(1.1)]


def _two_var_loop(tf):
    x = tf.placeholder(tf.float64, [2])
    w = tf.placeholder(tf.float64, [2])
    _, a, b = tf.while_loop(lambda i, a, b: i < 4,
                            lambda i, a, b: (i + 1, a * w + b, tf.sin(a) * 0.5), [0, x, x])
    return a + b, [x, w], [np.array([0.3, -0.4]), np.array([0.9, 1.1])]


def _dynamic_count_loop(tf):
    x = tf.placeholder(tf.float64, [3])
    _, y = tf.while_loop(lambda v, s: tf.reduce_sum(s) < 10.0,
                         lambda v, s: (v, s + v * v), [x, tf.zeros([3], tf.float64)])
    return y, [x], [np.array([1.0, 1.5, 0.5])]


GRADIENT_CASES = [
    ("Enter", _power_loop),
    ("Exit", _two_var_loop),
    ("NextIteration", _dynamic_count_loop),
]


def test_an_edge_between_frames_is_a_clear_error():
    frame = "bad_frame"
    i0 = cf.enter(tf.constant(0), frame)
    merged = cf.merge([i0, i0])[0]
    keep_going = cf.loop_cond(merged < 3)  # the constant 3 is outside the frame
    i_false, i_true = cf.switch(merged, keep_going)
    merged.op._update_input(1, cf.next_iteration(i_true + 1))
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="different frames"):
            sess.run(cf.exit(i_false))
