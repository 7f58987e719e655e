"""Optimizer update ops against NumPy transcriptions of TensorFlow's update formulas."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.RandomState(0)
VAR = RNG.uniform(-1, 1, (4, 3))
GRAD = RNG.uniform(-1, 1, (4, 3))
SLOT = RNG.uniform(0.1, 1, (4, 3))
SLOT2 = RNG.uniform(0.1, 1, (4, 3))
SLOT3 = RNG.uniform(0.1, 1, (4, 3))
LR, RHO, MOM, EPS, L1, L2 = 0.1, 0.9, 0.8, 1e-3, 0.05, 0.02


def _prox(prox, lr, l1, l2):
    return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0) / (1 + lr * l2)


def _ref_gd(v, g):
    return [v - LR * g]


def _ref_momentum(v, a, g, nesterov=False):
    a = a * MOM + g
    return [v - LR * (g + MOM * a) if nesterov else v - LR * a, a]


def _ref_adagrad(v, a, g):
    a = a + g * g
    return [v - LR * g / np.sqrt(a), a]


def _ref_adadelta(v, a, au, g):
    a = a * RHO + g * g * (1 - RHO)
    update = np.sqrt(au + EPS) / np.sqrt(a + EPS) * g
    au = au * RHO + update * update * (1 - RHO)
    return [v - LR * update, a, au]


def _ref_rmsprop(v, ms, mom, g):
    ms = ms + (g * g - ms) * (1 - RHO)
    mom = mom * MOM + LR * g / np.sqrt(ms + EPS)
    return [v - mom, ms, mom]


def _ref_centered(v, mg, ms, mom, g):
    ms = ms + (g * g - ms) * (1 - RHO)
    mg = mg + (g - mg) * (1 - RHO)
    mom = mom * MOM + LR * g / np.sqrt(ms - mg * mg + EPS)
    return [v - mom, mg, ms, mom]


def _ref_adam(v, m, s, g, b1p=0.9, b2p=0.999, b1=0.9, b2=0.999):
    lr_t = LR * np.sqrt(1 - b2p) / (1 - b1p)
    m = m + (g - m) * (1 - b1)
    s = s + (g * g - s) * (1 - b2)
    return [v - lr_t * m / (np.sqrt(s) + EPS), m, s]


def _ref_ftrl(v, acc, lin, g, power=-0.5, shrinkage=0.0):
    shrunk = g + 2 * shrinkage * v
    new_acc = acc + g * g
    sigma = (new_acc ** -power - acc ** -power) / LR
    lin = lin + shrunk - sigma * v
    quadratic = new_acc ** -power / LR + 2 * L2
    v = np.where(np.abs(lin) > L1, (np.sign(lin) * L1 - lin) / quadratic, 0.0)
    return [v, new_acc, lin]


def _ref_proximal_adagrad(v, a, g):
    a = a + g * g
    step = LR / np.sqrt(a)
    return [_prox(v - step * g, step, L1, L2), a]


def _ref_proximal_gd(v, g):
    return [_prox(v - LR * g, LR, L1, L2)]


# (op, variables' initial values, scalar args builder, reference)
DENSE = [
    ("ApplyGradientDescent", [VAR], lambda: [LR, GRAD], lambda: _ref_gd(VAR, GRAD)),
    ("ApplyProximalGradientDescent", [VAR], lambda: [LR, L1, L2, GRAD],
     lambda: _ref_proximal_gd(VAR, GRAD)),
    ("ApplyMomentum", [VAR, SLOT], lambda: [LR, GRAD, MOM],
     lambda: _ref_momentum(VAR, SLOT, GRAD)),
    ("ApplyAdagrad", [VAR, SLOT], lambda: [LR, GRAD], lambda: _ref_adagrad(VAR, SLOT, GRAD)),
    ("ApplyProximalAdagrad", [VAR, SLOT], lambda: [LR, L1, L2, GRAD],
     lambda: _ref_proximal_adagrad(VAR, SLOT, GRAD)),
    ("ApplyAdadelta", [VAR, SLOT, SLOT2], lambda: [LR, RHO, EPS, GRAD],
     lambda: _ref_adadelta(VAR, SLOT, SLOT2, GRAD)),
    ("ApplyRMSProp", [VAR, SLOT, SLOT2], lambda: [LR, RHO, MOM, EPS, GRAD],
     lambda: _ref_rmsprop(VAR, SLOT, SLOT2, GRAD)),
    ("ApplyCenteredRMSProp", [VAR, SLOT * 0.1, SLOT, SLOT2], lambda: [LR, RHO, MOM, EPS, GRAD],
     lambda: _ref_centered(VAR, SLOT * 0.1, SLOT, SLOT2, GRAD)),
    ("ApplyAdam", [VAR, SLOT, SLOT2], lambda: [0.9, 0.999, LR, 0.9, 0.999, EPS, GRAD],
     lambda: _ref_adam(VAR, SLOT, SLOT2, GRAD)),
    ("ApplyFtrl", [VAR, SLOT, SLOT2], lambda: [GRAD, LR, L1, L2, -0.5],
     lambda: _ref_ftrl(VAR, SLOT, SLOT2, GRAD)),
    ("ApplyFtrlV2", [VAR, SLOT, SLOT2], lambda: [GRAD, LR, L1, L2, 0.01, -0.5],
     lambda: _ref_ftrl(VAR, SLOT, SLOT2, GRAD, shrinkage=0.01)),
]

INDICES = np.array([2, 0])


def _sparse_ref(reference, initial):
    """Applies a dense reference to the rows in INDICES only."""
    rows = [v[INDICES] for v in initial]
    updated = reference(*rows, GRAD[INDICES])
    result = [v.copy() for v in initial]
    for full, part in zip(result, updated):
        full[INDICES] = part
    return result


SPARSE = [
    ("SparseApplyMomentum", [VAR, SLOT], lambda g, i: [LR, g, i, MOM],
     lambda v, a, g: _ref_momentum(v, a, g)),
    ("SparseApplyAdagrad", [VAR, SLOT], lambda g, i: [LR, g, i], _ref_adagrad),
    ("SparseApplyProximalAdagrad", [VAR, SLOT], lambda g, i: [LR, L1, L2, g, i],
     _ref_proximal_adagrad),
    ("SparseApplyAdadelta", [VAR, SLOT, SLOT2], lambda g, i: [LR, RHO, EPS, g, i],
     _ref_adadelta),
    ("SparseApplyRMSProp", [VAR, SLOT, SLOT2], lambda g, i: [LR, RHO, MOM, EPS, g, i],
     _ref_rmsprop),
    ("SparseApplyCenteredRMSProp", [VAR, SLOT * 0.1, SLOT, SLOT2],
     lambda g, i: [LR, RHO, MOM, EPS, g, i], _ref_centered),
    ("SparseApplyFtrl", [VAR, SLOT, SLOT2], lambda g, i: [g, i, LR, L1, L2, -0.5],
     lambda v, a, lin, g: _ref_ftrl(v, a, lin, g)),
    ("SparseApplyFtrlV2", [VAR, SLOT, SLOT2], lambda g, i: [g, i, LR, L1, L2, 0.01, -0.5],
     lambda v, a, lin, g: _ref_ftrl(v, a, lin, g, shrinkage=0.01)),
]

COVERED_OPS = {op for op, *_ in DENSE} | {op for op, *_ in SPARSE}


def _run(op_type, initial, args):
    from tensorflux.framework.op_def import get_op_def

    with tf.Graph().as_default():
        variables = [tf.Variable(v) for v in initial]
        out = get_op_def(op_type)(*variables, *args)
        assert out.dtype == tf.float64_ref and out.shape.as_list() == [4, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(out.op)
            return sess.run(variables)


@pytest.mark.parametrize("op_type,initial,args,reference", DENSE, ids=[d[0] for d in DENSE])
def test_dense_update(op_type, initial, args, reference):
    for got, want in zip(_run(op_type, initial, args()), reference()):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op_type,initial,args,reference", SPARSE, ids=[s[0] for s in SPARSE])
def test_sparse_update_touches_only_given_rows(op_type, initial, args, reference):
    got = _run(op_type, initial, args(GRAD[INDICES], INDICES))
    want = _sparse_ref(reference, initial)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got[0][[1, 3]], VAR[[1, 3]])


def test_update_requires_a_variable():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="mutable"):
            tf.train.GradientDescentOptimizer  # noqa: B018
            from tensorflux.ops.state import training_ops

            training_ops.ApplyGradientDescent(tf.constant(VAR), LR, GRAD)


@pytest.mark.parametrize("shape", [(600, 513), (1 << 18,), (3, 7)])
@pytest.mark.parametrize("splits", [1, 3])
def test_large_gradient_descent_update_in_ranges_equals_one_pass(shape, splits):
    """Large ApplyGradientDescent updates run in row ranges (on the intra-op helpers when the
    split is on): the values are those of `var - alpha * delta` in one pass."""
    from tensorflux.lib.numerics import intra_op
    from tensorflux.ops.state import training_ops
    from tensorflux.runtime import thread_budget

    rng = np.random.RandomState(1)
    var0 = rng.standard_normal(shape).astype(np.float32)
    delta = rng.standard_normal(shape).astype(np.float32)
    alpha = np.float32(0.37)
    pool = thread_budget.KernelPool(2, "test-gd", counted=False)
    with tf.Graph().as_default():
        v = tf.Variable(var0)
        update = training_ops.ApplyGradientDescent(v, alpha, delta)
        with tf.Session() as sess:
            sess.run(v.initializer)
            intra_op.configure(splits, pool.try_run)
            try:
                sess.run(update.op)
            finally:
                intra_op.configure(1)
                pool.close()
            np.testing.assert_array_equal(sess.run(v), var0 - alpha * delta)
