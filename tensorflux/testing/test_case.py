"""`tf.test.TestCase`: a `unittest.TestCase` with a fresh default graph and sessions on it.

Each test method runs with a new default graph (reset in `setUp`, its graph seed fixed) and
NumPy's and Python's random generators seeded, as in TF 1.x. `session()` opens a new Session
on the test's graph, `cached_session()` reuses one per test; both are closed at `tearDown`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import shutil
import sys
import tempfile
import threading
import unittest

import numpy as np
from google.protobuf import message as message_lib
from google.protobuf import text_format

from tensorflux.framework import graph as graph_mod
from tensorflux.ops.random import seed as seed_mod
from tensorflux.platform import app, flags
from tensorflux.protos import config_pb2
from tensorflux.runtime import session as session_mod
from tensorflux.testing.assertions import ArrayAssertions

__all__ = ["TestCase", "get_temp_dir", "assert_equal_graph_def"]

_TEMP_DIR: list = []


def get_temp_dir() -> str:
    """A temporary directory for this process's tests, removed when the process exits."""
    if not _TEMP_DIR:
        path = tempfile.mkdtemp(prefix="tensorflux_test_")
        _TEMP_DIR.append(path)
        atexit.register(shutil.rmtree, path, ignore_errors=True)
    return _TEMP_DIR[0]


def _sorted_nodes(graph_def):
    return sorted(graph_def.node, key=lambda node: node.name)


def assert_equal_graph_def(expected, actual, checkpoint_v2=False, hash_table_shared_name=False):
    """Asserts two `GraphDef`s hold the same nodes (order-insensitive), else says which differ.

    Args:
        expected, actual: `GraphDef` protos.
        checkpoint_v2, hash_table_shared_name: accepted for TF 1.x compatibility.

    Raises:
        TypeError: either argument is not a GraphDef.
        AssertionError: a node is missing, extra, or differs.
    """
    for name, value in (("expected", expected), ("actual", actual)):
        if type(value).__name__ != "GraphDef":
            raise TypeError(f"Expected tf.GraphDef for {name}, got {type(value).__name__}")
    expected_nodes = {node.name: node for node in expected.node}
    actual_nodes = {node.name: node for node in actual.node}
    missing = sorted(set(expected_nodes) - set(actual_nodes))
    extra = sorted(set(actual_nodes) - set(expected_nodes))
    problems = []
    if missing:
        problems.append(f"missing nodes: {missing}")
    if extra:
        problems.append(f"unexpected nodes: {extra}")
    for name in sorted(set(expected_nodes) & set(actual_nodes)):
        if expected_nodes[name] != actual_nodes[name]:
            problems.append(f"node {name!r} differs:\nexpected:\n{expected_nodes[name]}"
                            f"actual:\n{actual_nodes[name]}")
    if problems:
        raise AssertionError("GraphDefs differ: " + "\n".join(problems))


class _CheckedThread:
    """A thread whose exception fails its test when the test joins it."""

    def __init__(self, test, target, args=None, kwargs=None):
        self._test = test
        self._target = target
        self._args = () if args is None else args
        self._kwargs = {} if kwargs is None else kwargs
        self._thread = threading.Thread(target=self._protected_run, daemon=True)
        self._exception = None
        self._started = False

    def _protected_run(self):
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as err:  # noqa: BLE001 - reported to the test on join
            self._exception = err

    def start(self) -> None:
        self._started = True
        self._thread.start()

    def join(self) -> None:
        """Waits for the thread; fails the test with the thread's exception, if it raised."""
        self._thread.join()
        if self._exception is not None:
            self._test.fail(f"Error in checkedThread: {type(self._exception).__name__}: "
                            f"{self._exception}")

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def check_termination(self) -> None:
        """Fails the test if a started thread is still running."""
        if self._started and self._thread.is_alive():
            self._test.fail("Thread was not joined.")


class _CapturedWrites:
    """The bytes written to a captured stream, read back as text."""

    def __init__(self, path: str):
        self._path = path

    def contents(self) -> str:
        with open(self._path, encoding="utf-8", errors="replace") as f:
            return f.read()


class TestCase(ArrayAssertions, unittest.TestCase):
    """Base class for tests of tensorflux programs (TF 1.x `tf.test.TestCase`).

    Contract: every test method starts with a new empty default graph whose graph seed is
    `DEFAULT_GRAPH_SEED`; sessions opened through `session()`, `cached_session()` and
    `test_session()` run that graph (or the one passed) on the CPU and are closed at tearDown;
    threads from `checkedThread` must have been joined by then.
    """

    def __init__(self, methodName="runTest"):  # noqa: N803
        super().__init__(methodName)
        self._threads = []
        self._tempdir = None
        self._cached_session = None
        self._cached_graph = None
        self._cached_config = None

    def setUp(self):  # noqa: N802
        self._clear_cached_session()
        random.seed(seed_mod.DEFAULT_GRAPH_SEED)
        np.random.seed(seed_mod.DEFAULT_GRAPH_SEED)
        graph_mod.reset_default_graph()
        seed_mod.set_random_seed(seed_mod.DEFAULT_GRAPH_SEED)
        if self.id().endswith(".test_session"):  # the method's name makes unittest collect it
            self.skipTest("Not a test.")

    def tearDown(self):  # noqa: N802
        for thread in self._threads:
            thread.check_termination()
        self._clear_cached_session()

    # -- files -----------------------------------------------------------------------------

    def get_temp_dir(self) -> str:
        """A temporary directory unique to this test, inside the process's test directory."""
        if not self._tempdir:
            self._tempdir = tempfile.mkdtemp(dir=get_temp_dir())
        return self._tempdir

    # -- sessions --------------------------------------------------------------------------

    def _clear_cached_session(self):
        if self._cached_session is not None:
            self._cached_session.close()
        self._cached_session = None
        self._cached_graph = None
        self._cached_config = None

    @staticmethod
    def _prepare_config(config):
        if config is None:
            config = config_pb2.ConfigProto()
            config.allow_soft_placement = True
        return config

    @contextlib.contextmanager
    def _as_default(self, sess, use_gpu, force_gpu):
        with sess.graph.as_default(), sess.as_default():
            if force_gpu or use_gpu:
                # NOTE: tensorflux has CPU devices only; soft placement keeps GPU-pinned ops on it.
                yield sess
            else:
                with sess.graph.device("/device:CPU:0"):
                    yield sess

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new Session on `graph` (default: the test's default graph), closed on exit.

        The session and its graph are the defaults inside the block; ops created there are
        placed on the CPU unless `use_gpu` (there is no GPU: the flag only lifts the pin).
        """
        sess = session_mod.Session(graph=graph, config=self._prepare_config(config))
        try:
            with self._as_default(sess, use_gpu, force_gpu):
                yield sess
        finally:
            sess.close()

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The test's one Session on `graph`, created on first use and closed at tearDown.

        Raises:
            ValueError: a later call asks for a different graph or config than the first.
        """
        if self._cached_session is None:
            sess = session_mod.Session(graph=graph, config=self._prepare_config(config))
            self._cached_session = sess
            self._cached_graph = graph
            self._cached_config = config
        else:
            if graph is not None and self._cached_graph is not graph:
                raise ValueError("The graph used to get the cached session is different than "
                                 "the one that was used to create the session. Maybe create a "
                                 "new session with self.session()")
            if config is not None and self._cached_config is not config:
                raise ValueError("The config used to get the cached session is different "
                                 "than the one that was used to create the session. Maybe "
                                 "create a new session with self.session()")
        with self._as_default(self._cached_session, use_gpu, force_gpu):
            yield self._cached_session

    @contextlib.contextmanager
    def test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """TF 1.x's older spelling: the cached session without `graph`, else a new one.

        A context manager entered lazily, as in TF: calling it alone opens no session.
        """
        if graph is None:
            manager = self.cached_session(config=config, use_gpu=use_gpu, force_gpu=force_gpu)
        else:
            manager = self.session(graph, config, use_gpu, force_gpu)
        with manager as sess:
            yield sess

    def _GetNdArray(self, a):  # noqa: N802 - TF's private helper, used by its kernel tests
        """`a` as an ndarray."""
        return a if isinstance(a, np.ndarray) else np.array(a)

    def evaluate(self, tensors):
        """Runs a (nested structure of) Tensors in the default session and returns the values.

        Without a default session, the test's cached session is used.
        """
        sess = graph_mod.get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    # -- threads ---------------------------------------------------------------------------

    def checkedThread(self, target, args=None, kwargs=None):  # noqa: N802
        """A thread running `target(*args, **kwargs)`; `join()` fails the test if it raised.

        Returns:
            An object with `start()`, `join()`, `is_alive()`; unjoined threads fail tearDown.
        """
        thread = _CheckedThread(self, target, args, kwargs)
        self._threads.append(thread)
        return thread

    # -- protos and collections ------------------------------------------------------------

    def assertProtoEquals(self, expected_message_maybe_ascii, message, msg=None):  # noqa: N802
        """Asserts a proto equals the expected one, given as a message or as text format.

        Raises:
            AssertionError: they differ (the message shows both in text format).
            TypeError: the expected value is neither a message nor a string.
        """
        if isinstance(expected_message_maybe_ascii, message_lib.Message):
            expected = expected_message_maybe_ascii
        elif isinstance(expected_message_maybe_ascii, (str, bytes)):
            expected = type(message)()
            text = expected_message_maybe_ascii
            text_format.Merge(text.decode() if isinstance(text, bytes) else text, expected)
        else:
            raise TypeError(f"Can't compare protos of type {type(expected_message_maybe_ascii)}"
                            f" and {type(message)}.")
        if expected != message:
            if type(expected).__name__ == "GraphDef":
                assert_equal_graph_def(expected, message)
            self.fail(f"Protos differ.\nexpected:\n{text_format.MessageToString(expected)}"
                      f"actual:\n{text_format.MessageToString(message)}{msg or ''}")

    @contextlib.contextmanager
    def captureWritesToStream(self, stream):  # noqa: N802 - TF's name
        """Captures what is written to `stream` (e.g. sys.stderr) at the file-descriptor level
        inside the block, so writes by kernels reach it too; `.contents()` reads them.

        Raises:
            ValueError: `stream` has no file descriptor.
        """
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError) as err:
            raise ValueError(f"captureWritesToStream needs a stream with a file descriptor, "
                             f"got {stream!r}") from err
        stream.flush()
        handle, path = tempfile.mkstemp(dir=self.get_temp_dir(), suffix=".captured")
        saved = os.dup(fd)
        os.dup2(handle, fd)
        os.close(handle)
        try:
            yield _CapturedWrites(path)
        finally:
            stream.flush()
            os.dup2(saved, fd)
            os.close(saved)

    def assertItemsEqual(self, expected_seq, actual_seq, msg=None):  # noqa: N802
        """Asserts the two sequences hold the same elements, in any order (with counts)."""
        self.assertCountEqual(expected_seq, actual_seq, msg)

    # NOTE: TF 1.x tests still use the Python 2 names unittest dropped in Python 3.12.
    def assertRaisesRegexp(self, *args, **kwargs):  # noqa: N802
        return self.assertRaisesRegex(*args, **kwargs)

    def assertRegexpMatches(self, *args, **kwargs):  # noqa: N802
        return self.assertRegex(*args, **kwargs)


def main(argv=None) -> None:
    """Runs the tests of the `__main__` module (TF 1.x `tf.test.main`).

    As TF 1.x (whose `tf.test.main` went through `tf.app.run`), the command line's flags are
    parsed first: tensorflux's `tf.flags` and, when the test module imported absl, absl's
    (BERT's tokenization_test reads an absl flag); the arguments left go to unittest.
    """
    if "TEST_TMPDIR" in os.environ:
        os.makedirs(os.environ["TEST_TMPDIR"], exist_ok=True)
    argv = list(sys.argv if argv is None else argv)
    try:
        argv = flags.FLAGS(argv, known_only=True)
    except flags.Error as e:
        print(f"FATAL Flags parsing error: {e}", file=sys.stderr)
        sys.exit(1)
    unittest.main(module="__main__", argv=app.parse_absl_flags(argv))
