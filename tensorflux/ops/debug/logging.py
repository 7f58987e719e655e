"""Logging and checking ops: Assert, CheckNumerics, Print, PrintV2 (`tf.print`).

Tensor values in messages are summarized as TensorFlow does. The classic form (Assert, Print)
shows the first `summarize` elements in row-major order with nested brackets and a trailing
"..." when cut: `[[1 2 3]...]`. The `tf.print` form (StringFormat, PrintV2) shows `summarize`
entries at each end of every dimension, numpy style: `[0 1 2 ... 7 8 9]`.
"""

from __future__ import annotations

import itertools
import logging
import pprint
import sys
import threading
import time

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.platform import tf_logging

__all__ = ["Assert", "Print", "check_numerics", "add_check_numerics_ops", "print"]

# -- value summaries -------------------------------------------------------------------------


def _format_float(value, digits: int, fallback: int, parse) -> str:
    text = f"{value:.{digits}g}"
    if parse(text) != value:
        text = f"{value:.{fallback}g}"
    return text


def format_element(value, print_v2: bool = False) -> str:
    """One element as TensorFlow prints it (shortest round-trip floats, 1/0 for bools)."""
    if isinstance(value, bytes):
        if print_v2:
            return '"' + c_escape(value) + '"'
        return value.decode("utf-8", errors="replace")
    if isinstance(value, (np.bool_, bool)):
        return "1" if value else "0"
    if isinstance(value, np.complexfloating):
        return "?"
    if isinstance(value, np.float64):
        if not np.isfinite(value):
            return str(float(value))
        return _format_float(float(value), 15, 17, float)
    if isinstance(value, np.floating):
        value = np.float32(value)
        if not np.isfinite(value):
            return str(float(value))
        return _format_float(float(value), 6, 9, np.float32)
    return str(value)


_C_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
              ord("'"): "\\'", ord("\\"): "\\\\"}


def c_escape(data: bytes) -> str:
    """C-style escaping of bytes (`\\n`, `\\"`, octal for other non-printables)."""
    out = []
    for byte in data:
        special = _C_ESCAPES.get(byte)
        if special is not None:
            out.append(special)
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return "".join(out)


def summarize_value(array, max_entries: int) -> str:
    """The classic summary: the first `max_entries` elements (all if negative), bracketed."""
    array = np.asarray(array)
    total = array.size
    limit = total if max_entries < 0 else min(max_entries, total)
    items = [format_element(x) for x in array.reshape(-1)[:limit]]
    if array.ndim == 0:
        text = " ".join(items)
    else:
        parts: list = []
        _print_one_dim(0, array.shape, limit, items, [0], parts)
        text = "".join(parts)
    return text + "..." if total > limit else text


def _print_one_dim(dim, shape, limit, items, position, out) -> None:
    if position[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if position[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(items[position[0]])
            position[0] += 1
        return
    for _ in range(shape[dim]):
        opened = position[0] < limit
        if opened:
            out.append("[")
        _print_one_dim(dim + 1, shape, limit, items, position, out)
        if position[0] < limit or opened:
            out.append("]")


def summarize_value_v2(array, summarize: int) -> str:
    """The `tf.print` summary: `summarize` entries at each end of every dimension."""
    array = np.asarray(array)
    total = array.size
    edge = total if summarize < 0 else min(summarize, total)
    out: list = []
    _print_one_dim_v2(array, 0, array.ndim, edge, out)
    return "".join(out)


def _dim_spacing(dim: int, ndims: int) -> str:
    if dim == ndims - 1:
        return " "
    return "\n" * (ndims - dim - 1) + " " * (dim + 1)


def _print_one_dim_v2(value, dim, ndims, edge, out) -> None:
    if dim == ndims:
        out.append(format_element(value[()] if isinstance(value, np.ndarray) else value,
                                  print_v2=True))
        return
    out.append("[")
    count = len(value)
    spacing = _dim_spacing(dim, ndims)
    for i in range(min(edge, count)):
        if i > 0:
            out.append(spacing)
        _print_one_dim_v2(value[i], dim + 1, ndims, edge, out)
    if count > 2 * edge:
        out.append(spacing)
        out.append("...")
    for i in range(max(edge, count - edge), count):
        out.append(spacing)
        _print_one_dim_v2(value[i], dim + 1, ndims, edge, out)
    out.append("]")



# -- Assert ----------------------------------------------------------------------------------

AssertOp = define_op("Assert", inputs=["condition: bool", "data: T"],
                     attrs=["T: list(type) >= 1", "summarize: int = 3"], stateful=True,
                     differentiable=False)


@AssertOp.shape_fn
def _assert_shape(condition, data):
    return []


@AssertOp.kernel
def _assert_kernel(condition, *data, summarize):
    if np.ndim(condition) > 1 or np.size(condition) != 1:
        raise errors.InvalidArgumentError(
            None, None, f"In[0] should be a scalar: [{','.join(map(str, np.shape(condition)))}]")
    if not condition.reshape(-1)[0]:
        shown = " ".join("[" + summarize_value(d, summarize) + "]" for d in data)
        raise errors.InvalidArgumentError(None, None, "assertion failed: " + shown)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF1 name
    """Raises InvalidArgumentError when `condition` is false at run time, showing `data`.

    Args:
        condition: a scalar boolean tensor.
        data: tensors (or Python values) summarized in the error message.
        summarize: how many entries of each data tensor to show (default 3; -1: all).
        name: optional name.

    Returns:
        The Assert Operation: run it, or use it as a control dependency.

    Example:
        >>> check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive:", x])
        >>> with tf.control_dependencies([check]):
        ...     y = tf.log(x)
    """
    with _scope(name, "Assert"):
        tensors = [convert_to_tensor(d) for d in data]
        condition = convert_to_tensor(condition, dtype=dtypes.bool_, name="Condition")
        return AssertOp(condition, tensors, summarize=3 if summarize is None else summarize,
                        name="Assert")


# -- CheckNumerics ---------------------------------------------------------------------------

CheckNumerics = define_op("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
                          attrs=["T: {bfloat16, float16, float32, float64}", "message: string"],
                          stateful=True)


@CheckNumerics.shape_fn
def _check_numerics_shape(tensor):
    return tensor


@CheckNumerics.kernel
def _check_numerics_kernel(tensor, *, message):
    # NOTE: one reduction answers the common case; nan and inf both survive a sum.
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(tensor)):
            return tensor
    has_nan = bool(np.isnan(tensor).any())
    has_inf = bool(np.isinf(tensor).any())
    if not (has_nan or has_inf):
        return tensor  # the sum overflowed; the values are finite
    what = "Inf and NaN" if has_nan and has_inf else "NaN" if has_nan else "Inf"
    raise errors.InvalidArgumentError(None, None, f"{message} : Tensor had {what} values")


@CheckNumerics.gradient
def _check_numerics_grad(op, grad):
    return check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                          f"gradient. {op.get_attr_str('message')}")


def check_numerics(tensor, message, name=None):
    """Passes `tensor` through, failing the step if it holds NaN or Inf.

    Args:
        tensor: a floating tensor.
        message: prefix of the error message.
        name: optional name.

    Returns:
        `tensor`'s value.

    Raises (at run time):
        InvalidArgumentError: "<message> : Tensor had NaN values" (or Inf, or Inf and NaN).
    """
    return CheckNumerics(tensor, message=message, name=name)


def add_check_numerics_ops():
    """Adds a CheckNumerics op for every floating tensor of the default graph, chained.

    Returns:
        A grouped op that runs all the checks.

    Raises:
        ValueError: the graph has control flow (the checks cannot cross frames).
    """
    # cycle: ops.control_flow.primitives -> ... imports this module (at import time)
    from tensorflux.ops.control_flow.primitives import group

    graph = graph_mod.get_default_graph()
    checks: list = []
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
                if op._get_control_flow_context() is not None:
                    raise ValueError("`tf.add_check_numerics_ops() is not compatible with "
                                     "TensorFlow control flow operations such as `tf.cond()` or "
                                     "`tf.while_loop()`.")
                with graph.control_dependencies(checks):
                    checks = [check_numerics(output, f"{op.name}:{output.value_index}")]
    return group(*checks)


# -- Print, PrintV2 --------------------------------------------------------------------------

PrintOp = define_op("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
                    attrs=["T: type", "U: list(type) >= 0", "message: string = ''",
                           "first_n: int = -1", "summarize: int = 3"], stateful=True)


@PrintOp.shape_fn
def _print_shape(input, data):
    return input


@PrintOp.kernel(factory=True)
def _print_kernel(message, first_n, summarize):
    calls = itertools.count()

    def print_(value, *data):
        if first_n < 0 or next(calls) < first_n:
            shown = "".join("[" + summarize_value(d, summarize) + "]" for d in data)
            sys.stderr.write(message + shown + "\n")
            sys.stderr.flush()
        return value

    return print_


@PrintOp.gradient
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """Passes `input_` through, printing `message` and `data` to stderr when it runs.

    Args:
        input_: the tensor passed through.
        data: tensors to print, each summarized in brackets.
        message: a prefix for the printed line.
        first_n: print only the first `first_n` times (negative: always).
        summarize: entries shown per tensor (default 3).
        name: optional name.

    Returns:
        A tensor with `input_`'s value.

    Example:
        >>> x = tf.Print(x, [tf.shape(x), x], "x: ", summarize=10)
    """
    return PrintOp(input_, list(data), message=message or "",
                   first_n=-1 if first_n is None else first_n,
                   summarize=3 if summarize is None else summarize, name=name)


PrintV2 = define_op("PrintV2", inputs=["input: string"],
                    attrs=["output_stream: string = 'stderr'", "end: string = '\\n'"],
                    stateful=True, differentiable=False)


@PrintV2.shape_fn
def _print_v2_shape(input):
    input.with_rank(0)
    return []


_LOG_LEVELS = {"log(info)": logging.INFO, "log(warning)": logging.WARNING,
               "log(error)": logging.ERROR}


@PrintV2.kernel(factory=True)
def _print_v2_kernel(output_stream, end):
    lock = threading.Lock()

    def print_v2(text):
        line = text.reshape(-1)[0].decode("utf-8", errors="replace")
        if output_stream in ("stderr", "stdout"):
            stream = sys.stderr if output_stream == "stderr" else sys.stdout
            with lock:
                stream.write(line + end)
                stream.flush()
        elif output_stream in _LOG_LEVELS:
            tf_logging.log(_LOG_LEVELS[output_stream], line)
        elif output_stream.startswith("file://"):
            with lock, open(output_stream[len("file://"):], "a", encoding="utf-8") as f:
                f.write(line + end)
        else:
            raise errors.InvalidArgumentError(
                None, None, f"Unknown output stream: {output_stream}; expected stderr, stdout, "
                            "log(info), log(warning), log(error) or file://<path>")

    return print_v2


def _stream_name(stream) -> str:
    if isinstance(stream, str) and stream.startswith("file://"):
        return stream
    if stream is sys.stdout:
        return "stdout"
    if stream is sys.stderr:
        return "stderr"
    for names, level in (((tf_logging.info, logging.info), "log(info)"),
                         ((tf_logging.warning, tf_logging.warn, logging.warning), "log(warning)"),
                         ((tf_logging.error, logging.error), "log(error)")):
        if any(stream is n for n in names):
            return level
    if isinstance(stream, int) and not isinstance(stream, bool):
        for number, level in ((logging.INFO, "log(info)"), (logging.WARNING, "log(warning)"),
                              (logging.ERROR, "log(error)")):
            if stream == number:
                return level
    raise ValueError(f"Unsupported output stream, logging level, or file.{stream}. Supported "
                     "streams are sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, "
                     "tf.logging.error. File needs to be in the form of 'file://<filepath>'.")


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor) or (hasattr(value, "_as_graph_element")
                                         and not isinstance(value, Operation))


class _Slot:
    """Stands for a tensor inside a structure formatted by pprint."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _replace_tensors(value, slot, found: list):
    if isinstance(value, SparseTensor):
        # TF prints a SparseTensor as the quoted text of its three component tensors.
        found.extend([value.indices, value.values, value.dense_shape])
        p = slot.text
        return _Slot(f"'SparseTensor(indices={p}, values={p}, shape={p})'")
    if _is_tensor(value):
        found.append(value)
        return slot
    if isinstance(value, dict):
        return {k: _replace_tensors(value[k], slot, found) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        items = [_replace_tensors(v, slot, found) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def print(*inputs, **kwargs):  # noqa: A001 - TF name
    """Prints tensors and Python values when the returned op runs (`tf.print`).

    Args:
        *inputs: tensors, Python values, and nested lists/dicts of them.
        output_stream: sys.stderr (default), sys.stdout, a tf.logging function or level, or
            "file://<path>".
        summarize: entries shown at each end of every dimension (default 3; -1: all).
        sep: separator between inputs (default " ").
        end: appended after the line (default "\\n").
        name: optional name.

    Returns:
        The PrintV2 Operation: run it, or make it a control dependency.

    Example:
        >>> op = tf.print("loss:", loss, output_stream=sys.stdout)
    """
    # cycle: ops.strings.conversion imports this module (at import time)
    from tensorflux.ops.strings.conversion import string_format

    output_stream = kwargs.pop("output_stream", sys.stderr)
    name = kwargs.pop("name", None)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {kwargs}")
    stream = _stream_name(output_stream)
    if (len(inputs) == 1 and isinstance(inputs[0], Tensor) and inputs[0].shape.ndims == 0
        and inputs[0].dtype.base_dtype == dtypes.string):
        text = inputs[0]
    else:
        plain = [_replace_tensors(x, _Slot(""), []) for x in inputs]
        placeholder = "{}"
        plain_text = " ".join(pprint.pformat(x) for x in plain)
        for i in itertools.count():
            if placeholder not in plain_text:
                break
            placeholder += str(i % 10)
        tensors: list = []
        templates = []
        for x in inputs:
            if isinstance(x, str):
                templates.append(x)
            else:
                templates.append(pprint.pformat(_replace_tensors(x, _Slot(placeholder), tensors)))
        text = string_format(sep.join(templates), tensors, placeholder=placeholder,
                             summarize=summarize,
                             name=None if not name else name + "_format")
    return PrintV2(text, output_stream=stream, end=end, name=name)


# -- Timestamp ------------------------------------------------------------------------------

Timestamp = define_op("Timestamp", inputs=[], outputs=["ts: float64"], attrs=[], stateful=True,
                      differentiable=False)


@Timestamp.shape_fn
def _timestamp_shape():
    return TensorShape([])


@Timestamp.kernel
def _timestamp_kernel():
    return np.float64(time.time())


def timestamp(name=None):
    """The wall time, in seconds since the Unix epoch, when the op runs (a float64 scalar)."""
    return Timestamp(name=name)
