"""tf.CriticalSection: MutexV2 / MutexLock / ConsumeMutexLock serialise fn across steps."""

import threading
import time

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

COVERED_OPS = {"MutexV2", "MutexLock", "ConsumeMutexLock"}


def _overlap_probe():
    """A py_func that records how many calls overlap; sleeps inside to widen the window."""
    state = {"active": 0, "max": 0, "calls": 0}
    guard = threading.Lock()

    def probe(x):
        with guard:
            state["active"] += 1
            state["calls"] += 1
            state["max"] = max(state["max"], state["active"])
        time.sleep(0.01)
        with guard:
            state["active"] -= 1
        return x

    return state, probe


def test_names_and_shared_names():
    cs = tf.CriticalSection(name="cs")
    other = tf.CriticalSection()
    assert cs.name == "cs" and other.name == "CriticalSection"
    assert cs._handle.op.get_attr("shared_name") in ("cs/", b"cs/")
    assert cs._handle.get_shape().as_list() == []
    assert cs in tf.get_collection("critical_sections")


def test_execute_returns_fn_values_in_structure():
    cs = tf.CriticalSection()
    v = tf.Variable(0)
    out = cs.execute(lambda: {"new": v.assign_add(2), "pair": (tf.constant(1.0), v.read_value())})
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = sess.run(out)
        second = sess.run(out)
    assert first["new"] == 2 and second["new"] == 4
    assert first["pair"][0] == 1.0


def test_concurrent_steps_are_serialised():
    cs = tf.CriticalSection()
    v = tf.Variable(0.0)
    state, probe = _overlap_probe()

    def body():
        read = v.read_value()
        seen = tf.py_func(probe, [read], tf.float32)
        return v.assign(seen + 1.0)

    out = cs.execute(body)
    with tf.Session() as sess:
        sess.run(v.initializer)

        def work():
            for _ in range(4):
                sess.run(out)

        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Serialised read-modify-write: no update is lost and no two bodies overlapped.
        assert sess.run(v) == 12.0
    assert state["calls"] == 12 and state["max"] == 1


def test_two_executions_in_one_step_both_run():
    cs = tf.CriticalSection()
    v = tf.Variable(1.0)
    a = cs.execute(lambda: v.assign(v.read_value() * 2.0))
    b = cs.execute(lambda: v.assign(v.read_value() + 3.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run([a, b])
        # Either order, but each body ran whole: (1*2)+3 or (1+3)*2.
        assert sess.run(v) in (5.0, 8.0)


def test_lock_released_when_step_fails():
    cs = tf.CriticalSection()
    x = tf.placeholder(tf.float32)
    checked = cs.execute(lambda: tf.debugging.check_numerics(x, "bad"))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(checked, {x: np.nan})
        # The failed step released the mutex: the next step gets it.
        assert sess.run(checked, {x: 2.0}) == 2.0


def test_waiting_step_is_cancelled_by_its_timeout():
    cs = tf.CriticalSection(shared_name="shared_cs")
    gate = threading.Event()

    def block(x):
        gate.wait(5)
        return x

    slow = cs.execute(lambda: tf.py_func(block, [tf.constant(1.0)], tf.float32))
    fast = tf.CriticalSection(shared_name="shared_cs").execute(lambda: tf.constant(2.0))
    with tf.Session() as sess:
        holder = threading.Thread(target=lambda: sess.run(slow))
        holder.start()
        time.sleep(0.1)
        options = tf.RunOptions(timeout_in_ms=100)
        with pytest.raises((tf.errors.DeadlineExceededError, tf.errors.CancelledError)):
            sess.run(fast, options=options)
        gate.set()
        holder.join()
        assert sess.run(fast) == 2.0


def test_resource_exclusivity_and_self_access():
    cs, cs2 = tf.CriticalSection(), tf.CriticalSection()
    rv = tf.get_variable("rv", [], use_resource=True)
    cs.execute(lambda: rv.assign_add(1.0))
    with pytest.raises(ValueError, match="exclusive"):
        cs2.execute(lambda: rv.assign_add(1.0))
    with pytest.raises(ValueError, match="exclusive"):
        cs2.execute(lambda: rv.assign_add(1.0), exclusive_resource_access=False)
    with pytest.raises(ValueError, match="deadlock"):
        cs.execute(lambda: cs.execute(lambda: tf.constant(1)))


def test_non_exclusive_sharing_is_allowed():
    cs, cs2 = tf.CriticalSection(), tf.CriticalSection()
    rv = tf.get_variable("rv", [], use_resource=True, initializer=tf.zeros_initializer())
    a = cs.execute(lambda: rv.assign_add(1.0), exclusive_resource_access=False)
    b = cs2.execute(lambda: rv.assign_add(2.0), exclusive_resource_access=False)
    with tf.Session() as sess:
        sess.run(rv.initializer)
        sess.run(a)
        sess.run(b)
        assert sess.run(rv.read_value()) == 3.0


def test_section_rebuilt_from_its_def_shares_the_mutex_after_import():
    import collections

    Def = collections.namedtuple("CriticalSectionDef", ["mutex_name"])
    v = tf.Variable(0, name="counter")
    cs = tf.CriticalSection(name="guard")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="imported")
        counter = tf.get_default_graph().get_tensor_by_name("imported/counter:0")
        again = tf.CriticalSection(critical_section_def=Def(cs.name), import_scope="imported")
        assert again.name == "imported/guard"
        bump = again.execute(lambda: tf.assign_add(counter, 1))
        with tf.Session() as sess:
            sess.run(tf.get_default_graph().get_operation_by_name("imported/counter/Assign"))
            assert [sess.run(bump) for _ in range(3)] == [1, 2, 3]
        with pytest.raises(ValueError, match="not a MutexV2"):
            tf.CriticalSection(critical_section_def=Def("counter"), import_scope="imported")
    assert v.name == "counter:0"
