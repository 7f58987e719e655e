"""`_FusedConv2D` and `_FusedMatMul`: a convolution or matrix product followed by BiasAdd and
optionally an activation, in one kernel (TF's grappler remapper makes the same ops); and
`_SparseSoftmaxCrossEntropyWithLogitsScaled`: the sparse softmax cross-entropy with its
gradient's constant `Mul` applied to the backprop rows while they are in cache; and
`_FusedMaxPoolGrad`: the backward pass of relu -> [bias_add ->] max_pool in one op (the
relu mask on the pooled gradient, its routing to each window's maximum and its bias sum);
and `_FusedMatMulApplyGradientDescent`: a weight gradient `a^T @ b` applied by gradient
descent one cache-sized block of rows at a time, without the whole gradient in memory.

Users never build these: the runtime's rewrites (runtime/rewrites.py, rule 6) replace a
`Conv2D`/`MatMul` -> `BiasAdd` [-> `Relu`/`Relu6`/`Elu`] chain whose intermediate results
nothing else reads. The kernel applies the bias and activation in place on the product, per
im2col chunk for convolutions (while it is in cache), with the very arithmetic of the unfused
ops, so results are bit-identical (in one compiled pass, lib/numerics/epilogue_jit.py, when
numba is available). Like TF's they have no gradient: they only exist in step
graphs, after differentiation.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import conv2d as conv_kernels
from tensorflux.lib.numerics import (
    epilogue_jit,
    gemm_update_jit,
    intra_op,
    jit,
    pooling_jit,
    update_jit,
)
from tensorflux.ops.math import matrix_product as matmul_ops
from tensorflux.ops.nn import activations as activation_ops
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import pooling as pooling_ops
from tensorflux.ops.state import training_ops

__all__: list = []

# fused_ops value -> in-place epilogue on a float array (the unfused kernels' arithmetic).
_ACTIVATIONS = {
    "Relu": lambda y: np.maximum(y, np.zeros((), y.dtype), out=y),
    "Relu6": lambda y: np.clip(y, np.zeros((), y.dtype), np.asarray(6, y.dtype), out=y),
}
FUSABLE_ACTIVATIONS = frozenset(_ACTIVATIONS)
_FUSED_ATTRS = ["num_args: int >= 0", "fused_ops: list(string) = []",
                "epsilon: float = 0.0001"]
_TYPES = "T: {float32, float64}"


def _epilogue(fused_ops, what: str):
    """The in-place `f(product, bias)` for a `fused_ops` list; ValueError when unsupported."""
    ops = list(fused_ops)
    if not ops or ops[0] != "BiasAdd" or len(ops) > 2 or \
            (len(ops) == 2 and ops[1] not in _ACTIVATIONS):
        raise ValueError(f"{what} supports fused_ops ['BiasAdd'] or ['BiasAdd', one of "
                         f"{sorted(_ACTIVATIONS)}], got {ops}")
    activation = _ACTIVATIONS[ops[1]] if len(ops) == 2 else None
    name = ops[1] if len(ops) == 2 else None
    compiled = jit.available()

    def apply(y, bias):
        if compiled and epilogue_jit.supports(y) and bias.dtype == y.dtype:
            epilogue_jit.bias_activation(y, bias, name)
            return
        np.add(y, bias, out=y)
        if activation is not None:
            activation(y)

    return apply


def _check_bias(bias, channels: int, what: str) -> None:
    if bias.ndim != 1 or bias.shape[0] != channels:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: the bias must be a vector with one value per output channel "
                        f"({channels}), got shape {list(bias.shape)}")


def _check_num_args(num_args: int, what: str) -> None:
    if num_args != 1:
        raise ValueError(f"{what} with BiasAdd takes exactly one extra argument (the bias), "
                         f"got num_args={num_args}")


# -- _FusedConv2D -----------------------------------------------------------------------------

FusedConv2D = define_op(
    "_FusedConv2D", inputs=["input: T", "filter: T", "args: num_args * T"],
    outputs=["output: T"],
    attrs=[_TYPES, *_FUSED_ATTRS, "use_cudnn_on_gpu: bool = True", *conv_ops._CONV_ATTRS],
    differentiable=False)


@FusedConv2D.shape_fn
def _fused_conv2d_shape(input, filter, args, *, num_args, fused_ops, epsilon, strides, padding,
                        explicit_paddings, data_format, dilations):
    _check_num_args(num_args, "_FusedConv2D")
    _epilogue(fused_ops, "_FusedConv2D")
    geo = conv_ops._window(strides, padding, explicit_paddings, data_format, dilations)
    return conv_ops._conv_out_shape(input, filter, geo, depthwise=False)


@FusedConv2D.kernel(factory=True)
def _fused_conv2d_kernel(num_args, fused_ops, epsilon, strides, padding, explicit_paddings,
                         data_format, dilations):
    geo = conv_ops._window(strides, padding, explicit_paddings, data_format, dilations)
    epilogue = _epilogue(fused_ops, "_FusedConv2D")

    def fused_conv2d(x, w, bias):
        x = conv_ops._to_nhwc(x, geo)
        conv_ops._check_depth(x.shape[3], w.shape[2], "_FusedConv2D")
        _check_bias(bias, w.shape[3], "_FusedConv2D")
        out = conv_kernels.conv2d(x, w, geo, epilogue=lambda y: epilogue(y, bias))
        return conv_ops._from_nhwc(out, geo)

    return fused_conv2d


# -- _FusedMatMul -----------------------------------------------------------------------------

FusedMatMul = define_op(
    "_FusedMatMul", inputs=["a: T", "b: T", "args: num_args * T"], outputs=["product: T"],
    attrs=[_TYPES, "transpose_a: bool = False", "transpose_b: bool = False", *_FUSED_ATTRS],
    differentiable=False)


@FusedMatMul.shape_fn
def _fused_matmul_shape(a, b, args, *, transpose_a, transpose_b, num_args, fused_ops, epsilon):
    _check_num_args(num_args, "_FusedMatMul")
    _epilogue(fused_ops, "_FusedMatMul")
    return matmul_ops._matmul_shape(a, b, transpose_a=transpose_a, transpose_b=transpose_b)


@FusedMatMul.kernel(factory=True)
def _fused_matmul_kernel(transpose_a, transpose_b, num_args, fused_ops, epsilon):
    epilogue = _epilogue(fused_ops, "_FusedMatMul")

    def fused_matmul(a, b, bias):
        y = matmul_ops.product(a, b, transpose_a, transpose_b)
        _check_bias(bias, y.shape[1], "_FusedMatMul")
        epilogue(y, bias)
        return y

    return fused_matmul


# -- _SparseSoftmaxCrossEntropyWithLogitsScaled -----------------------------------------------

SparseSoftmaxXentScaled = define_op(
    "_SparseSoftmaxCrossEntropyWithLogitsScaled",
    inputs=["features: T", "labels: Tlabels", "scale: T"], outputs=["loss: T", "backprop: T"],
    attrs=[_TYPES, "Tlabels: {int32, int64} = int64"], differentiable=False)


@SparseSoftmaxXentScaled.shape_fn
def _scaled_xent_shape(features, labels, scale):
    return nn_core._sparse_softmax_xent_shape(features, labels)


@SparseSoftmaxXentScaled.kernel
def _scaled_xent_kernel(features, labels, scale):
    """SparseSoftmaxCrossEntropyWithLogits whose backprop is `scale * backprop` (`scale`
    broadcasts to `[batch, 1]`), bit-identical to the op followed by that `Mul`."""
    return nn_core.sparse_softmax_xent(features, labels, scale)


SparseSoftmaxXentBiasGrad = define_op(
    "_SparseSoftmaxCrossEntropyWithLogitsScaledBiasGrad",
    inputs=["features: T", "labels: Tlabels", "scale: T"],
    outputs=["loss: T", "backprop: T", "bias_grad: T"],
    attrs=[_TYPES, "Tlabels: {int32, int64} = int64"], differentiable=False)


@SparseSoftmaxXentBiasGrad.shape_fn
def _xent_bias_grad_shape(features, labels, scale):
    loss, backprop = nn_core._sparse_softmax_xent_shape(features, labels)
    return [loss, backprop, TensorShape([backprop._dim_list[1]])]


@SparseSoftmaxXentBiasGrad.kernel
def _xent_bias_grad_kernel(features, labels, scale):
    """`_SparseSoftmaxCrossEntropyWithLogitsScaled` and the `BiasAddGrad` of its backprop
    (runtime/remapper.py `fold_xent_bias_grad`): the column sums are taken while each block of
    rows is in cache (the loss and backprop bit-identical; the sums in another order)."""
    return nn_core.sparse_softmax_xent(features, labels, scale, bias_grad=True)


# -- _FusedMaxPoolGrad ------------------------------------------------------------------------

FusedMaxPoolGrad = define_op(
    "_FusedMaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T", "bias_grad: T"],
    attrs=[_TYPES, *pooling_ops._WINDOW, "padding: {'SAME', 'VALID', 'EXPLICIT'}",
           "explicit_paddings: list(int) = []", pooling_ops._DATA_FORMAT],
    differentiable=False)


@FusedMaxPoolGrad.shape_fn
def _fused_max_pool_grad_shape(orig_input, orig_output, grad, *, ksize, strides, padding,
                               explicit_paddings, data_format):
    geo = pooling_ops._window(ksize, strides, padding, data_format, explicit_paddings)
    shape = orig_input.with_rank(4)
    channels = shape._dim_list[3 if geo.channels_last else 1]
    return [shape, TensorShape([channels])]


@FusedMaxPoolGrad.kernel(factory=True)
def _fused_max_pool_grad_kernel(ksize, strides, padding, explicit_paddings, data_format):
    """`(MaxPoolGrad(x, y, r), BiasAddGrad(r))` for `r = ReluGrad(g, y)` (runtime/remapper.py
    `reorder_pool_gradients` makes this op of such a chain): one compiled pass when the
    windows tile the input, else the three unfused kernels (the very values of the chain)."""
    geo = pooling_ops._window(ksize, strides, padding, data_format, explicit_paddings)
    relu_grad = activation_ops._relu_grad_kernel_factory()
    pool_grad = pooling_ops._max_pool_grad_kernel(ksize, strides, padding, explicit_paddings,
                                                  data_format)
    compiled = jit.available()

    def fused_max_pool_grad(x, y, g):
        nhwc = [pooling_ops._to_nhwc(a, geo) for a in (x, y, g)]
        if compiled and pooling_jit.supports(*nhwc) and x.dtype == y.dtype == g.dtype and \
                pooling_jit.tiles(nhwc[0].shape, geo):
            dx, bias = pooling_jit.max_pool_grad_relu(*nhwc, geo)
            return pooling_ops._from_nhwc(dx, geo), bias
        masked = relu_grad(g, y)
        return pool_grad(x, y, masked), nn_core._bias_add_grad_kernel(
            masked, data_format="NHWC" if geo.channels_last else "NCHW")

    return fused_max_pool_grad


# -- _FusedMatMulApplyGradientDescent ---------------------------------------------------------

FusedMatMulApplyGradientDescent = define_op(
    "_FusedMatMulApplyGradientDescent",
    inputs=["var: Ref(T)", "alpha: T", "a: T", "b: T"], outputs=["out: Ref(T)"],
    attrs=[_TYPES, "use_locking: bool = False", "transpose_a: bool = True",
           "transpose_b: bool = False"],
    stateful=True, differentiable=False)

# Rows of the gradient product per block: ~512 KB of float32 (cache-resident between the
# product that writes it and the update that reads it).
UPDATE_BLOCK_ELEMENTS = 1 << 17
# Fewer rows per block than this run unfused: BLAS packs all of `b` again for every block, so
# thin blocks of a wide gradient repack it many times (the LSTM LM's [256, 10000] output
# kernel: 13-row blocks, 20 packings of a 640 x 10000 `b`; its step took 192 ms of CPU fused
# against 123 unfused, one thread).
MIN_BLOCK_ROWS = 64


# The in-tile update (gemm_update) also when BLAS has several threads (a quiet machine): off,
# measured slower there for the MLP (bench/ab_kernels.py --change gemm_update).
GEMM_UPDATE_WITH_THREADED_BLAS = False


def _update_in_product(buf, alpha, a, b) -> None:
    """`buf -= alpha * (a^T @ b)` with the update inside the product's register tiles
    (lib/numerics/gemm_update_jit.py), column ranges on the intra-op threads: BLAS's helpers
    under load (the product split), the elementwise threads on a quiet machine (the kernel
    calls no BLAS)."""
    n = buf.shape[1]
    threads = max(intra_op.splits(), intra_op.elementwise_splits())
    panels = -(-n // gemm_update_jit.PANEL)
    count = min(panels, 2 * threads) if threads > 1 else 1
    edges = [min(n, gemm_update_jit.PANEL * (panels * i // count)) for i in range(count + 1)]

    def part(i: int) -> None:
        gemm_update_jit.update_panels(buf, alpha, a, b, edges[i], edges[i + 1])

    if count == 1:
        part(0)
    elif intra_op.splits() > 1:
        intra_op.run_parts(part, count)
    else:
        intra_op.run_elementwise(part, count)


@FusedMatMulApplyGradientDescent.shape_fn
def _fused_matmul_apply_shape(var, alpha, a, b, *, use_locking, transpose_a, transpose_b):
    return var


@FusedMatMulApplyGradientDescent.kernel(factory=True)
def _fused_matmul_apply_kernel(use_locking, transpose_a, transpose_b):
    """`ApplyGradientDescent(var, alpha, MatMul(a, b, transpose_a, transpose_b))`
    (runtime/remapper.py `fuse_gradient_updates`). For `a^T @ b` in a float variable the
    product is made per block of rows, each applied right away with the compiled update: the
    same row sums (BLAS gives a row the same sums in any block of rows) and the same
    `var - alpha * delta`, without writing and reading back the whole gradient; the blocks
    run on the intra-op helpers when the product split is on (BLAS with one thread, a loaded
    machine). With BLAS on several threads (a quiet machine), another dtype or shapes that
    do not match, the two unfused kernels run (their values and errors). Float32 weight
    gradients over at most `gemm_update_jit.MAX_K` examples update the variable inside the
    product's register tiles instead (AVX-512; within float32 tolerance of BLAS's product:
    the sums run in example order with fused multiply-adds)."""
    matmul = matmul_ops._matmul_factory(transpose_a, transpose_b)
    blocked = bool(transpose_a) and not transpose_b

    def fused_matmul_apply(var, alpha, a, b):
        buf = var.read()
        # On a quiet machine BLAS's threaded product plus a split update is faster in wall
        # time (measured: MLP step 7.0 vs 8.1 ms); the in-tile update wins per core, so it
        # runs when BLAS has one thread (load, or one intra-op thread).
        blas_threaded = (not GEMM_UPDATE_WITH_THREADED_BLAS and intra_op.splits() <= 1
                         and intra_op.elementwise_splits() > 1)
        if blocked and not blas_threaded and gemm_update_jit.supports(buf, alpha, a, b):
            _update_in_product(buf, alpha, a, b)
            return var
        # NOTE: BLAS with several threads (free cores: run_elementwise's threads) runs the
        # whole product and a split update instead: a call per block of rows costs BLAS's
        # thread hand-offs (16 blocks measured 2x slower than 4 with 2 OpenBLAS threads).
        if not (blocked and a.ndim == b.ndim == 2 and a.dtype == b.dtype == buf.dtype and
                buf.shape == (a.shape[1], b.shape[1]) and a.shape[0] == b.shape[0] and
                update_jit.supports(buf) and np.ndim(alpha) == 0 and buf.size and
                intra_op.elementwise_splits() == 1 and
                UPDATE_BLOCK_ELEMENTS // buf.shape[1] >= MIN_BLOCK_ROWS):
            return training_ops._apply_gradient_descent(var, alpha, matmul(a, b))
        rows = max(1, UPDATE_BLOCK_ELEMENTS // buf.shape[1])
        blocks = intra_op.balanced_parts(buf.shape[0], -(-buf.shape[0] // rows))
        left = a.T

        def block(i: int) -> None:
            lo, hi = blocks[i]
            update_jit.gradient_descent(buf[lo:hi], alpha, np.matmul(left[lo:hi], b))

        if intra_op.splits() > 1:
            intra_op.run_parts(block, len(blocks))
        else:
            for i in range(len(blocks)):
                block(i)
        return var

    return fused_matmul_apply
