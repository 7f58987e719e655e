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

`window_grad` is MaxPoolGrad's window for overlapping windows (`pooling_jit._max_pool_grad`):
the first maximum's slot per channel found by the same selects in registers (TF's scan rule: a
later position wins only when strictly greater; when the window's first position is padding,
the scan starts at -inf with no slot, and a gradient left there is dropped), then each real
position adds the window's gradient where it is the pick and 0.0 elsewhere, in window order:
the same sums in the same order as the scalar kernel, bit for bit. For whole vectors of
channels, `max_pool_grad_gather` splits it in two: every window's picks (`window_pick`), then
each input the sum over the windows covering it in window order (`cell_gather`, from 0.0):
the same adds, with each input written once (no zeroing, no read-modify-write).

The intrinsics live beside the cached loop that inlines it, because numba's cache tracks the
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
_I32 = ir.IntType(32)
_PICKS = ir.VectorType(_I32, WIDTH)
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


def _window_grad_codegen(context, builder, signature, args):
    tys = signature.args
    vectors = tys[10].literal_value
    x_ptr = _data(context, builder, tys[0], args[0])
    offs_ptr = _data(context, builder, tys[2], args[2])
    g_ptr = _data(context, builder, tys[6], args[6])
    dx_ptr = _data(context, builder, tys[8], args[8])
    xbase, first, count, padded, gbase, dxbase = (
        context.cast(builder, args[i], tys[i], types.int64) for i in (1, 3, 4, 5, 7, 9))
    i64 = xbase.type
    # padded first position: best = -inf, pick = -1, every real position scanned; else best =
    # the first real position, pick = 0, the rest scanned.
    is_padded = builder.icmp_signed("!=", padded, ir.Constant(i64, 0))
    start_slot = builder.select(is_padded, ir.Constant(i64, 0), ir.Constant(i64, 1))
    lowest = ir.Constant(_VEC, [float("-inf")] * WIDTH)
    at0 = builder.add(xbase, builder.load(builder.gep(offs_ptr, [first])))
    bests, picks = [], []
    for v in range(vectors):
        first_value = builder.load(
            _vector_at(builder, x_ptr, builder.add(at0, ir.Constant(i64, WIDTH * v))), align=4)
        bests.append(cgutils.alloca_once_value(
            builder, builder.select(is_padded, lowest, first_value)))
        picks.append(cgutils.alloca_once_value(builder, builder.select(
            is_padded, ir.Constant(_PICKS, [-1] * WIDTH), ir.Constant(_PICKS, [0] * WIDTH))))
    with cgutils.for_range(builder, builder.sub(count, start_slot)) as loop:
        slot = builder.add(loop.index, start_slot)
        at = builder.add(xbase, builder.load(builder.gep(offs_ptr, [builder.add(first, slot)])))
        slot32 = builder.trunc(slot, _I32)
        slots = builder.shuffle_vector(
            builder.insert_element(ir.Constant(_PICKS, ir.Undefined), slot32,
                                   ir.Constant(_I32, 0)),
            ir.Constant(_PICKS, ir.Undefined), ir.Constant(_PICKS, [0] * WIDTH))
        for v in range(vectors):
            value = builder.load(
                _vector_at(builder, x_ptr, builder.add(at, ir.Constant(i64, WIDTH * v))),
                align=4)
            best = builder.load(bests[v])
            take = builder.fcmp_ordered(">", value, best)
            builder.store(builder.select(take, value, best), bests[v])
            builder.store(builder.select(take, slots, builder.load(picks[v])), picks[v])
    zero = ir.Constant(_VEC, [0.0] * WIDTH)
    grads = [builder.load(_vector_at(
        builder, g_ptr, builder.add(gbase, ir.Constant(i64, WIDTH * v))), align=4)
        for v in range(vectors)]
    with cgutils.for_range(builder, count) as loop:
        slot = loop.index
        at = builder.add(dxbase, builder.load(builder.gep(offs_ptr, [builder.add(first, slot)])))
        slot32 = builder.trunc(slot, _I32)
        slots = builder.shuffle_vector(
            builder.insert_element(ir.Constant(_PICKS, ir.Undefined), slot32,
                                   ir.Constant(_I32, 0)),
            ir.Constant(_PICKS, ir.Undefined), ir.Constant(_PICKS, [0] * WIDTH))
        for v in range(vectors):
            ptr = _vector_at(builder, dx_ptr, builder.add(at, ir.Constant(i64, WIDTH * v)))
            mine = builder.icmp_signed("==", builder.load(picks[v]), slots)
            share = builder.select(mine, grads[v], zero)
            builder.store(builder.fadd(builder.load(ptr, align=4), share), ptr, align=4)
    return context.get_dummy_value()


@intrinsic(prefer_literal=True)
def window_grad(typingctx, x, xbase, offs, first, count, padded, g, gbase, dx, dxbase,
                vectors):
    """For `16 * vectors` channels of one window (its `count` >= 1 real positions at
    `xbase + offs[first + l]` in `x`, the same offsets from `dxbase` in `dx`; `padded`: its
    first position is padding), add the gradient `g[gbase : +16 * vectors]` to `dx` at each
    channel's first maximum and 0.0 elsewhere (module docstring). No bounds checks."""
    args = (x, xbase, offs, first, count, padded, g, gbase, dx, dxbase, vectors)
    if x != _F32_ARRAY or g != _F32_ARRAY or dx != _F32_ARRAY or offs != _I64_ARRAY:
        return None
    if not all(isinstance(args[i], (types.Integer, types.Boolean)) for i in (1, 3, 4, 5, 7, 9)):
        return None
    if not (isinstance(vectors, types.IntegerLiteral) and vectors.literal_value > 0):
        return None
    return types.none(*args), _window_grad_codegen


@jit.jit
def window_offsets(h, wd, c, kh, kw, sh, sw, top, left, oh, ow):
    """Per output position `p = i * ow + j`, the flat offsets (within one image) of its
    window's real positions in row-major order: `offs[starts[p] : starts[p + 1]]`, and
    `padded[p]`: 1 when the window's first position lies in the padding."""
    offs = np.empty(oh * ow * kh * kw, dtype=np.int64)
    starts = np.empty(oh * ow + 1, dtype=np.int64)
    padded = np.zeros(oh * ow, dtype=np.int64)
    k = 0
    for i in range(oh):
        for j in range(ow):
            starts[i * ow + j] = k
            r0, q0 = i * sh - top, j * sw - left
            padded[i * ow + j] = not (0 <= r0 < h and 0 <= q0 < wd)
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
    return offs, starts, padded


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


@jit.jit
def max_pool_grad(x, g, offs, starts, padded, oh, dx):
    """MaxPoolGrad of float32 NHWC `x` ([n, h, wd, c]) for gradient `g` ([n, oh, ow, c]) into
    `dx` (x's shape; all C-contiguous; dx may start uninitialised), the windows given by
    `window_offsets`, each with a real position. Each image's dx is zeroed first (in cache
    for the window adds that follow)."""
    n, h, wd, c = x.shape
    positions = starts.shape[0] - 1
    flat = x.reshape(-1)
    grads = g.reshape(-1)
    out = dx.reshape(-1)
    image = h * wd * c
    wide = c - c % (4 * WIDTH)
    narrow = c - c % WIDTH
    zero = np.float32(0)
    for b in range(n):
        xb = b * image
        out[xb:xb + image] = zero
        for p in range(positions):
            first = starts[p]
            count = starts[p + 1] - first
            gb = (b * positions + p) * c
            skip = padded[p]
            for ch in range(0, wide, 4 * WIDTH):
                window_grad(flat, xb + ch, offs, first, count, skip, grads, gb + ch, out,
                            xb + ch, 4)
            for ch in range(wide, narrow, WIDTH):
                window_grad(flat, xb + ch, offs, first, count, skip, grads, gb + ch, out,
                            xb + ch, 1)
            for ch in range(narrow, c):
                best = -np.inf if skip else flat[xb + offs[first] + ch]
                pick = -1 if skip else 0
                for slot in range(0 if skip else 1, count):
                    v = flat[xb + offs[first + slot] + ch]
                    if v > best:
                        best = v
                        pick = slot
                grad = grads[gb + ch]
                for slot in range(count):
                    at = xb + offs[first + slot] + ch
                    out[at] += grad if slot == pick else zero


def _splat(builder, scalar):
    return builder.shuffle_vector(
        builder.insert_element(ir.Constant(_PICKS, ir.Undefined), scalar, ir.Constant(_I32, 0)),
        ir.Constant(_PICKS, ir.Undefined), ir.Constant(_PICKS, [0] * WIDTH))


def _window_pick_codegen(context, builder, signature, args):
    tys = signature.args
    vectors = tys[7].literal_value
    x_ptr = _data(context, builder, tys[0], args[0])
    offs_ptr = _data(context, builder, tys[2], args[2])
    pick_ptr = _data(context, builder, tys[5], args[5])
    xbase, first, count, pbase = (context.cast(builder, args[i], tys[i], types.int64)
                                  for i in (1, 3, 4, 6))
    padded = context.cast(builder, args[8], tys[8], types.int64)
    i64 = xbase.type
    is_padded = builder.icmp_signed("!=", padded, ir.Constant(i64, 0))
    start_slot = builder.select(is_padded, ir.Constant(i64, 0), ir.Constant(i64, 1))
    lowest = ir.Constant(_VEC, [float("-inf")] * WIDTH)
    at0 = builder.add(xbase, builder.load(builder.gep(offs_ptr, [first])))
    bests, picks = [], []
    for v in range(vectors):
        first_value = builder.load(
            _vector_at(builder, x_ptr, builder.add(at0, ir.Constant(i64, WIDTH * v))), align=4)
        bests.append(cgutils.alloca_once_value(
            builder, builder.select(is_padded, lowest, first_value)))
        picks.append(cgutils.alloca_once_value(builder, builder.select(
            is_padded, ir.Constant(_PICKS, [-1] * WIDTH), ir.Constant(_PICKS, [0] * WIDTH))))
    with cgutils.for_range(builder, builder.sub(count, start_slot)) as loop:
        slot = builder.add(loop.index, start_slot)
        at = builder.add(xbase, builder.load(builder.gep(offs_ptr, [builder.add(first, slot)])))
        slots = _splat(builder, builder.trunc(slot, _I32))
        for v in range(vectors):
            value = builder.load(
                _vector_at(builder, x_ptr, builder.add(at, ir.Constant(i64, WIDTH * v))),
                align=4)
            best = builder.load(bests[v])
            take = builder.fcmp_ordered(">", value, best)
            builder.store(builder.select(take, value, best), bests[v])
            builder.store(builder.select(take, slots, builder.load(picks[v])), picks[v])
    for v in range(vectors):
        ptr = builder.bitcast(builder.gep(pick_ptr, [builder.add(pbase, ir.Constant(
            i64, WIDTH * v))]), _PICKS.as_pointer())
        builder.store(builder.load(picks[v]), ptr, align=4)
    return context.get_dummy_value()


@intrinsic(prefer_literal=True)
def window_pick(typingctx, x, xbase, offs, first, count, picks, pbase, vectors, padded):
    """`picks[pbase : +16 * vectors]` = per channel, the slot `l` (in `offs[first + l]`) of
    the window's first maximum, or -1 (`window_grad`'s scan). No bounds checks."""
    args = (x, xbase, offs, first, count, picks, pbase, vectors, padded)
    if x != _F32_ARRAY or offs != _I64_ARRAY or picks != types.Array(types.int32, 1, "C"):
        return None
    if not all(isinstance(args[i], (types.Integer, types.Boolean)) for i in (1, 3, 4, 6, 8)):
        return None
    if not (isinstance(vectors, types.IntegerLiteral) and vectors.literal_value > 0):
        return None
    return types.none(*args), _window_pick_codegen


def _cell_gather_codegen(context, builder, signature, args):
    tys = signature.args
    vectors = tys[8].literal_value
    pick_ptr = _data(context, builder, tys[0], args[0])
    g_ptr = _data(context, builder, tys[1], args[1])
    wins_ptr = _data(context, builder, tys[2], args[2])
    slots_ptr = _data(context, builder, tys[3], args[3])
    dx_ptr = _data(context, builder, tys[6], args[6])
    first, count, dxbase, base = (context.cast(builder, args[i], tys[i], types.int64)
                                  for i in (4, 5, 7, 9))
    i64 = first.type
    zero = ir.Constant(_VEC, [0.0] * WIDTH)
    accs = [cgutils.alloca_once_value(builder, zero) for _ in range(vectors)]
    with cgutils.for_range(builder, count) as loop:
        k = builder.add(first, loop.index)
        win = builder.add(base, builder.load(builder.gep(wins_ptr, [k])))
        slots = _splat(builder, builder.trunc(builder.load(builder.gep(slots_ptr, [k])), _I32))
        for v in range(vectors):
            at = builder.add(win, ir.Constant(i64, WIDTH * v))
            mine = builder.icmp_signed("==", builder.load(builder.bitcast(
                builder.gep(pick_ptr, [at]), _PICKS.as_pointer()), align=4), slots)
            grad = builder.load(_vector_at(builder, g_ptr, at), align=4)
            builder.store(builder.fadd(builder.load(accs[v]), builder.select(mine, grad, zero)),
                          accs[v])
    for v in range(vectors):
        builder.store(builder.load(accs[v]), _vector_at(
            builder, dx_ptr, builder.add(dxbase, ir.Constant(i64, WIDTH * v))), align=4)
    return context.get_dummy_value()


@intrinsic(prefer_literal=True)
def cell_gather(typingctx, picks, g, wins, slots, first, count, dx, dxbase, vectors, base):
    """`dx[dxbase : +16 * vectors]` = 0.0 plus, for `k` in `first .. first + count` (the
    windows covering this input, in window order), `g[base + wins[k] : +16 * vectors]` where
    `picks` there equals `slots[k]`, else 0.0. No bounds checks."""
    args = (picks, g, wins, slots, first, count, dx, dxbase, vectors, base)
    if picks != types.Array(types.int32, 1, "C") or g != _F32_ARRAY or dx != _F32_ARRAY or \
            wins != _I64_ARRAY or slots != _I64_ARRAY:
        return None
    if not all(isinstance(args[i], types.Integer) for i in (4, 5, 7, 9)):
        return None
    if not (isinstance(vectors, types.IntegerLiteral) and vectors.literal_value > 0):
        return None
    return types.none(*args), _cell_gather_codegen


@jit.jit
def cell_windows(offs, starts, c, cells):
    """The inverse of `window_offsets`: per input cell `e` (of `cells`), the windows covering
    it in window order, `wins[cstarts[e] : cstarts[e + 1]]` (each as its gradient's flat
    offset `p * c`), with the cell's slot in each (`slots`)."""
    positions = starts.shape[0] - 1
    counts = np.zeros(cells + 1, dtype=np.int64)
    for k in range(starts[positions]):
        counts[offs[k] // c + 1] += 1
    cstarts = np.cumsum(counts)
    fill = cstarts[:-1].copy()
    wins = np.empty(starts[positions], dtype=np.int64)
    slots = np.empty(starts[positions], dtype=np.int64)
    for p in range(positions):
        for k in range(starts[p], starts[p + 1]):
            e = offs[k] // c
            wins[fill[e]] = p * c
            slots[fill[e]] = k - starts[p]
            fill[e] += 1
    return wins, slots, cstarts


@jit.jit
def max_pool_grad_gather(x, g, offs, starts, padded, wins, slots, cstarts, dx):
    """`max_pool_grad` for channel counts that are multiples of 16, as two passes per image:
    each window's picks (`window_pick`), then each input's sum over the windows covering it
    in window order (`cell_gather`): the same adds as the scatter, every dx written once."""
    n, h, wd, c = x.shape
    positions = starts.shape[0] - 1
    flat = x.reshape(-1)
    grads = g.reshape(-1)
    out = dx.reshape(-1)
    image = h * wd * c
    picks = np.empty(positions * c, dtype=np.int32)
    wide = c - c % (4 * WIDTH)
    for b in range(n):
        xb = b * image
        gb = b * positions * c
        for p in range(positions):
            first = starts[p]
            count = starts[p + 1] - first
            for ch in range(0, wide, 4 * WIDTH):
                window_pick(flat, xb + ch, offs, first, count, picks, p * c + ch, 4, padded[p])
            for ch in range(wide, c, WIDTH):
                window_pick(flat, xb + ch, offs, first, count, picks, p * c + ch, 1, padded[p])
        gview = grads[gb:gb + positions * c]
        for e in range(h * wd):
            first = cstarts[e]
            count = cstarts[e + 1] - first
            for ch in range(0, wide, 4 * WIDTH):
                cell_gather(picks, gview, wins, slots, first, count, out, xb + e * c + ch, 4, ch)
            for ch in range(wide, c, WIDTH):
                cell_gather(picks, gview, wins, slots, first, count, out, xb + e * c + ch, 1, ch)
