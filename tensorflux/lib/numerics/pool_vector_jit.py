"""MaxPool of float32 NHWC tensors on explicit 16-float vectors (a numba intrinsic).

numba's vectorizers keep the select loops of `pooling_jit._max_pool` 256 bits wide (LLVM's
tuning for this CPU family), and read and write each output once per window position. Here a
window's maximum is taken in registers: `window_max` loads the first real position of the
window as `vectors` `<16 x float>` vectors, folds each later position in with
`m = select(v > m or v != v, v, m)`, and stores once; the backend keeps the vectors 512 bits
wide where the CPU has AVX-512 (narrower registers where it does not).

The fold is the reference's (`conv2d.max_pool` / `pooling_jit._max_pool`): positions in
row-major window order, the padding left out (it holds -inf, which never changes a fold that
starts at a real position), so the first maximum wins ties (0.0 against -0.0) and the last NaN
wins over everything: bit for bit the same output.

The intrinsic lives beside the cached loop that inlines it, because numba's cache tracks the
source file of a cached function only.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from tensorflux.lib.numerics import jit

WIDTH = 16  # floats per vector
_F32 = ir.FloatType()
_VEC = ir.VectorType(_F32, WIDTH)
_F32_ARRAY = types.Array(types.float32, 1, "C")
_I64_ARRAY = types.Array(types.int64, 1, "C")


def _data(context, builder, aryty, value):
    return context.make_array(aryty)(context, builder, value).data


def _vector_at(builder, base, index):
    return builder.bitcast(builder.gep(base, [index]), _VEC.as_pointer())


def _window_max_codegen(context, builder, signature, args):
    tys = signature.args
    vectors = tys[7].literal_value
    x_ptr = _data(context, builder, tys[0], args[0])
    offs_ptr = _data(context, builder, tys[2], args[2])
    out_ptr = _data(context, builder, tys[5], args[5])
    xbase, first, count, obase = (context.cast(builder, args[i], tys[i], types.int64)
                                  for i in (1, 3, 4, 6))
    i64 = xbase.type
    start = builder.add(xbase, builder.load(builder.gep(offs_ptr, [first])))
    accs = [cgutils.alloca_once_value(builder, builder.load(
        _vector_at(builder, x_ptr, builder.add(start, ir.Constant(i64, WIDTH * v))), align=4))
        for v in range(vectors)]
    rest = builder.sub(count, ir.Constant(i64, 1))
    with cgutils.for_range(builder, rest) as loop:
        slot = builder.add(builder.add(first, loop.index), ir.Constant(i64, 1))
        at = builder.add(xbase, builder.load(builder.gep(offs_ptr, [slot])))
        for v in range(vectors):
            value = builder.load(
                _vector_at(builder, x_ptr, builder.add(at, ir.Constant(i64, WIDTH * v))),
                align=4)
            best = builder.load(accs[v])
            take = builder.or_(builder.fcmp_ordered(">", value, best),
                               builder.fcmp_unordered("uno", value, value))
            builder.store(builder.select(take, value, best), accs[v])
    for v in range(vectors):
        builder.store(builder.load(accs[v]),
                      _vector_at(builder, out_ptr, builder.add(obase, ir.Constant(i64, WIDTH * v))),
                      align=4)
    return context.get_dummy_value()


@intrinsic(prefer_literal=True)
def window_max(typingctx, x, xbase, offs, first, count, out, obase, vectors):
    """`out[obase : obase + 16 * vectors]` = the fold (module docstring) over the `count`
    positions `x[xbase + offs[first + l] : +16 * vectors]`, `l` in order (`count` >= 1).
    No bounds checks: the caller derives every index from checked shapes."""
    args = (x, xbase, offs, first, count, out, obase, vectors)
    if x != _F32_ARRAY or out != _F32_ARRAY or offs != _I64_ARRAY:
        return None
    if not all(isinstance(args[i], types.Integer) for i in (1, 3, 4, 6)):
        return None
    if not (isinstance(vectors, types.IntegerLiteral) and vectors.literal_value > 0):
        return None
    return types.none(*args), _window_max_codegen


@jit.jit
def window_offsets(h, wd, c, kh, kw, sh, sw, top, left, oh, ow):
    """Per output position `p = i * ow + j`, the flat offsets (within one image) of its
    window's real positions in row-major order: `offs[starts[p] : starts[p + 1]]`."""
    offs = np.empty(oh * ow * kh * kw, dtype=np.int64)
    starts = np.empty(oh * ow + 1, dtype=np.int64)
    k = 0
    for i in range(oh):
        for j in range(ow):
            starts[i * ow + j] = k
            for di in range(kh):
                r = i * sh - top + di
                if r < 0 or r >= h:
                    continue
                for dj in range(kw):
                    q = j * sw - left + dj
                    if q < 0 or q >= wd:
                        continue
                    offs[k] = (r * wd + q) * c
                    k += 1
    starts[oh * ow] = k
    return offs, starts


@jit.jit
def max_pool(x, offs, starts, out):
    """MaxPool of float32 NHWC `x` (C-contiguous) into `out` ([n, oh, ow, c], C-contiguous),
    the windows given by `window_offsets`; every window must hold a real position."""
    n, h, wd, c = x.shape
    positions = starts.shape[0] - 1
    flat = x.reshape(-1)
    dst = out.reshape(-1)
    image = h * wd * c
    wide = c - c % (4 * WIDTH)
    narrow = c - c % WIDTH
    for b in range(n):
        xb = b * image
        for p in range(positions):
            first = starts[p]
            count = starts[p + 1] - first
            ob = (b * positions + p) * c
            for ch in range(0, wide, 4 * WIDTH):
                window_max(flat, xb + ch, offs, first, count, dst, ob + ch, 4)
            for ch in range(wide, narrow, WIDTH):
                window_max(flat, xb + ch, offs, first, count, dst, ob + ch, 1)
            for ch in range(narrow, c):
                m = flat[xb + offs[first] + ch]
                for slot in range(first + 1, first + count):
                    v = flat[xb + offs[slot] + ch]
                    m = v if (v > m) | (v != v) else m
                dst[ob + ch] = m
