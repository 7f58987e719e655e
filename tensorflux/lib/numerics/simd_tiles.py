"""Register tiles of 16-float vectors for compiled kernels (numba intrinsics).

numba's loop and SLP vectorizers follow LLVM's tuning for this CPU family, which prefers
256-bit vectors even where the core has two 512-bit FMA units; OpenBLAS's thin products
(the first convolution of a CNN: K = 75) and those vectorizers both stay near half of the
core's speed there. The two tiles here are written as explicit `<16 x float>` LLVM vectors
(an `llvm.fma.v16f32` per product), so the backend keeps them 512 bits wide where the CPU has
AVX-512 (and splits them into narrower registers where it does not): a block of
`rows x vectors` accumulators stays in registers for a whole reduction.

- `gather_tile` (a direct convolution's output block): for `l` in `range(taps)`,
  `acc[r, v] += s[sbase + r * sstep + offs[l]] * t[tbase + l * tstep + 16 v : +16]`, then
  `out[obase + r * ostep + 16 v : +16] = acc[r, v]`.
- `reduce_tile` (a filter gradient's block): for `l` in `range(count)`,
  `acc[r, v] += s[sbase + pixels[l] + offs[r]] * t[tbase + l * tstep + 16 v : +16]`, then
  `out[obase + r * ostep + 16 v : +16] += acc[r, v]`.

`rows` and `vectors` are literal integers (one specialisation each). The tiles do no bounds
checks: callers (conv_direct) derive every index from shapes they checked. Sums run in the
order of `l` with one rounding per fused multiply-add (float32 tolerance of a product).

This module imports numba: import it only from compiled-kernel modules, after `jit.available()`.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["gather_tile", "reduce_tile", "WIDTH"]

WIDTH = 16  # floats per vector
_F32 = ir.FloatType()
_VEC = ir.VectorType(_F32, WIDTH)
_I32 = ir.IntType(32)
_F32_ARRAY = types.Array(types.float32, 1, "C")
_I64_ARRAY = types.Array(types.int64, 1, "C")


def _data(context, builder, aryty, value):
    return context.make_array(aryty)(context, builder, value).data


def _index(context, builder, ty, value):
    return context.cast(builder, value, ty, types.int64)


def _load_vector(builder, base, index):
    ptr = builder.bitcast(builder.gep(base, [index]), _VEC.as_pointer())
    return builder.load(ptr, align=4)


def _store_vector(builder, base, index, value) -> None:
    ptr = builder.bitcast(builder.gep(base, [index]), _VEC.as_pointer())
    builder.store(value, ptr, align=4)


def _broadcast(builder, scalar):
    one = builder.insert_element(ir.Constant(_VEC, ir.Undefined), scalar, ir.Constant(_I32, 0))
    mask = ir.Constant(ir.VectorType(_I32, WIDTH), [0] * WIDTH)
    return builder.shuffle_vector(one, ir.Constant(_VEC, ir.Undefined), mask)


def _fma(builder):
    return cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(_VEC, [_VEC, _VEC, _VEC]), "llvm.fma.v16f32")


def _check(args, arrays: dict, literal_at) -> bool:
    """True when the argument types fit a tile: the C arrays of `arrays` ({position: type}),
    integer indices and literal integers at `literal_at`."""
    if any(args[i] != ty for i, ty in arrays.items()):
        return False
    scalars = [a for i, a in enumerate(args) if i not in arrays and i not in literal_at]
    return all(isinstance(a, types.Integer) for a in scalars) and all(
        isinstance(args[i], types.IntegerLiteral) and args[i].literal_value > 0
        for i in literal_at)


def _tile_codegen(gather: bool):
    def codegen(context, builder, signature, args):
        tys = signature.args
        rows, vectors = tys[11].literal_value, tys[12].literal_value
        s_ptr = _data(context, builder, tys[0], args[0])
        offs_ptr = _data(context, builder, tys[3], args[3])
        t_ptr = _data(context, builder, tys[5], args[5])
        out_ptr = _data(context, builder, tys[8], args[8])
        sbase, tbase, tstep, obase, ostep, count = (
            _index(context, builder, tys[i], args[i]) for i in (1, 4, 6, 7, 9, 10))
        if gather:
            sstep = _index(context, builder, tys[2], args[2])
        else:
            pixels_ptr = _data(context, builder, tys[2], args[2])
        fma = _fma(builder)
        zero = ir.Constant(_VEC, [0.0] * WIDTH)
        accs = [[cgutils.alloca_once_value(builder, zero) for _ in range(vectors)]
                for _ in range(rows)]
        with cgutils.for_range(builder, count) as loop:
            step = loop.index
            tv = builder.add(tbase, builder.mul(step, tstep))
            tvecs = [_load_vector(builder, t_ptr, builder.add(tv, ir.Constant(tv.type, WIDTH * v)))
                     for v in range(vectors)]
            if gather:
                s_at = builder.add(sbase, builder.load(builder.gep(offs_ptr, [step])))
            else:
                s_at = builder.add(sbase, builder.load(builder.gep(pixels_ptr, [step])))
            for r in range(rows):
                if gather:
                    at = builder.add(s_at, builder.mul(ir.Constant(sstep.type, r), sstep))
                else:
                    off = builder.load(builder.gep(offs_ptr, [ir.Constant(s_at.type, r)]))
                    at = builder.add(s_at, off)
                bcast = _broadcast(builder, builder.load(builder.gep(s_ptr, [at])))
                for v in range(vectors):
                    acc = accs[r][v]
                    builder.store(builder.call(fma, [bcast, tvecs[v], builder.load(acc)]), acc)
        for r in range(rows):
            row = builder.add(obase, builder.mul(ir.Constant(ostep.type, r), ostep))
            for v in range(vectors):
                at = builder.add(row, ir.Constant(row.type, WIDTH * v))
                value = builder.load(accs[r][v])
                if not gather:
                    value = builder.fadd(value, _load_vector(builder, out_ptr, at))
                _store_vector(builder, out_ptr, at, value)
        return context.get_dummy_value()

    return codegen


@intrinsic(prefer_literal=True)
def gather_tile(typingctx, s, sbase, sstep, offs, tbase, t, tstep, obase, out, ostep, taps,
                rows, vectors):
    """A direct convolution's block of `rows` outputs x `vectors` x 16 channels (see the
    module docstring; `tbase` before `t` keeps the argument positions of `reduce_tile`)."""
    args = (s, sbase, sstep, offs, tbase, t, tstep, obase, out, ostep, taps, rows, vectors)
    if not _check(args, {0: _F32_ARRAY, 3: _I64_ARRAY, 5: _F32_ARRAY, 8: _F32_ARRAY}, (11, 12)):
        return None
    return types.none(*args), _tile_codegen(True)


@intrinsic(prefer_literal=True)
def reduce_tile(typingctx, s, sbase, pixels, offs, tbase, t, tstep, obase, out, ostep, count,
                rows, vectors):
    """A filter gradient's block of `rows` window inputs x `vectors` x 16 channels, summed
    over `count` pixels (each at its offset in `pixels`) and added to `out` (see the module
    docstring)."""
    args = (s, sbase, pixels, offs, tbase, t, tstep, obase, out, ostep, count, rows, vectors)
    if not _check(args, {0: _F32_ARRAY, 2: _I64_ARRAY, 3: _I64_ARRAY, 5: _F32_ARRAY,
                         8: _F32_ARRAY}, (11, 12)):
        return None
    return types.none(*args), _tile_codegen(False)
