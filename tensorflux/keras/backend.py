"""`tf.keras.backend`: the Keras session, learning phase, naming and value helpers (graph mode).

Keras runs everything in one session per default graph (`get_session`), which initializes the
variables it has not initialized yet each time it is fetched. The learning phase is a boolean
`placeholder_with_default(False)` named `keras_learning_phase`, per graph, unless
`set_learning_phase` fixed it to a Python value.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from tensorflux.framework import graph as graph2
from tensorflux.framework import graph as graph_mod
from tensorflux.framework import scopes
from tensorflux.ops import array as array_ops
from tensorflux.ops.state import variable_ops as state_variable_ops
from tensorflux.ops.state import variables as state_variables
from tensorflux.runtime import session as session2

__all__ = [
    "get_session",
    "set_session",
    "clear_session",
    "learning_phase",
    "set_learning_phase",
    "floatx",
    "set_floatx",
    "epsilon",
    "set_epsilon",
    "int_shape",
    "placeholder",
    "variable",
    "eval",
    "get_value",
    "set_value",
    "batch_get_value",
    "batch_set_value",
    "get_uid",
    "reset_uids",
    "image_data_format",
    "is_placeholder",
    "ndim",
    "dtype",
    "constant",
    "name_scope",
    "set_image_data_format",
    "manual_variable_initialization",
    "learning_phase_scope",
    "backend",
]

_FLOATX = "float32"
_EPSILON = 1e-7
_SESSION = None
_LEARNING_PHASES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_FIXED_PHASE: dict = {}
_UIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_INITIALIZED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def floatx():
    """The default float type name of Keras weights and inputs ('float32')."""
    return _FLOATX


def set_floatx(value):
    global _FLOATX
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value}")
    _FLOATX = str(value)


def epsilon():
    """The fuzz factor Keras adds to denominators and clips probabilities with (1e-7)."""
    return _EPSILON


def set_epsilon(value):
    global _EPSILON
    _EPSILON = float(value)


_IMAGE_DATA_FORMAT = ["channels_last"]
_MANUAL_INIT = [False]


def image_data_format():
    """The default `data_format` of Keras' image layers ("channels_last")."""
    return _IMAGE_DATA_FORMAT[0]


def set_image_data_format(data_format):
    """Sets the default `data_format` ("channels_last" or "channels_first").

    Raises:
        ValueError: any other value.
    """
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {data_format}")
    _IMAGE_DATA_FORMAT[0] = str(data_format)


def manual_variable_initialization(value):
    """With True, `get_session()` leaves variables uninitialized (the user initializes)."""
    _MANUAL_INIT[0] = bool(value)


@contextlib.contextmanager
def learning_phase_scope(value):
    """Within the block the learning phase is fixed to `value` (0 test, 1 train).

    Raises:
        ValueError: a value other than 0 or 1.
    """
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    graphs = _FIXED_PHASE.setdefault("graphs", weakref.WeakKeyDictionary())
    graph = graph_mod.get_default_graph()
    missing = object()
    previous = graphs.get(graph, missing)
    graphs[graph] = int(value)
    try:
        yield value
    finally:
        if previous is missing:
            graphs.pop(graph, None)
        else:
            graphs[graph] = previous


def backend():
    """The name of the backend Keras runs on ("tensorflow", as TF's own Keras says)."""
    return "tensorflow"


def name_scope(name):
    return scopes.name_scope(name)


def get_uid(prefix=""):
    """1, 2, ... per `prefix` and default graph (Keras layer naming)."""
    graph = graph_mod.get_default_graph()
    counts = _UIDS.setdefault(graph, {})
    counts[prefix] = counts.get(prefix, 0) + 1
    return counts[prefix]


def reset_uids():
    _UIDS.pop(graph_mod.get_default_graph(), None)


def unique_object_name(prefix):
    """`prefix`, then `prefix_1`, `prefix_2`, ... in the default graph."""
    uid = get_uid(prefix)
    return prefix if uid == 1 else f"{prefix}_{uid - 1}"


def learning_phase():
    """The learning phase: a Python 0/1 if fixed, else the graph's bool placeholder."""
    graph = graph_mod.get_default_graph()
    if graph in _FIXED_PHASE.get("graphs", weakref.WeakKeyDictionary()):
        return _FIXED_PHASE["graphs"][graph]
    phase = _LEARNING_PHASES.get(graph)
    if phase is None:
        with graph.name_scope(None):
            phase = array_ops.placeholder_with_default(False, shape=(), name="keras_learning_phase")
        _LEARNING_PHASES[graph] = phase
    return phase


def _learning_phase_placeholder():
    """The graph's learning-phase placeholder, or None when not created or fixed."""
    graph = graph_mod.get_default_graph()
    if graph in _FIXED_PHASE.get("graphs", {}):
        return None
    return _LEARNING_PHASES.get(graph)


def set_learning_phase(value):
    """Fixes the learning phase of the default graph to 0 (test) or 1 (train)."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    graphs = _FIXED_PHASE.setdefault("graphs", weakref.WeakKeyDictionary())
    graphs[graph_mod.get_default_graph()] = int(value)


def get_session():
    """The default session if one is active, else Keras' session for the default graph.

    Variables of the graph not yet initialized by Keras are initialized first, and the
    lookup tables (`TABLE_INITIALIZERS`: feature-column vocabularies) not yet initialized.
    """
    global _SESSION
    graph = graph_mod.get_default_graph()
    session = graph2.get_default_session()
    if session is None:
        if _SESSION is None or _SESSION.graph is not graph:
            _SESSION = session2.Session(graph=graph)
        session = _SESSION
    _initialize_variables(session)
    return session


def set_session(session):
    """Makes `session` the Keras session."""
    global _SESSION
    _SESSION = session


def clear_session():
    """Resets the default graph, the Keras session, layer-name counters and learning phase."""
    global _SESSION
    if _SESSION is not None:
        _SESSION.close()
    _SESSION = None
    graph2.reset_default_graph()
    _FIXED_PHASE.pop("graphs", None)


def _initialize_variables(session):
    if _MANUAL_INIT[0]:
        return
    graph = session.graph
    done = _INITIALIZED.setdefault(session, set())
    tables = [op for op in graph.get_collection(graph2.GraphKeys.TABLE_INITIALIZERS)
              if op.name not in done]
    if tables:
        session.run(tables)   # initializing a table again leaves it as it is
        done.update(op.name for op in tables)
    candidates = [
        v for v in graph.get_collection(graph2.GraphKeys.GLOBAL_VARIABLES) if v.name not in done
    ]
    if not candidates:
        return
    with graph.as_default():
        flags = session.run([state_variable_ops.is_variable_initialized(v) for v in candidates])
        todo = [v for v, ok in zip(candidates, flags) if not ok]
        if todo:
            session.run(state_variables.variables_initializer(todo))
    done.update(v.name for v in candidates)
    for status in _STREAMING_RESTORES.get(graph, []):
        status.streaming_restore(session)  # variables created since `load_weights`


_STREAMING_RESTORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def register_streaming_restore(graph, status) -> None:
    """Restores `status`'s variables whenever new variables of `graph` are initialized here
    (TF 1.x Keras `load_weights` into a model that builds its weights later)."""
    _STREAMING_RESTORES.setdefault(graph, []).append(status)


def int_shape(x):
    """The static shape of `x` as a tuple of ints and None (None for unknown rank)."""
    shape = x.get_shape() if hasattr(x, "get_shape") else np.shape(x)
    if hasattr(shape, "as_list"):
        if shape.ndims is None:
            return None
        return tuple(shape.as_list())
    return tuple(shape)


def ndim(x):
    shape = int_shape(x)
    return None if shape is None else len(shape)


def dtype(x):
    return x.dtype.base_dtype.name


def is_placeholder(x):
    return hasattr(x, "op") and x.op.type in ("Placeholder", "PlaceholderWithDefault")


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """A placeholder of `shape` (or `ndim` unknown dimensions) and `dtype` (floatx)."""
    if sparse:
        raise ValueError("placeholder: sparse placeholders are not supported.")
    if shape is None and ndim is not None:
        shape = (None,) * ndim
    return array_ops.placeholder(dtype or floatx(), shape=shape, name=name)


def variable(value, dtype=None, name=None, constraint=None):
    """A variable holding `value` (an array-like), of `dtype` (floatx)."""
    value = np.asarray(value, dtype=dtype or floatx())
    return state_variables.Variable(value, dtype=value.dtype.name, name=name, constraint=constraint)


def constant(value, dtype=None, shape=None, name=None):
    return array_ops.constant(value, dtype=dtype or floatx(), shape=shape, name=name)


def eval(x):  # noqa: A001 - the Keras name
    """The value of a tensor or variable in the Keras session."""
    return get_session().run(x)


def get_value(x):
    return get_session().run(x)


def batch_get_value(tensors):
    return get_session().run(list(tensors)) if tensors else []


def set_value(x, value):
    batch_set_value([(x, value)])


def batch_set_value(tuples):
    """Assigns each (variable, value) pair in the Keras session."""
    session = get_session()
    for var, value in tuples:
        var.load(np.asarray(value, dtype=var.dtype.base_dtype.as_numpy_dtype), session)


from tensorflux.keras.backend_control import *  # noqa: E402, F403
from tensorflux.keras.backend_control import __all__ as _control_all  # noqa: E402
from tensorflux.keras.backend_nn import *  # noqa: E402, F403
from tensorflux.keras.backend_nn import __all__ as _nn_all  # noqa: E402
from tensorflux.keras.backend_ops import *  # noqa: E402, F403
from tensorflux.keras.backend_ops import __all__ as _ops_all  # noqa: E402

__all__ += _ops_all + _nn_all + _control_all
