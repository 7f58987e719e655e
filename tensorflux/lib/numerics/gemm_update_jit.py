"""A dense weight gradient applied by gradient descent inside its product: `var -= alpha *
(a^T @ b)` for float32 `a: [k, m]`, `b: [k, n]`, `var: [m, n]`, with the product summed in
registers and never written as a gradient (the `_FusedMatMulApplyGradientDescent` kernel of
ops/internal/fused.py, on AVX-512 CPUs).

OpenBLAS computes the gradient (~130 GF/s a core at the MLP's shapes) into a [m, n] buffer, then
the update reads it back with the variable: for the MLP's two hidden kernels (784 x 1024 and
1024 x 1024, k = 128 examples) the update pass costs 0.56 ms on top of 3.6 ms of products (one
thread). Here a block of `rows x 64` outputs is summed over all `k` in 24 `<16 x float>`
accumulators (`llvm.fma.v16f32`, kept 512 bits wide as in conv_direct_jit), then each
accumulator updates its 16 variable entries at once: `var - alpha * delta` with `delta` the
accumulated sum, the compiled update's arithmetic (update_jit, no fused multiply-add there).
`b`'s 64 columns are copied once per panel into a contiguous [k, 64] buffer (32 KB at k = 128:
it stays in L1 across the panel's row blocks); `a`'s rows give each block's broadcasts.

Sums run in the order of `k` with one rounding per fused multiply-add: within float32
tolerance of BLAS's product (whose order is its own), not bit-identical.

The tile lives in this module, beside the cached loop that inlines it (numba's cache tracks
the source file of a cached function only).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from tensorflux.lib.numerics import conv_direct, jit

__all__ = ["supports", "update_panels", "WIDTH", "PANEL", "MAX_K", "MIN_ELEMENTS"]

WIDTH = 16  # floats per vector
PANEL = 64  # columns of `b` per packed panel (4 vectors)
_F32 = ir.FloatType()
_VEC = ir.VectorType(_F32, WIDTH)
_I32 = ir.IntType(32)
_F32_ARRAY = types.Array(types.float32, 1, "C")


def _data(context, builder, aryty, value):
    return context.make_array(aryty)(context, builder, value).data


def _index(context, builder, ty, value):
    return context.cast(builder, value, ty, types.int64)


def _vector_ptr(builder, base, index):
    return builder.bitcast(builder.gep(base, [index]), _VEC.as_pointer())


def _broadcast(builder, scalar):
    one = builder.insert_element(ir.Constant(_VEC, ir.Undefined), scalar, ir.Constant(_I32, 0))
    mask = ir.Constant(ir.VectorType(_I32, WIDTH), [0] * WIDTH)
    return builder.shuffle_vector(one, ir.Constant(_VEC, ir.Undefined), mask)


def _update_codegen(context, builder, signature, args):
    tys = signature.args
    rows, vectors = tys[10].literal_value, tys[11].literal_value
    a_ptr = _data(context, builder, tys[0], args[0])
    t_ptr = _data(context, builder, tys[3], args[3])
    var_ptr = _data(context, builder, tys[5], args[5])
    abase, astep, tstep, vbase, vstep, count = (
        _index(context, builder, tys[i], args[i]) for i in (1, 2, 4, 6, 7, 9))
    alpha = context.cast(builder, args[8], tys[8], types.float32)
    fma = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(_VEC, [_VEC, _VEC, _VEC]), "llvm.fma.v16f32")
    zero = ir.Constant(_VEC, [0.0] * WIDTH)
    accs = [[cgutils.alloca_once_value(builder, zero) for _ in range(vectors)]
            for _ in range(rows)]
    with cgutils.for_range(builder, count) as loop:
        step = loop.index
        tv = builder.mul(step, tstep)
        tvecs = [builder.load(_vector_ptr(builder, t_ptr,
                                          builder.add(tv, ir.Constant(tv.type, WIDTH * v))),
                              align=4) for v in range(vectors)]
        at = builder.add(abase, builder.mul(step, astep))
        for r in range(rows):
            scalar = builder.load(builder.gep(a_ptr, [builder.add(at, ir.Constant(at.type, r))]))
            bcast = _broadcast(builder, scalar)
            for v in range(vectors):
                acc = accs[r][v]
                builder.store(builder.call(fma, [bcast, tvecs[v], builder.load(acc)]), acc)
    alphas = _broadcast(builder, alpha)
    for r in range(rows):
        row = builder.add(vbase, builder.mul(ir.Constant(vstep.type, r), vstep))
        for v in range(vectors):
            ptr = _vector_ptr(builder, var_ptr, builder.add(row, ir.Constant(row.type, WIDTH * v)))
            step = builder.fmul(alphas, builder.load(accs[r][v]))
            builder.store(builder.fsub(builder.load(ptr, align=4), step), ptr, align=4)
    return context.get_dummy_value()


@intrinsic(prefer_literal=True)
def update_tile(typingctx, a, abase, astep, t, tstep, var, vbase, vstep, alpha, count, rows,
                vectors):
    """`var[vbase + r * vstep + 16 v + i] -= alpha * sum_l a[abase + l * astep + r] *
    t[l * tstep + 16 v + i]` for `r < rows`, `v < vectors`, `i < 16`, `l < count`."""
    args = (a, abase, astep, t, tstep, var, vbase, vstep, alpha, count, rows, vectors)
    if any(args[i] != _F32_ARRAY for i in (0, 3, 5)) or not isinstance(alpha, types.Float):
        return None
    if not all(isinstance(args[i], types.Integer) for i in (1, 2, 4, 6, 7, 9)):
        return None
    if not all(isinstance(args[i], types.IntegerLiteral) and args[i].literal_value > 0
               for i in (10, 11)):
        return None
    return types.none(*args), _update_codegen


@jit.jit
def _panel(a, b, var, alpha, k, m, n, n0, vectors, panel):
    # Columns n0 .. n0 + 16 * vectors of var: copy b's columns, then blocks of 6 rows, then 1.
    width = WIDTH * vectors
    for l in range(k):
        for j in range(width):
            panel[l * width + j] = b[l * n + n0 + j]
    i = 0
    if vectors == 4:
        while i + 6 <= m:
            update_tile(a, i, m, panel, width, var, i * n + n0, n, alpha, k, 6, 4)
            i += 6
        while i < m:
            update_tile(a, i, m, panel, width, var, i * n + n0, n, alpha, k, 1, 4)
            i += 1
    else:
        while i + 6 <= m:
            update_tile(a, i, m, panel, width, var, i * n + n0, n, alpha, k, 6, 1)
            i += 6
        while i < m:
            update_tile(a, i, m, panel, width, var, i * n + n0, n, alpha, k, 1, 1)
            i += 1


@jit.jit
def _update_columns(a, b, var, alpha, k, m, n, lo, hi, panel):
    # Columns lo .. hi of var (multiples of 16): 64-column panels, then 16-column ones.
    n0 = lo
    while n0 + PANEL <= hi:
        _panel(a, b, var, alpha, k, m, n, n0, 4, panel)
        n0 += PANEL
    while n0 < hi:
        _panel(a, b, var, alpha, k, m, n, n0, 1, panel)
        n0 += WIDTH


def update_panels(var: np.ndarray, alpha, a: np.ndarray, b: np.ndarray, lo: int,
                  hi: int) -> None:
    """`var[:, lo:hi] -= alpha * (a^T @ b)[:, lo:hi]` in place (see the module docstring).

    The caller checks the shapes: C-contiguous float32 `a: [k, m]`, `b: [k, n]`,
    `var: [m, n]`, `lo` and `hi` multiples of 16 within `n`.
    """
    k, m = a.shape
    panel = np.empty(k * PANEL, dtype=np.float32)
    _update_columns(a.reshape(-1), b.reshape(-1), var.reshape(-1), np.float32(alpha), k, m,
                    b.shape[1], lo, hi, panel)


# `a`'s rows (the examples) at most: b's packed panel ([k, 64] float32, 32 KB at 128) stays
# in L1 across a panel's row blocks. Longer reductions keep BLAS: one thread, [k, 1024] x
# [k, 1024] took 4.9 ms here against BLAS + update 4.1 at k = 256 (0.37 vs 0.34 at k = 200,
# [200, 300] x [200, 400]); at k = 128 (784 x 1024) 1.57 vs 1.73, at k = 64 (the CNN's
# 4096 x 512 fc kernel) 2.36 vs 2.88, at k = 32 (512 x 1024) 0.31 vs 0.51.
MAX_K = 128
# Fewer variable entries than this keep BLAS and the update (a few microseconds either way).
MIN_ELEMENTS = 1 << 16


def supports(var: np.ndarray, alpha, a: np.ndarray, b: np.ndarray) -> bool:
    """True when `update_panels` may run `var -= alpha * (a^T @ b)`: numba on, AVX-512,
    float32 C-contiguous operands of matching shapes apart from `var`'s memory, a scalar
    `alpha`, `n` a multiple of 16, `k <= MAX_K` and at least `MIN_ELEMENTS` variable
    entries."""
    return (a.ndim == 2 and b.ndim == 2 and var.ndim == 2
            and a.dtype == b.dtype == var.dtype == np.float32
            and var.shape == (a.shape[1], b.shape[1]) and a.shape[0] == b.shape[0]
            and 0 < a.shape[0] <= MAX_K and var.size >= MIN_ELEMENTS
            and var.shape[1] % WIDTH == 0 and np.ndim(alpha) == 0
            and a.flags.c_contiguous and b.flags.c_contiguous and var.flags.c_contiguous
            and var.flags.writeable and not np.may_share_memory(var, a)
            and not np.may_share_memory(var, b)  # an operand read while var is written
            and jit.available() and conv_direct.wide_vectors())
