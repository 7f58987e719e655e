"""`tf.py_func`, `tf.numpy_function`, `tf.py_function`: Python functions as graph ops.

Ops `PyFunc` (stateful), `PyFuncStateless` and `EagerPyFunc` carry attrs `token`, `Tin` and
`Tout`. The Python callable is never serialized: it lives in a process-local registry under its
token (`pyfunc_<n>`), held weakly there and strongly by the graph that uses it. A GraphDef whose
`PyFunc` token is not registered in the running process imports fine and fails when run, with an
`InvalidArgumentError` naming the token, as in TensorFlow.

Kernel contract (TensorFlow's): the function gets NumPy values (numbers as read-only arrays,
0-d numbers as NumPy scalars, strings as object arrays of bytes, a 0-d string as `bytes`); it
returns one value, a list/tuple of values, or None (no value). Each value must already have its
`Tout` dtype (Python ints are int64 and floats are float64, as in NumPy); a mismatch is an
`InvalidArgumentError` ("0-th value returned by pyfunc_3 is double, but expects float").
Exceptions map to status classes: ValueError/TypeError -> InvalidArgumentError, StopIteration ->
OutOfRangeError, MemoryError -> ResourceExhaustedError, NotImplementedError ->
UnimplementedError, anything else -> UnknownError.

`tf.py_function` builds an `EagerPyFunc`. With no eager mode here, its function also gets NumPy
arrays; they have a `.numpy()` method returning themselves, so TF2-style code that calls
`x.numpy()` runs unchanged; a function that returns TF ops instead (`tf.matmul(a, x)`, which
TF would run eagerly) is traced once per input signature and run by the step. Its gradient
traces the function once more on the op's graph inputs (there is no tape): exact for
functions of TF ops and operators; others raise LookupError (use `gradient_override_map` as
with `PyFunc`).

`PyFunc`/`PyFuncStateless` are not differentiable; `Graph.gradient_override_map({"PyFunc": ...})`
gives them a gradient.
"""

from __future__ import annotations

import threading
import traceback
import weakref

import numpy as np

from tensorflux.framework import dtypes, errors, function
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import KernelDef, define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["py_func", "numpy_function", "py_function", "eager_py_func"]


class _FuncEntry:
    """A registered callable (a weak-referenceable holder for any callable)."""

    __slots__ = ("func", "eager", "builds_ops", "traces", "__weakref__")

    def __init__(self, func, eager: bool):
        self.func = func
        self.eager = eager
        self.builds_ops = False  # an EagerPyFunc whose function returned TF ops
        self.traces: dict = {}  # input signature -> traced DefinedFunction


class FuncRegistry:
    """Process-local token -> callable table. Tokens are never reused; entries live as long as
    a graph that uses them (the graph holds the strong reference)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._next_id = 0

    def insert(self, entry: _FuncEntry) -> str:
        with self._lock:
            token = f"pyfunc_{self._next_id}"
            self._next_id += 1
            self._entries[token] = entry
        return token

    def remove(self, token: str) -> None:
        with self._lock:
            self._entries.pop(token, None)

    def get(self, token: str):
        return self._entries.get(token)

    def size(self) -> int:
        return len(self._entries)


_REGISTRY = FuncRegistry()
_py_funcs = _REGISTRY  # TF's script_ops name for the registry (tests read its size())

_SIGNATURE = dict(inputs=["input: Tin"], outputs=["output: Tout"],
                  attrs=["token: string", "Tin: list(type) >= 0", "Tout: list(type) >= 0"])
PyFunc = define_op("PyFunc", **_SIGNATURE, stateful=True, differentiable=False)
PyFuncStateless = define_op("PyFuncStateless", **_SIGNATURE, differentiable=False)
EagerPyFunc = define_op("EagerPyFunc", inputs=["input: Tin"], outputs=["output: Tout"],
                        attrs=["token: string", "is_async: bool = False",
                               "Tin: list(type) >= 0", "Tout: list(type) >= 0"],
                        stateful=True)


def _unknown_shapes(input, *, Tout):  # noqa: A002,N803 - TF names
    return [[TensorShape(None)] * len(Tout)]


for _op in (PyFunc, PyFuncStateless, EagerPyFunc):
    _op.shape_fn(_unknown_shapes)


class _EagerValue(np.ndarray):
    """An ndarray with TF2's `EagerTensor.numpy()`, given to `tf.py_function` callables."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self)


_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _tf_name(dtype) -> str:
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


def _as_argument(value, eager: bool):
    array = np.asarray(value)
    if array.dtype == np.object_:
        if array.ndim == 0 and not eager:
            return array.item()
        array = array.copy()
    else:
        array = array.view()
        array.flags.writeable = False
        if array.ndim == 0 and not eager:
            return array[()]
    return array.view(_EagerValue) if eager else array


def _encode(item):
    return item.encode("utf-8") if isinstance(item, str) else item


def _as_result(value) -> np.ndarray:
    if isinstance(value, (bytes, str)):
        return np.asarray(_encode(value), dtype=object)
    array = np.asarray(value)
    if array.dtype.kind in "US":
        flat = [_encode(item) for item in array.reshape(-1).tolist()]
        result = np.empty(len(flat), dtype=object)
        result[:] = flat
        return result.reshape(array.shape)
    if array.dtype == np.object_ and array.size:
        flat = array.reshape(-1)
        if any(isinstance(item, str) for item in flat):
            array = np.frompyfunc(_encode, 1, 1)(array).astype(object)
    return array


_STATUS_OF_EXCEPTION = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    (StopIteration, errors.OutOfRangeError),
    (MemoryError, errors.ResourceExhaustedError),
    (NotImplementedError, errors.UnimplementedError),
)


def exception_status(err: Exception) -> errors.OpError:
    """The OpError TF's py_func reports for a Python exception raised by user code (its
    class by the exception's type, UnknownError otherwise; the message keeps the traceback).
    """
    cls = errors.UnknownError
    for py_types, status in _STATUS_OF_EXCEPTION:
        if isinstance(err, py_types):
            cls = status
            break
    trace = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    wrapped = cls(None, None, f"{type(err).__name__}: {err}\n{trace}")
    wrapped.__cause__ = err
    return wrapped


def _check_results(token: str, ret, tout) -> tuple:
    if ret is None:
        values = []
    elif isinstance(ret, (list, tuple)):
        values = list(ret)
    else:
        values = [ret]
    if len(values) != len(tout):
        raise errors.InvalidArgumentError(
            None, None, f"{token} returns {len(values)} values, but expects to see "
                        f"{len(tout)} values.")
    results = []
    for index, (value, expected) in enumerate(zip(values, tout)):
        array = _as_result(value)
        try:
            got = dtypes.as_dtype(array.dtype)
        except TypeError:
            got = None
        if got is None or got.base_dtype != expected.base_dtype:
            got_name = _tf_name(got) if got is not None else str(array.dtype)
            raise errors.InvalidArgumentError(
                None, None, f"{index}-th value returned by {token} is {got_name}, but expects "
                            f"{_tf_name(expected)}")
        results.append(array)
    return tuple(results)


def _py_func_kernel(token, Tin, Tout):  # noqa: N803 - TF attr names
    """An asynchronous kernel: the Python function runs on the inter-op pool, so py_funcs of
    one step run in parallel (one may wait for another, as TF allows when they release the
    GIL) and a blocking function never stalls the rest of the step."""
    call = _py_func_call(token, Tout)

    def kernel(ctx, *inputs, done):
        def work():
            try:
                result = call(*inputs, ctx=ctx)
            except Exception as err:  # noqa: BLE001 - reported through the step
                done(error=err)
                return
            done(result)

        ctx.submit_blocking(work)

    return kernel


def _py_func_call(token, Tout):  # noqa: N803 - TF attr names
    n_out = len(Tout)

    def call(*inputs, ctx=None):
        # NOTE: looked up per call, so a graph imported before its function was registered
        # (or whose function was collected) reports the missing token at run time.
        entry = _REGISTRY.get(token)
        if entry is None:
            raise errors.InvalidArgumentError(
                None, None, f"Could not find callback with key={token} in the registry "
                            "(a py_func's Python function lives only in the process that "
                            "built the graph; it is never serialized).")
        try:
            if entry.eager and ctx is not None:
                ret = _eager_call(ctx, entry, token, inputs)
            else:
                ret = entry.func(*[_as_argument(value, entry.eager) for value in inputs])
        except _BodyFailed as failed:
            raise failed.error from None
        except Exception as err:  # noqa: BLE001 - every Python failure maps to a status
            raise exception_status(err) from err
        results = _check_results(token, ret, Tout)
        if n_out == 1:
            return results[0]
        return results if n_out else None

    return call


class _BodyFailed(Exception):
    """A traced EagerPyFunc body failed as a step: its OpError is reported as it is."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _builds_ops(ret) -> bool:
    items = ret if isinstance(ret, (list, tuple)) else [ret]
    return any(isinstance(item, Tensor) for item in items)


def _eager_call(ctx, entry, token, inputs):
    """Calls an `EagerPyFunc`'s function. TF runs it eagerly; here a function that returns TF
    ops (`tf.matmul(a, x)`) is traced, once per input signature, into a function of its
    inputs that the step runs (`ctx.run_function`); others get NumPy values as before. A trial
    call builds its ops in a throwaway graph, never in the graph being run."""
    args = [_as_argument(value, True) for value in inputs]
    if not entry.builds_ops:
        with function.FuncGraph(f"{token}_trial").as_default():
            ret = entry.func(*args)
        if not _builds_ops(ret):
            return ret
        entry.builds_ops = True
    arrays = [np.asarray(value) for value in inputs]
    signature = tuple((a.dtype.str, a.shape) for a in arrays)
    defined = entry.traces.get(signature)
    if defined is None:
        markers = [object() for _ in arrays]
        specs = {id(m): (dtypes.as_dtype(a.dtype), TensorShape(a.shape))
                 for m, a in zip(markers, arrays)}
        defined, structure = function.trace(
            entry.func, tuple(markers), {}, lambda leaf: specs.get(id(leaf)),
            function.unique_name(token), outer_graph=graph_mod.Graph())
        defined.structure = structure
        entry.traces[signature] = defined
    try:
        values = ctx.run_function(defined, arrays)
    except errors.OpError as err:
        raise _BodyFailed(err) from err
    structure = defined.structure
    if structure is None:
        return None
    if isinstance(structure, (list, tuple)):
        return [values[i] for i in structure]
    return values[structure]


for _op in (PyFunc, PyFuncStateless):
    _op.kernel(factory=True, ctx=True, asynchronous=True)(_py_func_kernel)


def _py_func_fold(token, Tout):  # noqa: N803 - TF attr names
    return _py_func_call(token, Tout)


# As TF's constant folding does, a stateless py_func whose inputs are constants (or which has
# none) runs once, when a step's plan is built, and every run of that plan reuses its value;
# if it fails then, the node stays and reports the failure when the step runs.
PyFuncStateless.fold_kernel = KernelDef(_py_func_fold, factory=True, attr_names=("token", "Tout"))


@EagerPyFunc.kernel(factory=True, ctx=True, asynchronous=True)
def _eager_py_func_kernel(token, is_async, Tin, Tout):  # noqa: N803 - TF attr names
    return _py_func_kernel(token, Tin, Tout)


@EagerPyFunc.gradient
def _eager_py_func_grad(op, *grads):
    """TF differentiates an `EagerPyFunc` by recording its function on a tape. Without eager
    mode the function is traced once more, here, on the op's graph inputs: a function built
    from TF ops and operators (`x ** 2`, `tf.sin(x)`) gets its exact gradient; one that needs
    NumPy values (`x.numpy()`) raises LookupError naming the op."""
    from tensorflux.ops.autodiff.gradients import gradients  # cycle: autodiff imports ops

    entry = _REGISTRY.get(op.get_attr("token").decode() if isinstance(
        op.get_attr("token"), bytes) else op.get_attr("token"))
    if entry is None:
        raise LookupError(f"No gradient for '{op.name}' (EagerPyFunc): its Python function "
                          "is not registered in this process.")
    inputs = list(op.inputs)
    try:
        traced = entry.func(*inputs)
    except Exception as err:  # noqa: BLE001 - any failure means "not traceable"
        raise LookupError(f"No gradient for '{op.name}' (EagerPyFunc): its function could not "
                          f"be traced on graph tensors ({type(err).__name__}: {err}). TF "
                          "records eager functions on a tape; here only functions of TF ops "
                          "are differentiable.") from err
    outputs = list(traced) if isinstance(traced, (list, tuple)) else [traced]
    pairs = [(y, g) for y, g in zip(outputs, grads) if g is not None and y is not None]
    if not pairs:
        return [None] * len(inputs)
    ys = [convert_to_tensor(y) for y, _ in pairs]
    return gradients(ys, inputs, grad_ys=[g for _, g in pairs])


def _internal_py_func(func, inp, Tout, op_def, eager: bool, name):  # noqa: N803
    if not callable(func):
        raise TypeError(f"Expected func to be callable, got func of type {type(func).__name__}")
    if Tout is None:
        Tout = []  # noqa: N806
    is_list = isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t) for t in (Tout if is_list else [Tout])]
    graph = graph_mod.get_default_graph()
    entry = _FuncEntry(func, eager)
    token = _REGISTRY.insert(entry)
    # The graph keeps the callable alive; the registry only refers to it weakly.
    used = graph.__dict__.setdefault("_py_funcs_used_in_graph", [])
    used.append(entry)
    op_name = graph.unique_name(name or op_def.name)
    outputs = op_def(list(inp), token=token, Tout=tout, name=op_name + "/")
    if not tout:
        # As TF's generated wrappers: a stateless op gives its (empty) list of outputs, the
        # stateful ones their Operation.
        if op_def is PyFuncStateless:
            return []
        return graph.get_operation_by_name(op_name)
    return outputs if is_list else outputs[0]


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF1 name
    """Wraps a Python function taking and returning NumPy arrays as a graph op.

    Args:
        func: a callable `func(*arrays)` returning a value (single `Tout`), a list/tuple of
            values (list `Tout`), or None (empty `Tout`). Values must have the `Tout` dtypes.
        inp: a list of Tensors (or values convertible to Tensors).
        Tout: a dtype, or a list/tuple of dtypes.
        stateful: False builds a `PyFuncStateless` (the runtime may merge identical calls).
        name: the op name.

    Returns:
        A Tensor for a single `Tout`, a list of Tensors for a list `Tout`, the Operation when
        `Tout` is empty. Output shapes are unknown (use `set_shape`).

    Raises:
        TypeError: `func` is not callable or `inp` is not a list.

    Example:
        >>> y = tf.py_func(lambda a: np.sinh(a), [x], tf.float32)
    """
    op_def = PyFunc if stateful else PyFuncStateless
    return _internal_py_func(func, inp, Tout, op_def, False, name)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """TF2's name for `tf.py_func` (same semantics and ops)."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803 - TF name
    """Wraps a Python function as an `EagerPyFunc` op.

    Graph mode only: `func` receives NumPy arrays (with a `.numpy()` method, like eager
    tensors) and returns values as for `tf.py_func`. Differentiable when `func` is made of TF
    ops and operators (its gradient traces `func` on graph tensors).

    Returns:
        As `tf.py_func`: a Tensor for a single `Tout`, a list for a list `Tout`, the Operation
        for an empty or None `Tout`.
    """
    return _internal_py_func(func, inp, Tout, EagerPyFunc, True, name)


eager_py_func = py_function  # TF 1.x's script_ops name for `tf.py_function`
