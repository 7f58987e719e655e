"""The input half of an unrolled RNN's gate products as one product over all time steps.

A `BasicLSTMCell` (or `LSTMCell`, `GRUCell`'s candidate...) step multiplies
`concat([x_t, h_{t-1}], 1)` by one kernel `K = [K_x; K_h]`. When every `x_t` is known before
the first step (the inputs of a `static_rnn`), `x_t @ K_x` does not need the recurrence: the
remapper (runtime/lstm_inputs.py) computes it for all steps at once as one product with
`T * batch` rows instead of `T` products with `batch` rows (OpenBLAS runs tall products at a
much better rate), and each step then multiplies only `h_{t-1} @ K_h`:

- `_InputProducts(xs, kernel, bias)`: output 0 is a copy of `kernel[:width]` (`width` = the
  columns of `x_t`: the kernel's value when the forward step read it, kept for the backward
  step), outputs 1..N the row blocks of `concat(xs, 0) @ kernel[:width] + bias`, one per `x_t`.
- `_StateProduct(h, kernel, partial)`: `h @ kernel[rows - h_cols:] + partial`, the step's gates.
- `_InputProductsGrad(grads, kernel_rows)`: the backward's input gradients
  `grad_t @ kernel_rows^T` for all steps as one product, one output per step.
- `_InputProductsGradStacked(stacked, kernel_rows)` (attr `N`): the same on gradients already
  stacked by a ConcatV2 along rows (the kernel gradient's), split into `N` equal parts.
- `_StateProductGrad(grad, kernel)` (attr `width`): the state gradient
  `grad @ kernel[width:]^T`, computed as `(kernel[width:] @ grad^T)^T` as MatMul's kernel
  does for few rows (OpenBLAS: 258 us through the transposed view, 156 us swapped, for
  [32, 1024] x [1024, 256], one thread), without MatMul's copy back to C order: the result
  is a transposed (Fortran-ordered) array, which every kernel reads as any strided array.

Values differ from the unrewritten graph only by summation order (the two halves of each dot
product are summed separately): within float32 tolerance. Users never build these ops; they
have no gradients.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["INPUT_PRODUCTS", "STATE_PRODUCT", "INPUT_PRODUCTS_GRAD", "STATE_PRODUCT_GRAD",
           "INPUT_PRODUCTS_GRAD_STACKED"]

INPUT_PRODUCTS = "_InputProducts"
STATE_PRODUCT = "_StateProduct"
INPUT_PRODUCTS_GRAD = "_InputProductsGrad"
STATE_PRODUCT_GRAD = "_StateProductGrad"
INPUT_PRODUCTS_GRAD_STACKED = "_InputProductsGradStacked"

InputProducts = define_op(
    INPUT_PRODUCTS, inputs=["xs: N * T", "kernel: T", "bias: T"],
    outputs=["kernel_rows: T", "parts: N * T"],
    attrs=["N: int >= 1", "T: {float32, float64}"], differentiable=False)

StateProduct = define_op(
    STATE_PRODUCT, inputs=["h: T", "kernel: T", "partial: T"], outputs=["gates: T"],
    attrs=["T: {float32, float64}"], differentiable=False)

InputProductsGrad = define_op(
    INPUT_PRODUCTS_GRAD, inputs=["grads: N * T", "kernel_rows: T"],
    outputs=["parts: N * T"], attrs=["N: int >= 1", "T: {float32, float64}"],
    differentiable=False)

InputProductsGradStacked = define_op(
    INPUT_PRODUCTS_GRAD_STACKED, inputs=["stacked: T", "kernel_rows: T"],
    outputs=["parts: N * T"], attrs=["N: int >= 1", "T: {float32, float64}"],
    differentiable=False)


StateProductGrad = define_op(
    STATE_PRODUCT_GRAD, inputs=["grad: T", "kernel: T"], outputs=["state_grad: T"],
    attrs=["width: int >= 0", "T: {float32, float64}"], differentiable=False)


def _error(op: str, message: str):
    return errors.InvalidArgumentError(None, None, f"{op}: {message}")


def _matrix(op: str, name: str, value: np.ndarray) -> None:
    if value.ndim != 2:
        raise _error(op, f"{name} must be a matrix, got shape {list(value.shape)}")


# -- _InputProducts ---------------------------------------------------------------------------

@InputProducts.shape_fn
def _input_products_shape(xs, kernel, bias, *, N):
    kernel = kernel.with_rank(2)
    width = None
    for x in xs:
        x = x.with_rank(2)
        width = x._dim_list[1] if width is None else width
    units = kernel._dim_list[1]
    rows = TensorShape([width, units])
    return [rows, [TensorShape([x.with_rank(2)._dim_list[0], units]) for x in xs]]


def input_products(xs, kernel, bias):
    """The kernel of `_InputProducts`: (kernel[:width] copied, the N row blocks)."""
    for x in xs:
        _matrix(INPUT_PRODUCTS, "x", x)
    _matrix(INPUT_PRODUCTS, "kernel", kernel)
    width = xs[0].shape[1]
    if any(x.shape[1] != width for x in xs) or width > kernel.shape[0]:
        raise _error(INPUT_PRODUCTS, f"inputs of shapes {[list(x.shape) for x in xs]} do not "
                                     f"match a kernel of shape {list(kernel.shape)}")
    if bias.shape != (kernel.shape[1],):
        raise _error(INPUT_PRODUCTS, f"bias of shape {list(bias.shape)} does not match "
                                     f"{kernel.shape[1]} units")
    rows = np.array(kernel[:width])
    product = np.matmul(np.concatenate(xs, 0) if len(xs) > 1 else xs[0], rows)
    product += bias
    bounds = np.cumsum([x.shape[0] for x in xs])[:-1]
    return (rows, *np.split(product, bounds, 0))


InputProducts.kernel(lambda *args: input_products(args[:-2], args[-2], args[-1]))


# -- _StateProduct ----------------------------------------------------------------------------

@StateProduct.shape_fn
def _state_product_shape(h, kernel, partial):
    h, kernel = h.with_rank(2), kernel.with_rank(2)
    return partial.with_rank(2).merge_with(TensorShape([h._dim_list[0], kernel._dim_list[1]]))


def state_product(h, kernel, partial):
    """The kernel of `_StateProduct`: `h @ kernel[-h.shape[1]:] + partial` (one new buffer)."""
    for name, value in (("h", h), ("kernel", kernel), ("partial", partial)):
        _matrix(STATE_PRODUCT, name, value)
    width = h.shape[1]
    if width > kernel.shape[0] or partial.shape != (h.shape[0], kernel.shape[1]):
        raise _error(STATE_PRODUCT, f"h of shape {list(h.shape)}, kernel of shape "
                                    f"{list(kernel.shape)} and partial gates of shape "
                                    f"{list(partial.shape)} do not match")
    gates = np.matmul(h, kernel[kernel.shape[0] - width:])
    gates += partial
    return gates


StateProduct.kernel(state_product)


# -- _InputProductsGrad -----------------------------------------------------------------------

@InputProductsGrad.shape_fn
def _input_products_grad_shape(grads, kernel_rows, *, N):
    width = kernel_rows.with_rank(2)._dim_list[0]
    return [[TensorShape([g.with_rank(2)._dim_list[0], width]) for g in grads]]


def input_products_grad(grads, kernel_rows):
    """The kernel of `_InputProductsGrad`: `grad_t @ kernel_rows^T` for every t, as one
    product over the stacked rows."""
    for g in grads:
        _matrix(INPUT_PRODUCTS_GRAD, "grad", g)
    _matrix(INPUT_PRODUCTS_GRAD, "kernel_rows", kernel_rows)
    if any(g.shape[1] != kernel_rows.shape[1] for g in grads):
        raise _error(INPUT_PRODUCTS_GRAD, f"gradients of shapes {[list(g.shape) for g in grads]}"
                                          f" do not match kernel rows of shape "
                                          f"{list(kernel_rows.shape)}")
    stacked = np.concatenate(grads, 0) if len(grads) > 1 else grads[0]
    product = np.matmul(stacked, kernel_rows.T)
    bounds = np.cumsum([g.shape[0] for g in grads])[:-1]
    parts = np.split(product, bounds, 0)
    return parts[0] if len(parts) == 1 else tuple(parts)


InputProductsGrad.kernel(lambda *args: input_products_grad(args[:-1], args[-1]))


@InputProductsGradStacked.shape_fn
def _input_products_grad_stacked_shape(stacked, kernel_rows, *, N):
    width = kernel_rows.with_rank(2)._dim_list[0]
    rows = stacked.with_rank(2)._dim_list[0]
    if rows is not None and rows % N:
        raise ValueError(f"{INPUT_PRODUCTS_GRAD_STACKED}: {rows} rows do not split into {N}")
    return [[TensorShape([None if rows is None else rows // N, width])] * N]


@InputProductsGradStacked.kernel
def _input_products_grad_stacked(stacked, kernel_rows, *, N):
    """`stacked @ kernel_rows^T` split into `N` parts of equal rows (`input_products_grad` on
    the gradients a ConcatV2 already stacked: the same product)."""
    _matrix(INPUT_PRODUCTS_GRAD_STACKED, "stacked", stacked)
    _matrix(INPUT_PRODUCTS_GRAD_STACKED, "kernel_rows", kernel_rows)
    if stacked.shape[0] % N or stacked.shape[1] != kernel_rows.shape[1]:
        raise _error(INPUT_PRODUCTS_GRAD_STACKED,
                     f"stacked gradients of shape {list(stacked.shape)} do not split into {N} "
                     f"steps or do not match kernel rows of shape {list(kernel_rows.shape)}")
    parts = np.split(np.matmul(stacked, kernel_rows.T), N, 0)
    return parts[0] if N == 1 else tuple(parts)


# -- _StateProductGrad ------------------------------------------------------------------------

@StateProductGrad.shape_fn
def _state_product_grad_shape(grad, kernel, *, width):
    rows = kernel.with_rank(2)._dim_list[0]
    return TensorShape([grad.with_rank(2)._dim_list[0], None if rows is None else rows - width])


def state_product_grad(grad, kernel, width: int):
    """The kernel of `_StateProductGrad`: `grad @ kernel[width:]^T`, a transposed array."""
    _matrix(STATE_PRODUCT_GRAD, "grad", grad)
    _matrix(STATE_PRODUCT_GRAD, "kernel", kernel)
    if width > kernel.shape[0] or grad.shape[1] != kernel.shape[1]:
        raise _error(STATE_PRODUCT_GRAD, f"a gradient of shape {list(grad.shape)} does not "
                                         f"match a kernel of shape {list(kernel.shape)} "
                                         f"(input width {width})")
    return np.matmul(kernel[width:], grad.T).T


@StateProductGrad.kernel(factory=True)
def _state_product_grad_kernel(width):
    return lambda grad, kernel: state_product_grad(grad, kernel, width)
