"""`_FusedElementwise`: a chain of elementwise float ops run as one kernel.

Users never build it: the runtime's elementwise fusion (runtime/elementwise_fusion.py, enabled
by `OptimizerOptions.global_jit_level`, as TF1's XLA auto-clustering) replaces a tree of
unary/binary cwise ops by one node whose attrs hold the chain as a program of
(opcode, operand) pairs from a fixed table (lib/numerics/elementwise_program.py) and its
scalar constants. Nothing is generated from the attrs: a pre-written interpreter runs them.
Like `_FusedConv2D` it has no gradient: it only exists in step graphs, after differentiation.
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import elementwise_program as program_lib
from tensorflux.lib.numerics import jit

__all__: list = []

# The compiled machine pays off while its operands stay in cache (measured, a 4-op chain:
# 8.5 us at 1 element and 11 us at 1000 against 26 us for the NumPy loop; slower than NumPy's
# SIMD ufuncs from ~64K elements); larger arrays go through NumPy's ufuncs with reused buffers.
_COMPILED_MAX_ELEMENTS = 1 << 14

FusedElementwise = define_op(
    "_FusedElementwise", inputs=["inputs: N * T"], outputs=["output: T"],
    attrs=["T: {float32, float64}", "N: int >= 0", "opcodes: list(int)",
           "operands: list(int)", "constants: tensor"],
    differentiable=False)


def _constants(constants, T) -> np.ndarray:
    return np.asarray(constants, dtype=T.as_numpy_dtype).reshape(-1)


@FusedElementwise.shape_fn
def _fused_elementwise_shape(inputs, *, T, N, opcodes, operands, constants):
    program_lib.check_program(opcodes, operands, N, _constants(constants, T).size)
    shape = TensorShape([])
    for each in inputs:
        shape = broadcast_shape(shape, each)
    return shape


@FusedElementwise.kernel(factory=True)
def _fused_elementwise_kernel(T, N, opcodes, operands, constants):
    dtype = np.dtype(T.as_numpy_dtype)
    values = _constants(constants, T)
    codes = list(opcodes)
    args = list(operands)
    program_lib.check_program(codes, args, N, values.size)
    compiled = program_lib.RegisterProgram(codes, args, N, values.size) \
        if jit.available() else None

    def fused_elementwise(*inputs):
        arrays = [np.asarray(x) for x in inputs]
        if compiled is not None:
            shape = program_lib.compiled_shape(arrays)
            if shape is not None and all(x.dtype == dtype for x in arrays) and \
                    math.prod(shape) <= _COMPILED_MAX_ELEMENTS:
                return program_lib.run_compiled(compiled, values, arrays, dtype, shape)
        return program_lib.run_numpy(codes, args, values, arrays, dtype)

    return fused_elementwise
