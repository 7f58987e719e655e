"""`tf.raw_ops` functions: one keyword-only callable per registered op, built from its OpDef.

A raw op takes the op's inputs and its explicit attrs by their signature names, plus `name`.
Attrs the inputs determine (a type attr an input uses, the length `N` of a list input, the type
list of an input list) are inferred and cannot be passed; attrs with defaults are optional.
Ops whose names start with `_` (send/receive, function arguments, fused rewrites) are internal
and have no raw op. The callables are objects built from the registry, never generated source.
"""

from __future__ import annotations

import inspect

from tensorflux.framework.op_def import OP_DEFS, OpDef

# TF's Python API names some op arguments differently from the op signature (its api_defs);
# raw ops take the Python names, GraphDefs keep the signature's. Python name -> signature name.
_REDUCTION = {"axis": "reduction_indices"}
PYTHON_ARG_NAMES = {
    **{op: _REDUCTION for op in ("All", "Any", "EuclideanNorm", "Max", "Mean", "Min", "Prod",
                                 "Sum")},
    "ExpandDims": {"axis": "dim"},
    "Select": {"x": "t", "y": "e"},
    "Split": {"axis": "split_dim"},
    "SplitV": {"axis": "split_dim"},
    "Squeeze": {"axis": "squeeze_dims"},
    "Where": {"condition": "input"},
}


def is_exposed(op_type: str) -> bool:
    """True when `op_type` is a registered op that `tf.raw_ops` exposes (not internal)."""
    return not op_type.startswith("_") and op_type in OP_DEFS


def exposed_op_types() -> list:
    """The sorted names of the registered ops `tf.raw_ops` exposes."""
    return sorted(name for name in OP_DEFS.keys() if not name.startswith("_"))


def inferred_attrs(op_def: OpDef) -> frozenset:
    """The attrs of `op_def` that its inputs determine (never passed to a raw op)."""
    names = set()
    for arg in op_def.inputs:
        names.update(a for a in (arg.type_attr, arg.number_attr, arg.type_list_attr) if a)
    return frozenset(names)


class RawOp:
    """`tf.raw_ops.<OpType>`: adds one `OpType` node; keyword arguments only.

    Returns what calling the OpDef returns: a Tensor for one output, a list for one list
    output, a namedtuple (fields named as the outputs) for several, the Operation for none.
    """

    def __init__(self, op_def: OpDef):
        self._op_def = op_def
        self._inferred = inferred_attrs(op_def)
        explicit = [s for s in op_def.attrs.values() if s.name not in self._inferred]
        required = [s.name for s in explicit if not s.has_default]
        optional = [s.name for s in explicit if s.has_default]
        self._to_signature = PYTHON_ARG_NAMES.get(op_def.name, {})
        python_name = {v: k for k, v in self._to_signature.items()}
        inputs = [python_name.get(a.name, a.name) for a in op_def.inputs]
        required = [python_name.get(n, n) for n in required]
        optional = [python_name.get(n, n) for n in optional]
        self._keys = tuple(inputs + required + optional + ["name"])
        self._accepted = frozenset(self._keys)
        self._required = frozenset(inputs + required)
        self.__name__ = self.__qualname__ = op_def.name
        self.__module__ = "tensorflux.raw_ops"
        self.__doc__ = (f"Adds a `{op_def.name}` op. Keyword arguments: "
                        f"{', '.join(self._keys)}.")
        self.__signature__ = inspect.Signature([
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY,
                              default=self._default(key)) for key in self._keys])

    def _default(self, key):
        if key == "name":
            return None
        spec = self._op_def.attrs.get(self._to_signature.get(key, key))
        if spec is not None and spec.has_default:
            return spec.default
        return inspect.Parameter.empty

    @property
    def op_def(self) -> OpDef:
        return self._op_def

    def __repr__(self) -> str:
        return f"<raw op {self._op_def.name}({', '.join(self._keys)})>"

    def __call__(self, *args, **kwargs):
        op = self._op_def.name
        if args:
            raise TypeError(f"{op} only takes keyword args (possible keys: {list(self._keys)}). "
                            "Please pass these args as kwargs instead.")
        for key in kwargs:
            if key not in self._accepted:
                why = " (inferred from the inputs)" if key in self._inferred else ""
                raise TypeError(f"{op}() got an unexpected keyword argument '{key}'{why}")
        missing = [k for k in self._keys if k in self._required and k not in kwargs]
        if missing:
            raise TypeError(f"{op}() missing {len(missing)} required keyword argument"
                            f"{'s' if len(missing) > 1 else ''}: "
                            f"{', '.join(repr(m) for m in missing)}")
        name = kwargs.pop("name", None)
        renamed = {self._to_signature.get(k, k): v for k, v in kwargs.items()}
        return self._op_def(name=name, **renamed)


_CACHE: dict = {}


def raw_op(op_type: str) -> RawOp:
    """The `tf.raw_ops` callable of `op_type`, built once.

    Raises:
      AttributeError: `op_type` is internal or not registered (names close matches).
    """
    found = _CACHE.get(op_type)
    if found is None:
        if not is_exposed(op_type):
            raise AttributeError(_missing_message(op_type))
        found = _CACHE[op_type] = RawOp(OP_DEFS.get(op_type))
    return found


def _missing_message(op_type: str) -> str:
    if op_type.startswith("_") and op_type in OP_DEFS:
        return f"'{op_type}' is an internal op: tf.raw_ops does not expose it."
    try:
        OP_DEFS.lookup(op_type)
    except LookupError as err:
        return f"module 'tensorflux.raw_ops' has no attribute '{op_type}'. {err}"
    return f"module 'tensorflux.raw_ops' has no attribute '{op_type}'."
