"""Probe: can a numba direct convolution beat im2col + OpenBLAS for few input channels?

Issue 16 asked for a compiled direct convolution for the CNN benchmark's first layer (5x5,
3 input channels). This probe keeps the measurement that decided against it (stop 19), so it
can be repeated on another machine or numba version. Per core (one BLAS thread, CPU time of
the calling thread, medians of interleaved rounds) it times:

- `im2col`: tensorflux's NumPy kernel (`lib/numerics/conv2d.py`), split into its packing
  (NumPy strided copy) and its product (OpenBLAS sgemm);
- `direct-mem`: a direct kernel as numba's loop vectorizer compiles it: 4 output pixels x 4
  window values per pass over the output channels, accumulators in memory (L1; the loop
  vectorizer also re-checks aliasing between them and the filter rows at every pass; it
  covers the first 72 of the 75 window values, so its time is slightly flattered);
- `direct-reg`: register-blocked (P pixels x C channels of scalar accumulators, which LLVM's
  SLP vectorizer packs into vector registers). numba runs SLP only when the process sets
  `NUMBA_SLP_VECTORIZE=1` before importing numba (this script does; the package must not:
  it is a process-wide setting), and the unrolled body is generated here from (P, C).

    python bench/conv_direct_probe.py [--rounds N]

Stop 19, loaded machine (load 8.5, ms per conv on one core): CNN conv1 im2col 11.3 (pack
4.4), direct-mem 21.2, direct-reg 4x32 8.5; CIFAR conv1 im2col 11.9 (pack 3.2), direct-mem
18.5, direct-reg 4x32 10.5. TensorFlow's oneDNN kernel took 3.2 / 6.9 ms of CPU (bench/
kernels.py --clock cpu), so even the register-blocked kernel stays ~2.5x behind it: LLVM
here emits 256-bit vectors only, and OpenBLAS's sgemm already runs at ~86 GF/s per core.

Stop 22: `direct-tiles` is the kernel tensorflux now uses (`lib/numerics/conv_direct.py`):
explicit `<16 x float>` LLVM vectors (numba intrinsics in `conv_direct_jit.py`), which the backend
keeps 512 bits wide on AVX-512 whatever the vectorizers prefer, in 8x32 / 6x64 register tiles.
Load 7-9, ms per conv on one core: CNN conv1 im2col 5.7, direct-tiles 2.2 (140 GF/s); CIFAR
conv1 im2col 10.1, direct-tiles 4.7 (TensorFlow 2.7 / 6.0 ms of CPU in bench/kernels.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("NUMBA_SLP_VECTORIZE", "1")

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from tensorflux.lib.numerics import conv2d, conv_direct, window  # noqa: E402

_OPTIONS = dict(nogil=True, error_model="numpy", fastmath={"contract"})
SHAPES = [(64, 32, 3, 32), (128, 24, 3, 64)]  # CNN conv1, CIFAR-10 tutorial conv1 (n, hw, c, out)


@njit(**_OPTIONS)
def direct_mem(xf, w2, xoff, rs, ps, out):
    """out[b, i, j] = sum_k xf[b, i * rs + j * ps + xoff[k]] * w2[k]; ow and taps % 4 == 0."""
    n, oh, ow, depth = out.shape
    taps = w2.shape[0]
    a0, a1 = np.empty(depth, out.dtype), np.empty(depth, out.dtype)
    a2, a3 = np.empty(depth, out.dtype), np.empty(depth, out.dtype)
    for b in range(n):
        xr = xf[b]
        for i in range(oh):
            for j in range(0, ow, 4):
                a0[:] = 0
                a1[:] = 0
                a2[:] = 0
                a3[:] = 0
                p0 = i * rs + j * ps
                for k in range(0, taps - 3, 4):
                    o0, o1, o2, o3 = xoff[k], xoff[k + 1], xoff[k + 2], xoff[k + 3]
                    x0 = (xr[p0 + o0], xr[p0 + o1], xr[p0 + o2], xr[p0 + o3])
                    q = p0 + ps
                    x1 = (xr[q + o0], xr[q + o1], xr[q + o2], xr[q + o3])
                    q += ps
                    x2 = (xr[q + o0], xr[q + o1], xr[q + o2], xr[q + o3])
                    q += ps
                    x3 = (xr[q + o0], xr[q + o1], xr[q + o2], xr[q + o3])
                    w0, w1, w2_, w3 = w2[k], w2[k + 1], w2[k + 2], w2[k + 3]
                    for co in range(depth):
                        v0, v1, v2, v3 = w0[co], w1[co], w2_[co], w3[co]
                        a0[co] += x0[0] * v0 + x0[1] * v1 + x0[2] * v2 + x0[3] * v3
                        a1[co] += x1[0] * v0 + x1[1] * v1 + x1[2] * v2 + x1[3] * v3
                        a2[co] += x2[0] * v0 + x2[1] * v1 + x2[2] * v2 + x2[3] * v3
                        a3[co] += x3[0] * v0 + x3[1] * v1 + x3[2] * v2 + x3[3] * v3
                out[b, i, j] = a0
                out[b, i, j + 1] = a1
                out[b, i, j + 2] = a2
                out[b, i, j + 3] = a3


def direct_reg(pixels: int, channels: int):
    """The register-blocked kernel for blocks of `pixels` x `channels` (ow % pixels == 0 and
    depth % channels == 0); generated from these two constants only."""
    acc = [f"s{p}_{c}" for p in range(pixels) for c in range(channels)]
    lines = [
        "def kernel(xf, wm, xoff, rs, ps, out):",
        "    n, oh, ow, depth = out.shape",
        "    zero = np.float32(0)",
        "    for b in range(n):",
        "        xr = xf[b]",
        "        for i in range(oh):",
        f"            for j in range(0, ow, {pixels}):",
        "                base = i * rs + j * ps",
        f"                for c0 in range(0, depth, {channels}):",
        *(f"                    {a} = zero" for a in acc),
        "                    for k in range(wm.shape[0]):",
        "                        o = base + xoff[k]",
        *(f"                        x{p} = xr[o + {p} * ps]" for p in range(pixels)),
        f"                        wr = wm[k, c0:c0 + {channels}]",
        *(f"                        w{c} = wr[{c}]" for c in range(channels)),
        *(f"                        s{p}_{c} += x{p} * w{c}"
          for p in range(pixels) for c in range(channels)),
    ]
    for p in range(pixels):
        lines.append(f"                    row = out[b, i, j + {p}, c0:c0 + {channels}]")
        lines += [f"                    row[{c}] = s{p}_{c}" for c in range(channels)]
    namespace = {"np": np}
    exec("\n".join(lines), namespace)  # noqa: S102 - source built from two ints above
    return njit(**_OPTIONS)(namespace["kernel"])


def _im2col(x, w, geo):
    """conv2d's im2col path (the direct kernels switched off)."""
    saved, conv_direct.MAX_CHANNELS = conv_direct.MAX_CHANNELS, 0
    try:
        return conv2d.conv2d(x, w, geo)
    finally:
        conv_direct.MAX_CHANNELS = saved


def _thread_ms(fn, rounds: int) -> list:
    times = []
    for _ in range(rounds):
        start = time.thread_time()
        fn()
        times.append((time.thread_time() - start) * 1e3)
    return times


def _probe(shape, rounds: int, rng, geo) -> None:
    """Times the kernels on one convolution shape and prints a row per kernel."""
    n, hw, c, depth = shape
    x = rng.standard_normal((n, hw, hw, c)).astype(np.float32)
    w = rng.standard_normal((5, 5, c, depth)).astype(np.float32)
    out_hw, pads = geo.geometry(hw, hw, 5, 5)
    xp = conv2d.pad_nhwc(x, pads)
    wp = xp.shape[2]
    xf = xp.reshape(n, -1)
    xoff = (np.arange(5)[:, None, None] * (wp * c) + np.arange(5)[None, :, None] * c
            + np.arange(c)[None, None, :]).reshape(-1).astype(np.int64)
    w2 = w.reshape(-1, depth)
    ref = _im2col(x, w, geo)
    per_item = hw * hw * 25 * c
    units = conv2d._im2col_units(n, hw, per_item * 4, 2 * per_item * depth)
    out = np.empty_like(ref)
    taps = (w2.shape[0] // 4) * 4  # direct_mem covers the first taps % 4 == 0 only
    cases = {
        "im2col": lambda: _im2col(x, w, geo),
        "  pack only": lambda: [u for u, _ in conv2d._patch_matrices(
            x, pads, (5, 5), out_hw, geo, units)],
        "direct-mem": lambda: direct_mem(xf, w2[:taps], xoff[:taps], wp * c, c, out),
        "direct-tiles": lambda: conv_direct.conv2d(x, w, geo, conv2d.pad_nhwc),
    }
    for pixels, channels in ((4, 16), (4, 32), (2, 32)):
        if hw % pixels == 0 and depth % channels == 0:
            kernel = direct_reg(pixels, channels)
            cases[f"direct-reg {pixels}x{channels}"] = (
                lambda k=kernel: k(xf, w2, xoff, wp * c, c, out))
    times = {name: [] for name in cases}
    for fn in cases.values():
        fn()  # compile
    for _ in range(rounds):  # interleaved rounds
        for name, fn in cases.items():
            times[name] += _thread_ms(fn, 1)
    flops = 2 * n * hw * hw * 25 * c * depth
    for name, fn in cases.items():
        ms = statistics.median(times[name])
        err = ""
        if name.startswith("direct-reg"):
            fn()
            err = f"{float(np.max(np.abs(out - ref))):.1e}"
        rate = "" if name.strip() == "pack only" else f"{flops / ms / 1e6:.1f}"
        print(f"{str((n, hw, c, depth)):<24}{name:<18}{ms:>8.2f}{rate:>8}{err:>10}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    geo = window.window("NHWC", None, [1, 1, 1, 1], (1, 1, 1, 1), "SAME", ())
    print(f"{'shape (n, hw, c, out)':<24}{'kernel':<18}{'ms':>8}{'GF/s':>8}{'max err':>10}")
    with threadpool_limits(1):
        for shape in SHAPES:
            _probe(shape, args.rounds, rng, geo)


if __name__ == "__main__":
    main()
