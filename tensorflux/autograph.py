"""`tf.autograph` (TF 1.15): in tensorflux, Python control flow in a function runs while the
graph is built (as `tf.function(autograph=False)` does in TF); converting it into graph ops
(`to_graph`, `to_code`) is not provided and raises NotImplementedError saying so.
`do_not_convert` and the settings calls are accepted."""

from __future__ import annotations

import enum
import functools

__all__ = ["to_graph", "to_code", "do_not_convert", "set_verbosity", "trace", "experimental"]


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """Raises NotImplementedError: AutoGraph's source conversion is not provided; write
    `tf.cond` / `tf.while_loop` explicitly, or call the function directly."""
    raise NotImplementedError(
        f"tf.autograph.to_graph({getattr(entity, '__name__', entity)!r}): AutoGraph source "
        f"conversion is not provided by tensorflux; Python control flow runs at graph "
        f"construction time. Use tf.cond / tf.while_loop for data-dependent control flow.")


def to_code(entity, recursive=True, experimental_optional_features=None):
    """Raises NotImplementedError, as `to_graph`."""
    to_graph(entity, recursive, experimental_optional_features)


def do_not_convert(func=None):
    """Marks `func` as not to be converted (a no-op: nothing is converted here)."""
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


_VERBOSITY = [0]


def set_verbosity(level, alsologtostdout=False):
    """Records AutoGraph's log verbosity (nothing is converted, so nothing is logged)."""
    _VERBOSITY[0] = int(level)


def trace(*args):
    """Prints its arguments (AutoGraph's trace at graph construction)."""
    print(*args)


class _Experimental:
    """`tf.autograph.experimental`."""

    class Feature(enum.Enum):
        ALL = "ALL"
        AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
        ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
        BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
        EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
        LISTS = "LISTS"
        NAME_SCOPES = "NAME_SCOPES"

    class Verbosity(enum.IntEnum):
        BRIEF = 0
        VERBOSE = 1

    do_not_convert = staticmethod(do_not_convert)

    @staticmethod
    def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                         shape_invariants=None):
        """Accepted for compatibility (loops are not converted)."""
        return None


experimental = _Experimental()
