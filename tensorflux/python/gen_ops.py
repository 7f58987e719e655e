"""TensorFlow's generated op wrappers (`gen_nn_ops.relu_grad(gradients, features)`,
`training_ops.apply_adam(...)`, TF 1.x's hidden `gen_nn_ops._max_pool_grad`): one function
per registered op, named in snake case, taking the op's inputs and then its attrs by
position or keyword, as the generated modules of TF do.

Every `gen_*` path serves every op (TF splits them by family; a program only asks for the
ones its family has). The functions wrap `tf.raw_ops`' callables: no source is generated.
"""

from __future__ import annotations

import inspect
import types

from tensorflux.framework import raw_op

__all__ = ["GenOpsModule", "snake_case"]


def snake_case(op_type: str) -> str:
    """TF's op-function name: `_` where lower turns upper, or before an upper letter that
    starts a lower-case run ("Conv2DBackpropInput" -> "conv2d_backprop_input")."""
    out = []
    last = len(op_type) - 1
    for i, char in enumerate(op_type):
        if char.isupper() and i > 0 and out[-1] != "_" and (
                op_type[i - 1].islower() or (i < last and op_type[i + 1].islower())):
            out.append("_")
        out.append(char.lower())
    return "".join(out)


class _GenOp:
    """One op's function: positional arguments fill the raw op's keys in order."""

    def __init__(self, raw):
        self._raw = raw
        self._keys = list(inspect.signature(raw).parameters)
        self.__name__ = self.__qualname__ = snake_case(raw.__name__)
        self.__doc__ = raw.__doc__
        self.__signature__ = inspect.Signature([
            parameter.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for parameter in inspect.signature(raw).parameters.values()])

    def __call__(self, *args, **kwargs):
        if len(args) > len(self._keys):
            raise TypeError(f"{self.__name__}() takes {len(self._keys)} arguments "
                            f"({len(args)} given)")
        for key, value in zip(self._keys, args):
            if key in kwargs:
                raise TypeError(f"{self.__name__}() got multiple values for argument '{key}'")
            kwargs[key] = value
        return self._raw(**kwargs)


_BY_NAME: dict = {}


def _lookup(name: str):
    if not _BY_NAME:
        for op_type in raw_op.exposed_op_types():
            _BY_NAME.setdefault(snake_case(op_type), op_type)
    return _BY_NAME.get(name[1:] if name.startswith("_") else name)


class GenOpsModule(types.ModuleType):
    """A `gen_*_ops` module: attribute `relu_grad` (or TF 1.x's hidden `_relu_grad`) is the
    function of op `ReluGrad`."""

    def __getattr__(self, name):
        op_type = _lookup(name) if not name.startswith("__") else None
        if op_type is None:
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}' (no "
                                 "registered op has that function name)")
        function = _GenOp(raw_op.raw_op(op_type))
        setattr(self, name, function)
        return function

    def __dir__(self):
        _lookup("")
        return sorted(set(super().__dir__()) | set(_BY_NAME))
