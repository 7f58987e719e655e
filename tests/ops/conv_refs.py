"""Loop references for 2-D convolutions (one output pixel, one kernel offset at a time), shared
by the kernel-path and frequency-domain tests."""

import itertools

import numpy as np

from tensorflux.lib.numerics import window as conv_util


def geometry(ksize, strides, dilations, padding):
    explicit = ()
    if not isinstance(padding, str):  # ((top, bottom), (left, right))
        explicit = [0, 0, *padding[0], *padding[1], 0, 0]
        padding = "EXPLICIT"
    return conv_util.window("NHWC", (1, *ksize, 1) if ksize else None, (1, *strides, 1),
                            (1, *dilations, 1), padding, explicit)


def taps(h, w, kh, kw, geo):
    """(a, b, i, j, r, c): output (a, b) meets input (r, c) through kernel offset (i, j)."""
    (oh, ow), (top, _, left, _) = geo.geometry(h, w, kh, kw)
    for a, b, i, j in itertools.product(range(oh), range(ow), range(kh), range(kw)):
        r = a * geo.strides[0] + i * geo.dilations[0] - top
        c = b * geo.strides[1] + j * geo.dilations[1] - left
        yield a, b, i, j, r, c


def ref_conv(x, f, geo):
    n, h, w, _ = x.shape
    kh, kw, _, depth = f.shape
    out = np.zeros((n, *geo.geometry(h, w, kh, kw)[0], depth))
    for a, b, i, j, r, c in taps(h, w, kh, kw, geo):
        if 0 <= r < h and 0 <= c < w:
            out[:, a, b] += x[:, r, c] @ f[i, j]
    return out


def ref_backprop_input(shape, f, g, geo):
    dx = np.zeros(shape)
    for a, b, i, j, r, c in taps(shape[1], shape[2], f.shape[0], f.shape[1], geo):
        if 0 <= r < shape[1] and 0 <= c < shape[2]:
            dx[:, r, c] += g[:, a, b] @ f[i, j].T
    return dx


def ref_backprop_filter(x, fshape, g, geo):
    df = np.zeros(fshape)
    for a, b, i, j, r, c in taps(x.shape[1], x.shape[2], fshape[0], fshape[1], geo):
        if 0 <= r < x.shape[1] and 0 <= c < x.shape[2]:
            df[i, j] += x[:, r, c].T @ g[:, a, b]
    return df
