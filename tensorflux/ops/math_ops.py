"""Math ops: elementwise arithmetic with broadcasting, matmul, reductions, comparisons."""

from __future__ import annotations

import operator

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.common_shapes import broadcast_shape

__all__ = ["add", "subtract", "multiply", "matmul"]


def _binary(name: str, kernel, types: str = "numbertype", out_type: str | None = None):
    """Defines an elementwise binary op `z = kernel(x, y)` with NumPy broadcasting."""
    outputs = [f"z: {out_type}"] if out_type else ["z: T"]
    op = define_op(name, inputs=["x: T", "y: T"], outputs=outputs, attrs=[f"T: {types}"])
    op.shape_fn(broadcast_shape)
    op.kernel(kernel)
    return op


AddV2 = _binary("AddV2", operator.add)
Sub = _binary("Sub", operator.sub)
Mul = _binary("Mul", operator.mul)

MatMul = define_op(
    "MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
    attrs=["T: {float16, bfloat16, float32, float64, int32, int64, complex64, complex128}",
           "transpose_a: bool = False", "transpose_b: bool = False"])


@MatMul.shape_fn
def _matmul_shape(a, b, *, transpose_a, transpose_b):
    a = a.with_rank(2)
    b = b.with_rank(2)
    rows, inner_a = (a.dims[1], a.dims[0]) if transpose_a else (a.dims[0], a.dims[1])
    inner_b, cols = (b.dims[1], b.dims[0]) if transpose_b else (b.dims[0], b.dims[1])
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise ValueError(f"Dimensions must be equal, but are {inner_a} and {inner_b}: inner "
                         f"dimensions differ: {a} vs {b} (transpose_a={transpose_a}, "
                         f"transpose_b={transpose_b})")
    return TensorShape([rows, cols])


@MatMul.kernel
def _matmul_kernel(a, b, *, transpose_a, transpose_b):
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


def add(x, y, name=None):
    return AddV2(x, y, name=name)


def subtract(x, y, name=None):
    return Sub(x, y, name=name)


def multiply(x, y, name=None):
    return Mul(x, y, name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Multiplies matrix `a` by matrix `b` (rank 2, same dtype)."""
    return MatMul(a, b, transpose_a=transpose_a or adjoint_a,
                  transpose_b=transpose_b or adjoint_b, name=name)


# -- operator overloads ----------------------------------------------------------------------

def _overload(op_fn, scope: str, reverse: bool = False):
    def binary(self, other):
        graph = graph_mod.get_default_graph()
        with graph.name_scope(scope) as name:
            if reverse:
                x = convert_to_tensor(other, dtype=self.dtype.base_dtype)
                return op_fn(x, self, name=name)
            y = convert_to_tensor(other, dtype=self.dtype.base_dtype)
            return op_fn(self, y, name=name)

    return binary


for _name, _fn, _scope in (("add", add, "add"), ("sub", subtract, "sub"),
                           ("mul", multiply, "mul"), ("matmul", matmul, "matmul")):
    Tensor._override_operator(f"__{_name}__", _overload(_fn, _scope))
    Tensor._override_operator(f"__r{_name}__", _overload(_fn, _scope, reverse=True))
