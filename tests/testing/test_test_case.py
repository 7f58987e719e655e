"""`tf.test.TestCase`: its assertions fail on real differences, sessions and graphs per test."""

import collections
import os
import subprocess
import sys
import threading
import unittest

import numpy as np
import pytest

import tensorflux as tf

Pair = collections.namedtuple("Pair", ["first", "second"])


def _run(case_class):
    """Runs a TestCase class's tests; returns the unittest result."""
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case_class)
    result = unittest.TestResult()
    suite.run(result)
    return result


class AllCloseTest(tf.test.TestCase):

    def test_within_tolerance_passes_and_real_difference_fails(self):
        self.assertAllClose([1.0, 2.0], [1.0 + 5e-7, 2.0])
        with self.assertRaisesRegex(AssertionError, r"index \(1,\): expected 2.0, got 2.001"):
            self.assertAllClose([1.0, 2.0], [1.0, 2.001])
        self.assertAllClose([1.0, 2.0], [1.0, 2.001], atol=2e-3)
        with self.assertRaisesRegex(AssertionError, "my message"):
            self.assertAllClose(1.0, 1.1, msg="my message")

    def test_nested_structures(self):
        expected = {"a": [np.ones(2), (3.0, Pair(1, [2.0, 2.5]))], "b": np.float32(4)}
        self.assertAllClose(expected, {"a": [np.ones(2), (3.0, Pair(1, [2.0, 2.5]))], "b": 4.0})
        with self.assertRaisesRegex(AssertionError, r"\['a'\]\[1\]\[1\]\[1\]"):
            self.assertAllClose(expected,
                                {"a": [np.ones(2), (3.0, Pair(1, [2.0, 2.6]))], "b": 4.0})
        with self.assertRaisesRegex(AssertionError, "Mismatched keys"):
            self.assertAllClose({"a": 1.0}, {"b": 1.0})
        with self.assertRaisesRegex(AssertionError, "Shape mismatch"):
            self.assertAllClose(np.zeros((2, 3)), np.zeros((3, 2)))

    def test_nan_equal_and_half_precision_relaxed(self):
        self.assertAllClose([np.nan, 1.0], [np.nan, 1.0])
        self.assertAllClose(np.float16([1.0]), np.float16([1.0005]))
        with self.assertRaises(AssertionError):
            self.assertAllClose(np.float32([1.0]), np.float32([1.0005]))
        self.assertAllCloseAccordingToType(np.float32([1.0]), np.float32([1.0 + 5e-7]))
        self.assertAllCloseAccordingToType(np.float32([1.0]), np.float32([1.0005]),
                                           float_rtol=1e-3, float_atol=1e-3)
        with self.assertRaises(AssertionError):
            self.assertAllCloseAccordingToType(np.float64([1.0]), np.float64([1.0005]),
                                               float_rtol=1e-3, float_atol=1e-3)
        self.assertNotAllClose([1.0], [1.1])
        with self.assertRaises(AssertionError):
            self.assertNotAllClose([1.0], [1.0])

    def test_tensors_are_evaluated(self):
        self.assertAllClose(tf.constant([1.5, 2.5]) * 2.0, [3.0, 5.0])
        self.assertAllEqual(tf.constant([[1, 2]]), np.array([[1, 2]]))

    def test_variables_are_read_in_the_default_session(self):
        with self.cached_session():
            ref = tf.Variable([[1.0, 2.0, 3.0]], name="ref")
            res = tf.Variable([4, 5], use_resource=True, name="res")
            self.evaluate(tf.global_variables_initializer())
            self.assertAllEqual(ref, np.array([[1.0, 2.0, 3.0]]))
            self.assertAllClose(res, [4, 5])
            with self.assertRaisesRegex(AssertionError, "Shape mismatch"):
                self.assertAllEqual(ref, [1.0, 2.0, 3.0])


class EqualityAndRangeTest(tf.test.TestCase):

    def test_all_equal(self):
        self.assertAllEqual([[1, 2], [3, 4]], np.array([[1, 2], [3, 4]]))
        self.assertAllEqual([b"a", b"b"], np.array([b"a", b"b"]))
        with self.assertRaisesRegex(AssertionError, r"index \(1, 0\): expected 3, got 5"):
            self.assertAllEqual([[1, 2], [3, 4]], [[1, 2], [5, 4]])
        with self.assertRaisesRegex(AssertionError, "Shape mismatch"):
            self.assertAllEqual([1, 2], [[1, 2]])
        self.assertNotAllEqual([1, 2], [1, 3])
        with self.assertRaises(AssertionError):
            self.assertNotAllEqual([1, 2], [1, 2])

    def test_fetched_bytes_equal_str_literals_as_utf8(self):
        fetched = np.array([[b"kiwi", "\u00e9t\u00e9".encode("utf-8")]], dtype=object)
        self.assertAllEqual(fetched, [["kiwi", "\u00e9t\u00e9"]])
        self.assertAllEqual(np.array(["plum"]), np.array([b"plum"], dtype=object))
        with self.assertRaisesRegex(AssertionError, r"index \(0, 1\)"):
            self.assertAllEqual(fetched, [["kiwi", "ete"]])
        with self.assertRaises(AssertionError):
            self.assertAllEqual(np.array([b"1"], dtype=object), np.array([1]))

    def test_order_and_membership(self):
        values = np.array([1.0, 2.0, 3.0])
        self.assertAllGreater(values, 0.5)
        self.assertAllLess(values, 3.5)
        self.assertAllGreaterEqual(values, 1.0)
        self.assertAllLessEqual(values, 3.0)
        with self.assertRaisesRegex(AssertionError, r"\[\(0,\)\]"):
            self.assertAllGreater(values, 1.0)
        with self.assertRaises(AssertionError):
            self.assertAllLess(values, 3.0)
        self.assertAllInRange(values, 1.0, 3.0)
        with self.assertRaises(AssertionError):
            self.assertAllInRange(values, 1.0, 3.0, open_upper_bound=True)
        with self.assertRaises(AssertionError):
            self.assertAllInRange(["a"], 0, 1)
        self.assertAllInSet([1, 2, 2], {1, 2})
        with self.assertRaisesRegex(AssertionError, "unexpected values"):
            self.assertAllInSet([1, 4], {1, 2})
        self.assertNear(1.0, 1.05, 0.1)
        with self.assertRaises(AssertionError):
            self.assertNear(1.0, 1.2, 0.1)
        self.assertArrayNear([1.0, 2.0], [1.01, 1.99], 0.02)
        with self.assertRaises(AssertionError):
            self.assertArrayNear([1.0, 2.0], [1.0, 2.5], 0.02)

    def test_shape_dtype_device(self):
        x = tf.placeholder(tf.float32, [2, 3])
        self.assertShapeEqual(np.zeros((2, 3)), x)
        with self.assertRaises(AssertionError):
            self.assertShapeEqual(np.zeros((3, 2)), x)
        with self.assertRaises(TypeError):
            self.assertShapeEqual([[0.0]], x)
        self.assertDTypeEqual(np.zeros(2, np.int32), np.int32)
        with self.assertRaises(AssertionError):
            self.assertDTypeEqual(np.zeros(2, np.int64), np.int32)
        self.assertDeviceEqual("/cpu:0", "/device:CPU:0")
        with self.assertRaises(AssertionError):
            self.assertDeviceEqual("/cpu:0", "/cpu:1")

    def test_strings_items_and_protos(self):
        self.assertStartsWith("conv2d/kernel", "conv2d/")
        with self.assertRaises(AssertionError):
            self.assertStartsWith("dense/kernel", "conv2d/")
        self.assertItemsEqual([3, 1, 2], [1, 2, 3])
        with self.assertRaises(AssertionError):
            self.assertItemsEqual([1, 1, 2], [1, 2, 2])
        graph_def = tf.GraphDef()
        node = graph_def.node.add()
        node.name = "x"
        node.op = "Const"
        self.assertProtoEquals('node { name: "x" op: "Const" }', graph_def)
        expected = tf.GraphDef()
        expected.CopyFrom(graph_def)
        self.assertProtoEquals(expected, graph_def)
        with self.assertRaisesRegex(AssertionError, "node 'x' differs"):
            self.assertProtoEquals('node { name: "x" op: "Placeholder" }', graph_def)


class ErrorsTest(tf.test.TestCase):

    def test_raises_op_error(self):
        x = tf.placeholder(tf.float32)
        with self.assertRaisesOpError("You must feed a value for placeholder"):
            self.evaluate(x)
        with self.assertRaisesRegex(AssertionError, "does not match"):
            with self.assertRaisesOpError("no such text"):
                self.evaluate(x)
        with self.assertRaisesRegex(AssertionError, "no error was raised"):
            with self.assertRaisesOpError("anything"):
                pass

    def test_predicate_match_and_other_types_propagate(self):
        with self.assertRaisesWithPredicateMatch(ValueError, lambda e: "bad" in str(e)):
            raise ValueError("bad value")
        with pytest.raises(KeyError):
            with self.assertRaisesWithPredicateMatch(ValueError, "bad"):
                raise KeyError("other")
        with self.assertRaisesRegexp(TypeError, "int"):  # noqa: UP005 - the TF 1.x alias itself
            raise TypeError("int expected")


class SessionsTest(tf.test.TestCase):

    def test_evaluate_nested_structures(self):
        a = tf.constant([1.0, 2.0])
        b = tf.constant(3)
        out = self.evaluate({"sum": a + 1.0, "pair": Pair(b, [b * 2, a])})
        np.testing.assert_allclose(out["sum"], [2.0, 3.0])
        self.assertIsInstance(out["pair"], Pair)
        self.assertEqual(out["pair"].first, 3)
        self.assertEqual(out["pair"].second[0], 6)
        np.testing.assert_allclose(out["pair"].second[1], [1.0, 2.0])

    def test_cached_session_is_reused_and_session_is_new(self):
        with self.cached_session() as first:
            self.assertIs(tf.get_default_session(), first)
            self.assertIs(first.graph, tf.get_default_graph())
        with self.cached_session() as second:
            self.assertIs(first, second)
        with self.test_session() as third:
            self.assertIs(first, third)
        with self.session() as fresh:
            self.assertIsNot(fresh, first)
            self.assertEqual(fresh.run(tf.constant(7)), 7)
        with self.assertRaisesRegex(ValueError, "graph used to get the cached session"):
            with self.cached_session(graph=tf.Graph()):
                pass

    def test_session_on_another_graph(self):
        graph = tf.Graph()
        with graph.as_default():
            c = tf.constant(5.0)
        with self.session(graph=graph) as sess:
            self.assertIs(tf.get_default_graph(), graph)
            self.assertEqual(sess.run(c), 5.0)
            self.assertEqual(self.evaluate(c), 5.0)

    def test_ops_in_session_block_are_pinned_to_cpu(self):
        with self.session():
            x = tf.constant(1.0)
        self.assertDeviceEqual(x.device, "/device:CPU:0")

    def test_get_temp_dir_is_per_test_and_exists(self):
        path = self.get_temp_dir()
        self.assertTrue(os.path.isdir(path))
        self.assertEqual(path, self.get_temp_dir())
        self.assertTrue(path.startswith(tf.test.get_temp_dir()))


class LifecycleTest(tf.test.TestCase):

    def test_each_test_gets_a_fresh_graph_and_sessions_close(self):
        seen = []

        class Inner(tf.test.TestCase):
            def test_a(self):
                tf.constant(1.0, name="leftover")
                with self.cached_session() as sess:
                    seen.append((tf.get_default_graph(), sess))

            def test_b(self):
                seen.append((tf.get_default_graph(), None))

        result = _run(Inner)
        self.assertEqual(result.testsRun, 3)  # test_a, test_b, and test_session skipped
        self.assertEqual(len(result.skipped), 1)
        self.assertEqual(result.errors + result.failures, [])
        (graph_a, sess_a), (graph_b, _) = seen
        self.assertIsNot(graph_a, graph_b)
        self.assertEqual(graph_b.get_operations(), [])
        self.assertEqual(graph_b.seed, 87654321)
        with self.assertRaises(RuntimeError):
            sess_a.run(tf.constant(1.0))

    def test_test_session_is_skipped_in_set_up_and_entered_lazily(self):
        opened = []

        class OwnSetUp(tf.test.TestCase):
            def setUp(self):  # noqa: N802 - overrides without calling TestCase.setUp
                pass

            def test_x(self):
                with self.test_session() as sess:
                    opened.append(sess.run(tf.constant(3)))

        result = _run(OwnSetUp)
        # With its own setUp, the collected `test_session` only builds a context manager
        # (nothing entered, no session): it passes, as in TF.
        self.assertEqual((result.testsRun, len(result.skipped)), (2, 0))
        self.assertEqual(result.errors + result.failures, [])
        self.assertEqual(opened, [3])

    def test_checked_thread_propagates_exception_on_join(self):
        def boom():
            raise ValueError("from the thread")

        thread = self.checkedThread(boom)
        thread.start()
        with self.assertRaisesRegex(AssertionError, "ValueError: from the thread"):
            thread.join()

        results = []
        ok = self.checkedThread(results.append, args=(41,))
        ok.start()
        ok.join()
        self.assertEqual(results, [41])
        self.assertFalse(ok.is_alive())

    def test_unjoined_checked_thread_fails_the_test(self):
        release = threading.Event()

        class Inner(tf.test.TestCase):
            def test_forgets_join(self):
                self.checkedThread(release.wait, args=(5.0,)).start()

        result = _run(Inner)
        release.set()
        self.assertEqual(len(result.failures), 1)
        self.assertIn("Thread was not joined", result.failures[0][1])


def test_main_parses_tf_and_absl_flags_before_running_the_tests(tmp_path):
    """TF 1.x's tf.test.main went through tf.app.run: a test module that reads an absl flag
    (BERT's tokenization_test) finds it parsed; unittest gets the arguments left over."""
    pytest.importorskip("absl.flags")
    module = tmp_path / "flags_probe_test.py"
    module.write_text(
        "from absl import flags as absl_flags\n"
        "from tensorflux.platform import flags\n"
        "from tensorflux.testing import test_case\n"
        "absl_flags.DEFINE_bool('probe_keep_unused', False, 'k')\n"
        "flags.DEFINE_integer('probe_width', 3, 'w')\n"
        "class Probe(test_case.TestCase):\n"
        "    def test_flags(self):\n"
        "        print('values', absl_flags.FLAGS.probe_keep_unused, flags.FLAGS.probe_width)\n"
        "if __name__ == '__main__':\n"
        "    test_case.main()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run(
        [sys.executable, str(module), "--probe_keep_unused", "--probe_width=9", "-v",
         "Probe.test_flags"], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "values True 9" in run.stdout
    assert "Ran 1 test" in run.stderr
