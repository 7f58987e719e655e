"""The array assertions of `tf.test.TestCase`: NumPy comparisons of nested structures.

A mixin for `unittest.TestCase`. Values may be NumPy arrays, Python scalars and lists, or
Tensors (evaluated through the test's `evaluate`), nested in dicts, lists, tuples and
namedtuples. Comparisons follow TF 1.x: NaNs compare equal, float16 and bfloat16 values are
compared with tolerances of at least 1e-3 and 1e-2.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux.framework import device_spec, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.ops.ragged.ragged_tensor import RaggedTensor, RaggedTensorValue

_HALF_TOLERANCE = 1e-3
_BFLOAT16_TOLERANCE = 1e-2


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _dtype_name(value) -> str:
    dtype = getattr(value, "dtype", None)
    return getattr(dtype, "name", str(dtype)) if dtype is not None else ""


def _is_float_kind(array: np.ndarray) -> bool:
    return array.dtype.kind in "fc"


def _is_ragged(value) -> bool:
    return isinstance(value, (RaggedTensor, RaggedTensorValue))


def _text_as_bytes(array: np.ndarray) -> np.ndarray:
    """An object array of the same shape whose `str` items are UTF-8 encoded."""
    out = np.empty(array.shape, dtype=object)
    out.reshape(-1)[:] = [x.encode("utf-8") if isinstance(x, str) else x
                          for x in array.reshape(-1)]
    return out

class ArrayAssertions:
    """Assertions on nested structures of arrays (mixed into `tf.test.TestCase`)."""

    def _as_ndarray(self, value) -> np.ndarray:
        # Tensors and Variables (anything a session can fetch as a graph element) are run.
        if isinstance(value, Tensor) or callable(getattr(value, "_as_graph_element", None)):
            value = self.evaluate(value)
        if isinstance(value, np.ndarray):
            return value
        return np.array(value)

    # -- closeness -------------------------------------------------------------------------

    def _assert_array_close(self, a, b, rtol, atol, msg, path):
        names = (_dtype_name(a), _dtype_name(b))
        a = self._as_ndarray(a)
        b = self._as_ndarray(b)
        where = f" at {path}" if path else ""
        self.assertEqual(a.shape, b.shape, f"Shape mismatch{where}: expected {a.shape}, got "
                                           f"{b.shape}. {msg or ''}")
        if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_) or \
                not (np.issubdtype(b.dtype, np.number) or b.dtype == np.bool_):
            self._assert_array_equal(a, b, msg, path)
            return
        if "float16" in names or a.dtype == np.float16 or b.dtype == np.float16:
            rtol = max(rtol, _HALF_TOLERANCE)
            atol = max(atol, _HALF_TOLERANCE)
        if "bfloat16" in names:
            rtol = max(rtol, _BFLOAT16_TOLERANCE)
            atol = max(atol, _BFLOAT16_TOLERANCE)
        a_cmp = a.astype(np.float64) if a.dtype == np.bool_ else a
        b_cmp = b.astype(np.float64) if b.dtype == np.bool_ else b
        close = np.isclose(a_cmp, b_cmp, rtol=rtol, atol=atol, equal_nan=True)
        if not np.all(close):
            bad = np.argwhere(~close) if close.ndim else np.zeros((1, 0), dtype=int)
            shown = [tuple(int(i) for i in index) for index in bad[:5]]
            lines = [f"Arrays not close{where} (rtol={rtol}, atol={atol}): "
                     f"{int(np.size(close) - np.count_nonzero(close))} of {close.size} differ."]
            for index in shown:
                lines.append(f"  index {index}: expected {a[index]}, got {b[index]}")
            lines.append(f"expected: {a!r}")
            lines.append(f"actual:   {b!r}")
            if msg:
                lines.append(str(msg))
            self.fail("\n".join(lines))

    def _assert_close_recursive(self, a, b, rtol, atol, msg, path):
        a_seq = isinstance(a, (list, tuple, dict))
        b_seq = isinstance(b, (list, tuple, dict))
        if isinstance(a, dict) or isinstance(b, dict):
            if not (isinstance(a, dict) and isinstance(b, dict)):
                self.fail(f"Mismatched structure at {path or 'top'}: {type(a).__name__} vs "
                          f"{type(b).__name__}. {msg or ''}")
            self.assertEqual(set(a), set(b), f"Mismatched keys at {path or 'top'}: "
                                             f"{sorted(map(str, a))} vs {sorted(map(str, b))}. "
                                             f"{msg or ''}")
            for key in a:
                self._assert_close_recursive(a[key], b[key], rtol, atol, msg, f"{path}[{key!r}]")
            return
        if (_is_namedtuple(a) or _is_namedtuple(b)) and a_seq and b_seq:
            self.assertEqual(len(a), len(b), f"Length mismatch at {path or 'top'}. {msg or ''}")
            for index, (x, y) in enumerate(zip(a, b)):
                self._assert_close_recursive(x, y, rtol, atol, msg, f"{path}[{index}]")
            return
        if a_seq and b_seq:
            try:
                a_array = np.asarray(a)
                b_array = np.asarray(b)
                uniform = a_array.dtype != object and b_array.dtype != object
            except ValueError:
                uniform = False
            if uniform:
                self._assert_array_close(a_array, b_array, rtol, atol, msg, path)
                return
            self.assertEqual(len(a), len(b), f"Length mismatch at {path or 'top'}: {len(a)} vs "
                                             f"{len(b)}. {msg or ''}")
            for index, (x, y) in enumerate(zip(a, b)):
                self._assert_close_recursive(x, y, rtol, atol, msg, f"{path}[{index}]")
            return
        self._assert_array_close(a, b, rtol, atol, msg, path)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Asserts that two (nested) structures of arrays or Tensors have near values.

        Elements are close when `|a - b| <= atol + rtol * |b|`; NaNs are equal. Dicts must have
        the same keys, lists and tuples the same lengths.

        Raises:
            AssertionError: a shape, structure or value differs.
        """
        self._assert_close_recursive(a, b, rtol, atol, msg, "")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        """`assertAllClose` with tolerances widened by the values' precision (float32/16)."""
        names = {_dtype_name(a), _dtype_name(b)}
        a = self._as_ndarray(a)
        b = self._as_ndarray(b)
        dtypes = {a.dtype, b.dtype}
        if np.float32 in dtypes or np.complex64 in dtypes or "float32" in names:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.float16 in dtypes or "float16" in names:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if "bfloat16" in names:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Asserts that two structures are NOT close (see `assertAllClose`)."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        self.fail(f"The two values are close at all elements. {msg or ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        """Asserts two float lists have the same length and elements within `err`."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        """Asserts `|f1 - f2| <= err` (NaN never is)."""
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err,
                        f"{f1!r} != {f2!r} +/- {err!r}{' : ' + str(msg) if msg else ''}")

    # -- equality --------------------------------------------------------------------------

    def _assert_array_equal(self, a, b, msg, path=""):
        where = f" at {path}" if path else ""
        self.assertEqual(a.shape, b.shape, f"Shape mismatch{where}: expected {a.shape}, got "
                                           f"{b.shape}. {msg or ''}")
        if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} <= {"U", "S", "O"}:
            # Text against bytes (a fetched string tensor against str literals): str items
            # compare as their UTF-8 bytes, as TF's assertAllEqual does.
            a, b = _text_as_bytes(a), _text_as_bytes(b)
        same = a == b
        if _is_float_kind(a) and _is_float_kind(b):
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        same = np.asarray(same)
        if not np.all(same):
            bad = np.argwhere(~same) if same.ndim else np.zeros((1, 0), dtype=int)
            lines = [f"Arrays not equal{where}: {int(same.size - np.count_nonzero(same))} of "
                     f"{same.size} differ."]
            for index in bad[:5]:
                index = tuple(int(i) for i in index)
                lines.append(f"  index {index}: expected {a[index]}, got {b[index]}")
            lines.append(f"expected: {a!r}")
            lines.append(f"actual:   {b!r}")
            if msg:
                lines.append(str(msg))
            self.fail("\n".join(lines))

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Asserts two arrays (or Tensors, or array-likes) have the same shape and elements;
        a ragged value (RaggedTensor or its fetched value) compares as nested lists."""
        if _is_ragged(a) or _is_ragged(b):
            self._assert_ragged_equal(a, b, msg)
            return
        self._assert_array_equal(self._as_ndarray(a), self._as_ndarray(b), msg)

    def _assert_ragged_equal(self, a, b, msg):
        values = [self.evaluate(v) if isinstance(v, (RaggedTensor, Tensor)) else v
                  for v in (a, b)]
        lists = [v.to_list() if isinstance(v, RaggedTensorValue) else
                 v.tolist() if isinstance(v, np.ndarray) else v for v in values]
        self.assertEqual(lists[0], lists[1], msg)
        if all(isinstance(v, RaggedTensorValue) for v in values):
            self.assertEqual(values[0].ragged_rank, values[1].ragged_rank,
                             f"ragged_rank differs. {msg or ''}")

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        """Asserts two arrays differ in shape or in at least one element."""
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        self.fail(f"The two values are equal at all elements. {msg or ''}")

    # -- order and membership --------------------------------------------------------------

    def _assert_all(self, a, predicate, what):
        array = self._as_ndarray(a)
        held = np.asarray(predicate(array))
        if not np.all(held):
            bad = np.argwhere(~held) if held.ndim else np.zeros((1, 0), dtype=int)
            shown = [tuple(int(i) for i in index) for index in bad[:5]]
            self.fail(f"Not all elements are {what}; first failing indices {shown} in {array!r}")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        """Asserts every element of `a` is > `comparison_target`."""
        self._assert_all(a, lambda x: x > comparison_target, f"> {comparison_target!r}")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        """Asserts every element of `a` is < `comparison_target`."""
        self._assert_all(a, lambda x: x < comparison_target, f"< {comparison_target!r}")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        """Asserts every element of `a` is >= `comparison_target`."""
        self._assert_all(a, lambda x: x >= comparison_target, f">= {comparison_target!r}")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        """Asserts every element of `a` is <= `comparison_target`."""
        self._assert_all(a, lambda x: x <= comparison_target, f"<= {comparison_target!r}")

    def assertAllInRange(self, target, lower_bound, upper_bound,  # noqa: N802
                         open_lower_bound=False, open_upper_bound=False):
        """Asserts every element of a real-valued `target` lies in the given interval.

        Raises:
            AssertionError: an element lies outside, or `target` is not real-valued.
        """
        array = self._as_ndarray(target)
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype,
                                                                          np.integer)):
            self.fail(f"The value of {target!r} does not have an ordered numeric type, "
                      f"instead it has type: {array.dtype}")
        low = (lambda x: x > lower_bound) if open_lower_bound else (lambda x: x >= lower_bound)
        high = (lambda x: x < upper_bound) if open_upper_bound else (lambda x: x <= upper_bound)
        interval = (f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                    f"{')' if open_upper_bound else ']'}")
        self._assert_all(array, lambda x: np.logical_and(low(x), high(x)), f"in {interval}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        """Asserts every element of `target` is in `expected_set`."""
        array = self._as_ndarray(target)
        values = set(np.unique(array).tolist())
        extra = values - set(expected_set)
        if extra:
            self.fail(f"{sorted(map(repr, extra))} unexpected values; expected only "
                      f"{sorted(map(repr, expected_set))}")

    # -- shapes, dtypes, devices -----------------------------------------------------------

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """Asserts a NumPy array's shape equals a Tensor's static shape.

        Raises:
            TypeError: `np_array` is not an ndarray or `tf_tensor` not a Tensor.
        """
        if not isinstance(np_array, (np.ndarray, np.generic)):
            raise TypeError(f"np_array must be a Numpy ndarray or Numpy scalar, got "
                            f"{type(np_array).__name__}")
        if not isinstance(tf_tensor, Tensor):
            raise TypeError(f"tf_tensor must be a Tensor, got {type(tf_tensor).__name__}")
        self.assertAllEqual(list(np_array.shape), tf_tensor.get_shape().as_list(), msg=msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        """Asserts `target` (array or nested structure of arrays) has `expected_dtype`."""
        targets = target if isinstance(target, (list, tuple)) else [target]
        for item in targets:
            self.assertEqual(self._as_ndarray(item).dtype, np.dtype(expected_dtype))

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        """Asserts two device strings name the same device once canonicalized."""
        self.assertEqual(device_spec.canonical_name(device1 or ""),
                         device_spec.canonical_name(device2 or ""),
                         f"Devices {device1} and {device2} are not equal. {msg or ''}")

    # -- errors and strings ----------------------------------------------------------------

    def assertRaisesWithPredicateMatch(self, exception_type,  # noqa: N802
                                       expected_err_re_or_predicate):
        """A context manager asserting its body raises `exception_type` matching a predicate.

        Args:
            exception_type: the exception class (or tuple of classes) expected.
            expected_err_re_or_predicate: a regular expression searched in the error's message
                (an OpError's `message`, else `str(e)`), or a callable taking the exception.
        """
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(err):
                message = err.message if isinstance(err, errors.OpError) else str(err)
                return re.search(expected_err_re_or_predicate, message) is not None
        return _PredicateMatch(self, exception_type, predicate, expected_err_re_or_predicate)

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """`assertRaisesWithPredicateMatch(tf.errors.OpError, ...)`."""
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        """Asserts `actual.startswith(expected_start)`."""
        if not actual.startswith(expected_start):
            self.fail(f"Did not start with '{expected_start}': {actual!r}. {msg or ''}")


class _PredicateMatch:
    """The context manager of `assertRaisesWithPredicateMatch`."""

    def __init__(self, test, exception_type, predicate, description):
        self._test = test
        self._type = exception_type
        self._predicate = predicate
        self._description = description

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._test.fail(f"Expected {self._type} to be raised, but no error was raised.")
        if not issubclass(exc_type, self._type):
            return False
        if not self._predicate(exc):
            self._test.fail(f"Exception of type {exc_type.__name__}: {exc} does not match "
                            f"{self._description!r}")
        self.exception = exc
        return True
