"""Update ops of the optimizers (TF's `training_ops`): in-place NumPy updates of variables.

Each `Apply*` op takes its variable and slots by reference and updates their buffers in place
(so readers of the variable alias the new value, as in TF1) and outputs the variable's ref.
`SparseApply*` ops update only the rows in `indices`; the optimizer deduplicates indices first
(summing their gradients), so the kernels use vectorised fancy indexing.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.op_def import define_op
from tensorflux.lib.numerics import intra_op, update_jit

_FLOATS = "{float16, bfloat16, float32, float64, complex64, complex128}"
_INDICES = "Tindices: {int32, int64}"


def _define(name, inputs, sparse=False, extra_attrs=()):
    specs = []
    for item in inputs:
        if item.startswith("*"):
            specs.append(f"{item[1:]}: Ref(T)")
        elif item == "indices":
            specs.append("indices: Tindices")
        else:
            specs.append(f"{item}: T")
    attrs = [f"T: {_FLOATS}", "use_locking: bool = False", *extra_attrs]
    if sparse:
        attrs.append(_INDICES)
    op = define_op(name, inputs=specs, outputs=["out: Ref(T)"], attrs=attrs, stateful=True,
                   differentiable=False)

    @op.shape_fn
    def _shape(var, *rest):
        return var

    return op


def _bufs(*refs):
    return [r.read() for r in refs]


# -- gradient descent -----------------------------------------------------------------------

ApplyGradientDescent = _define("ApplyGradientDescent", ["*var", "alpha", "delta"])


# Updates of at least this many elements go in cache-sized row ranges, on the intra-op helpers
# when the budget gives the kernel more than one thread (the product split under load, BLAS's
# thread count on a quiet machine): one pass over memory instead of two.
_CHUNKED_UPDATE_ELEMENTS = 1 << 18
_UPDATE_CHUNK_ELEMENTS = 1 << 16


@ApplyGradientDescent.kernel
def _apply_gradient_descent(var, alpha, delta):
    buf = var.read()
    compiled = update_jit.supports(buf, delta)
    if buf.size >= _CHUNKED_UPDATE_ELEMENTS and delta.shape == buf.shape and \
            buf.flags.c_contiguous and delta.dtype == buf.dtype:
        # The same `alpha * delta` products and differences, per range (equal values).
        flat, step = buf.reshape(-1), delta.reshape(-1)
        ranges = intra_op.balanced_parts(flat.size, flat.size // _UPDATE_CHUNK_ELEMENTS)

        def update(i: int) -> None:
            lo, hi = ranges[i]
            if compiled:
                update_jit.gradient_descent(flat[lo:hi], alpha, step[lo:hi])
            else:
                np.subtract(flat[lo:hi], alpha * step[lo:hi], out=flat[lo:hi])

        # On the product split's helpers under load, on BLAS's threads when cores are free.
        run = intra_op.run_parts if intra_op.splits() > 1 else intra_op.run_elementwise
        run(update, len(ranges))
        return var
    if compiled:
        update_jit.gradient_descent(buf, alpha, delta)
    else:
        buf -= alpha * delta
    return var


ApplyProximalGradientDescent = _define("ApplyProximalGradientDescent",
                                       ["*var", "alpha", "l1", "l2", "delta"])


def _proximal(prox, lr, l1, l2):
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0) / (1 + lr * l2)
    return prox / (1 + lr * l2)


@ApplyProximalGradientDescent.kernel
def _apply_proximal_gd(var, alpha, l1, l2, delta):
    buf = var.read()
    buf[...] = _proximal(buf - alpha * delta, alpha, l1, l2)
    return var


# -- momentum -------------------------------------------------------------------------------

ApplyMomentum = _define("ApplyMomentum", ["*var", "*accum", "lr", "grad", "momentum"],
                        extra_attrs=["use_nesterov: bool = False"])


@ApplyMomentum.kernel
def _apply_momentum(var, accum, lr, grad, momentum, *, use_nesterov):
    buf, acc = _bufs(var, accum)
    if update_jit.supports(buf, acc, grad):
        update_jit.momentum(buf, acc, lr, grad, momentum, use_nesterov)
        return var
    acc *= momentum
    acc += grad
    if use_nesterov:
        buf -= lr * (grad + momentum * acc)
    else:
        buf -= lr * acc
    return var


SparseApplyMomentum = _define("SparseApplyMomentum",
                              ["*var", "*accum", "lr", "grad", "indices", "momentum"],
                              sparse=True, extra_attrs=["use_nesterov: bool = False"])


@SparseApplyMomentum.kernel
def _sparse_apply_momentum(var, accum, lr, grad, indices, momentum, *, use_nesterov):
    buf, acc = _bufs(var, accum)
    rows = acc[indices] * momentum + grad
    acc[indices] = rows
    if use_nesterov:
        buf[indices] -= lr * (grad + momentum * rows)
    else:
        buf[indices] -= lr * rows
    return var


# -- adagrad --------------------------------------------------------------------------------

ApplyAdagrad = _define("ApplyAdagrad", ["*var", "*accum", "lr", "grad"],
                       extra_attrs=["update_slots: bool = True"])


@ApplyAdagrad.kernel
def _apply_adagrad(var, accum, lr, grad, *, update_slots):
    buf, acc = _bufs(var, accum)
    if update_slots:
        acc += grad * grad
    buf -= lr * grad / np.sqrt(acc)
    return var


SparseApplyAdagrad = _define("SparseApplyAdagrad", ["*var", "*accum", "lr", "grad", "indices"],
                             sparse=True, extra_attrs=["update_slots: bool = True"])


@SparseApplyAdagrad.kernel
def _sparse_apply_adagrad(var, accum, lr, grad, indices, *, update_slots):
    buf, acc = _bufs(var, accum)
    rows = acc[indices] + grad * grad if update_slots else acc[indices]
    acc[indices] = rows
    buf[indices] -= lr * grad / np.sqrt(rows)
    return var


ApplyProximalAdagrad = _define("ApplyProximalAdagrad", ["*var", "*accum", "lr", "l1", "l2",
                                                        "grad"])


@ApplyProximalAdagrad.kernel
def _apply_proximal_adagrad(var, accum, lr, l1, l2, grad):
    buf, acc = _bufs(var, accum)
    acc += grad * grad
    step = lr / np.sqrt(acc)
    buf[...] = _proximal(buf - step * grad, step, l1, l2)
    return var


SparseApplyProximalAdagrad = _define("SparseApplyProximalAdagrad",
                                     ["*var", "*accum", "lr", "l1", "l2", "grad", "indices"],
                                     sparse=True)


@SparseApplyProximalAdagrad.kernel
def _sparse_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices):
    buf, acc = _bufs(var, accum)
    rows = acc[indices] + grad * grad
    acc[indices] = rows
    step = lr / np.sqrt(rows)
    buf[indices] = _proximal(buf[indices] - step * grad, step, l1, l2)
    return var


# -- adadelta -------------------------------------------------------------------------------

ApplyAdadelta = _define("ApplyAdadelta", ["*var", "*accum", "*accum_update", "lr", "rho",
                                          "epsilon", "grad"])


@ApplyAdadelta.kernel
def _apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad):
    buf, acc, acc_up = _bufs(var, accum, accum_update)
    acc[...] = acc * rho + grad * grad * (1 - rho)
    update = np.sqrt(acc_up + epsilon) / np.sqrt(acc + epsilon) * grad
    acc_up[...] = acc_up * rho + update * update * (1 - rho)
    buf -= lr * update
    return var


SparseApplyAdadelta = _define("SparseApplyAdadelta",
                              ["*var", "*accum", "*accum_update", "lr", "rho", "epsilon",
                               "grad", "indices"], sparse=True)


@SparseApplyAdadelta.kernel
def _sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices):
    buf, acc, acc_up = _bufs(var, accum, accum_update)
    a = acc[indices] * rho + grad * grad * (1 - rho)
    acc[indices] = a
    u = acc_up[indices]
    update = np.sqrt(u + epsilon) / np.sqrt(a + epsilon) * grad
    acc_up[indices] = u * rho + update * update * (1 - rho)
    buf[indices] -= lr * update
    return var


# -- rmsprop --------------------------------------------------------------------------------

ApplyRMSProp = _define("ApplyRMSProp", ["*var", "*ms", "*mom", "lr", "rho", "momentum",
                                        "epsilon", "grad"])


@ApplyRMSProp.kernel
def _apply_rmsprop(var, ms, mom, lr, rho, momentum, epsilon, grad):
    buf, ms_buf, mom_buf = _bufs(var, ms, mom)
    ms_buf += (grad * grad - ms_buf) * (1 - rho)
    mom_buf[...] = mom_buf * momentum + lr * grad / np.sqrt(ms_buf + epsilon)
    buf -= mom_buf
    return var


ApplyCenteredRMSProp = _define("ApplyCenteredRMSProp",
                               ["*var", "*mg", "*ms", "*mom", "lr", "rho", "momentum",
                                "epsilon", "grad"])


@ApplyCenteredRMSProp.kernel
def _apply_centered_rmsprop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
    buf, mg_buf, ms_buf, mom_buf = _bufs(var, mg, ms, mom)
    ms_buf += (grad * grad - ms_buf) * (1 - rho)
    mg_buf += (grad - mg_buf) * (1 - rho)
    denominator = ms_buf - mg_buf * mg_buf + epsilon
    mom_buf[...] = mom_buf * momentum + lr * grad / np.sqrt(denominator)
    buf -= mom_buf
    return var


SparseApplyRMSProp = _define("SparseApplyRMSProp",
                             ["*var", "*ms", "*mom", "lr", "rho", "momentum", "epsilon",
                              "grad", "indices"], sparse=True)


@SparseApplyRMSProp.kernel
def _sparse_apply_rmsprop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices):
    buf, ms_buf, mom_buf = _bufs(var, ms, mom)
    m = ms_buf[indices]
    m = m + (grad * grad - m) * (1 - rho)
    ms_buf[indices] = m
    moment = mom_buf[indices] * momentum + lr * grad / np.sqrt(m + epsilon)
    mom_buf[indices] = moment
    buf[indices] -= moment
    return var


SparseApplyCenteredRMSProp = _define("SparseApplyCenteredRMSProp",
                                     ["*var", "*mg", "*ms", "*mom", "lr", "rho", "momentum",
                                      "epsilon", "grad", "indices"], sparse=True)


@SparseApplyCenteredRMSProp.kernel
def _sparse_apply_centered_rmsprop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                                   indices):
    buf, mg_buf, ms_buf, mom_buf = _bufs(var, mg, ms, mom)
    m = ms_buf[indices]
    m = m + (grad * grad - m) * (1 - rho)
    ms_buf[indices] = m
    g = mg_buf[indices]
    g = g + (grad - g) * (1 - rho)
    mg_buf[indices] = g
    moment = mom_buf[indices] * momentum + lr * grad / np.sqrt(m - g * g + epsilon)
    mom_buf[indices] = moment
    buf[indices] -= moment
    return var


# -- adam -----------------------------------------------------------------------------------

ApplyAdam = _define("ApplyAdam", ["*var", "*m", "*v", "beta1_power", "beta2_power", "lr",
                                  "beta1", "beta2", "epsilon", "grad"],
                    extra_attrs=["use_nesterov: bool = False"])


@ApplyAdam.kernel
def _apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, *,
                use_nesterov):
    buf, m_buf, v_buf = _bufs(var, m, v)
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    if update_jit.supports(buf, m_buf, v_buf, grad):
        update_jit.adam(buf, m_buf, v_buf, lr_t, beta1, beta2, epsilon, grad, use_nesterov)
        return var
    m_buf += (grad - m_buf) * (1 - beta1)
    v_buf += (grad * grad - v_buf) * (1 - beta2)
    if use_nesterov:
        buf -= (lr_t * (m_buf * beta1 + (1 - beta1) * grad)) / (np.sqrt(v_buf) + epsilon)
    else:
        buf -= (lr_t * m_buf) / (np.sqrt(v_buf) + epsilon)
    return var


# -- ftrl -----------------------------------------------------------------------------------

ApplyFtrlV2 = _define("ApplyFtrlV2", ["*var", "*accum", "*linear", "grad", "lr", "l1", "l2",
                                      "l2_shrinkage", "lr_power"])
ApplyFtrl = _define("ApplyFtrl", ["*var", "*accum", "*linear", "grad", "lr", "l1", "l2",
                                  "lr_power"])
SparseApplyFtrlV2 = _define("SparseApplyFtrlV2",
                            ["*var", "*accum", "*linear", "grad", "indices", "lr", "l1", "l2",
                             "l2_shrinkage", "lr_power"], sparse=True)
SparseApplyFtrl = _define("SparseApplyFtrl",
                          ["*var", "*accum", "*linear", "grad", "indices", "lr", "l1", "l2",
                           "lr_power"], sparse=True)


def _ftrl_rows(w, acc, lin, grad, lr, l1, l2, l2_shrinkage, lr_power):
    """FTRL-proximal for rows; returns the new (w, accum, linear)."""
    shrunk = grad + 2 * l2_shrinkage * w if l2_shrinkage else grad
    new_acc = acc + grad * grad
    sigma = (np.power(new_acc, -lr_power) - np.power(acc, -lr_power)) / lr
    new_lin = lin + shrunk - sigma * w
    quadratic = np.power(new_acc, -lr_power) / lr + 2 * l2
    new_w = np.where(np.abs(new_lin) > l1, (np.sign(new_lin) * l1 - new_lin) / quadratic, 0)
    return new_w.astype(w.dtype, copy=False), new_acc, new_lin


@ApplyFtrlV2.kernel
def _apply_ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power):
    buf, acc, lin = _bufs(var, accum, linear)
    buf[...], acc[...], lin[...] = _ftrl_rows(buf, acc, lin, grad, lr, l1, l2, l2_shrinkage,
                                              lr_power)
    return var


@ApplyFtrl.kernel
def _apply_ftrl(var, accum, linear, grad, lr, l1, l2, lr_power):
    buf, acc, lin = _bufs(var, accum, linear)
    buf[...], acc[...], lin[...] = _ftrl_rows(buf, acc, lin, grad, lr, l1, l2, 0, lr_power)
    return var


@SparseApplyFtrlV2.kernel
def _sparse_apply_ftrl_v2(var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage,
                          lr_power):
    buf, acc, lin = _bufs(var, accum, linear)
    buf[indices], acc[indices], lin[indices] = _ftrl_rows(
        buf[indices], acc[indices], lin[indices], grad, lr, l1, l2, l2_shrinkage, lr_power)
    return var


@SparseApplyFtrl.kernel
def _sparse_apply_ftrl(var, accum, linear, grad, indices, lr, l1, l2, lr_power):
    buf, acc, lin = _bufs(var, accum, linear)
    buf[indices], acc[indices], lin[indices] = _ftrl_rows(
        buf[indices], acc[indices], lin[indices], grad, lr, l1, l2, 0, lr_power)
    return var
