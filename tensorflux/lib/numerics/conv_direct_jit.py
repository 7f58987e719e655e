"""The compiled part of conv_direct: register tiles of 16-float vectors (numba intrinsics)
and the loops over a batch part that call them. Importing this module imports numba.

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
checks: the callers derive every index from shapes conv_direct checked. Sums run in the order
of `l` with one rounding per fused multiply-add (float32 tolerance of a product).

The tiles live in this module, beside the cached loops that inline them, because numba's
cache tracks the source file of a cached function only: tiles in another module could change
without the cached loops being compiled again.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from tensorflux.lib.numerics import jit

__all__ = ["forward", "filter_gradient", "pack_filter", "gather_tile", "reduce_tile", "WIDTH"]

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


@jit.jit
def _outputs_4(s, sb, ps, offs, wb, wm, ws, d, depth, ob, out, ow):
    # Channels d..d + 64 of an output row (their filter columns at wb, rows ws apart):
    # blocks of 6 pixels, then of 4, then single ones.
    taps = offs.shape[0]
    j = 0
    while j + 6 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 6, 4)
        j += 6
    while j + 4 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 4, 4)
        j += 4
    while j < ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 1, 4)
        j += 1


@jit.jit
def _outputs_3(s, sb, ps, offs, wb, wm, ws, d, depth, ob, out, ow):
    # Channels d..d + 48 of an output row (their filter columns at wb, rows ws apart):
    # blocks of 8 pixels, then of 4, then single ones.
    taps = offs.shape[0]
    j = 0
    while j + 8 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 8, 3)
        j += 8
    while j + 4 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 4, 3)
        j += 4
    while j < ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 1, 3)
        j += 1


@jit.jit
def _outputs_2(s, sb, ps, offs, wb, wm, ws, d, depth, ob, out, ow):
    # Channels d..d + 32 of an output row (their filter columns at wb, rows ws apart):
    # blocks of 8 pixels, then of 4, then single ones.
    taps = offs.shape[0]
    j = 0
    while j + 8 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 8, 2)
        j += 8
    while j + 4 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 4, 2)
        j += 4
    while j < ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 1, 2)
        j += 1


@jit.jit
def _outputs_1(s, sb, ps, offs, wb, wm, ws, d, depth, ob, out, ow):
    # Channels d..d + 16 of an output row (their filter columns at wb, rows ws apart):
    # blocks of 16 pixels, then of 4, then single ones.
    taps = offs.shape[0]
    j = 0
    while j + 16 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 16, 1)
        j += 16
    while j + 4 <= ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 4, 1)
        j += 4
    while j < ow:
        gather_tile(s, sb + j * ps, ps, offs, wb, wm, ws, ob + j * depth + d, out, depth,
                    taps, 1, 1)
        j += 1


@jit.jit
def _window_inputs_4(s, sb, at, offs, gb, g, depth, d, image_dw, n):
    # Channels d..d + 64 of the filter gradient over n pixels: blocks of 6 window
    # inputs, then single ones.
    taps = offs.shape[0]
    k = 0
    while k + 6 <= taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    6, 4)
        k += 6
    while k < taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    1, 4)
        k += 1


@jit.jit
def _window_inputs_3(s, sb, at, offs, gb, g, depth, d, image_dw, n):
    # Channels d..d + 48 of the filter gradient over n pixels: blocks of 8 window
    # inputs, then single ones.
    taps = offs.shape[0]
    k = 0
    while k + 8 <= taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    8, 3)
        k += 8
    while k < taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    1, 3)
        k += 1


@jit.jit
def _window_inputs_2(s, sb, at, offs, gb, g, depth, d, image_dw, n):
    # Channels d..d + 32 of the filter gradient over n pixels: blocks of 8 window
    # inputs, then single ones.
    taps = offs.shape[0]
    k = 0
    while k + 8 <= taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    8, 2)
        k += 8
    while k < taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    1, 2)
        k += 1


@jit.jit
def _window_inputs_1(s, sb, at, offs, gb, g, depth, d, image_dw, n):
    # Channels d..d + 16 of the filter gradient over n pixels: blocks of 8 window
    # inputs, then single ones.
    taps = offs.shape[0]
    k = 0
    while k + 8 <= taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    8, 1)
        k += 8
    while k < taps:
        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d, image_dw, depth, n,
                    1, 1)
        k += 1


@jit.jit
def forward(s, offs, wm, out, lo, hi, image, rs, ps, oh, ow, depth):
    """Output images lo..hi, row by row: channels in blocks of 64 (4 vectors), the last
    48, 32 or 16 in one block of 3, 2 or 1 vectors. `wm` holds the filter block by block
    (`pack_filter`)."""
    taps = offs.shape[0]
    full = depth - depth % 64
    rest = depth - full
    for b in range(lo, hi):
        for i in range(oh):
            sb = b * image + i * rs
            ob = (b * oh + i) * ow * depth
            for d in range(0, full, 64):
                _outputs_4(s, sb, ps, offs, d * taps, wm, 64, d, depth, ob, out, ow)
            wb = full * taps
            if rest == 48:
                _outputs_3(s, sb, ps, offs, wb, wm, rest, full, depth, ob, out, ow)
            elif rest == 32:
                _outputs_2(s, sb, ps, offs, wb, wm, rest, full, depth, ob, out, ow)
            elif rest == 16:
                _outputs_1(s, sb, ps, offs, wb, wm, rest, full, depth, ob, out, ow)


def pack_filter(w2):
    """The `[taps, depth]` filter as `forward` reads it: the columns of each block of 64
    channels (then the rest) as one `[taps, block]` matrix after another, flat."""
    full = w2.shape[1] - w2.shape[1] % 64
    blocks = [w2[:, d:d + 64].reshape(-1) for d in range(0, full, 64)]
    return np.concatenate([*blocks, w2[:, full:].reshape(-1)]).astype(np.float32)


@jit.jit
def filter_gradient(s, offs, pixels, g, dw, lo, hi, image, depth, block):
    """Adds the images lo..hi to dw [taps * depth]: per block of `block` output pixels (at
    offsets `pixels` in their image), channels as in `forward`; summed per image, then into
    dw (shorter float sums)."""
    count = pixels.shape[0]
    full = depth - depth % 64
    image_dw = np.empty_like(dw)
    for b in range(lo, hi):
        image_dw[:] = 0
        sb = b * image
        for p in range(0, count, block):
            n = min(block, count - p)
            at = pixels[p:]
            gb = (b * count + p) * depth
            for d in range(0, full, 64):
                _window_inputs_4(s, sb, at, offs, gb, g, depth, d, image_dw, n)
            rest = depth - full
            if rest == 48:
                _window_inputs_3(s, sb, at, offs, gb, g, depth, full, image_dw, n)
            elif rest == 32:
                _window_inputs_2(s, sb, at, offs, gb, g, depth, full, image_dw, n)
            elif rest == 16:
                _window_inputs_1(s, sb, at, offs, gb, g, depth, full, image_dw, n)
        dw += image_dw
