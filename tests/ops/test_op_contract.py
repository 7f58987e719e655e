"""Contracts over the whole op registry.

Every public op has a row in its family's test table (`COVERED_OPS` in tests/ops/test_*.py),
a shape function, and, unless declared not differentiable, a registered gradient with a
finite-difference case (`GRADIENT_CASES`) that this test checks in float64.
"""

import importlib.util
import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework.op_def import GRADIENTS, OP_DEFS

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)


def _load_tables():
    covered, cases = set(), []
    for root, _, files in os.walk(TESTS):
        for name in sorted(files):
            if not (name.startswith("test_") and name.endswith(".py")):
                continue
            path = os.path.join(root, name)
            if path == os.path.abspath(__file__):
                continue
            with open(path) as handle:
                text = handle.read()
            if "COVERED_OPS" not in text and "GRADIENT_CASES" not in text:
                continue
            spec = importlib.util.spec_from_file_location(f"_contract_{name[:-3]}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            covered |= set(getattr(module, "COVERED_OPS", ()))
            cases.extend(getattr(module, "GRADIENT_CASES", ()))
    return covered, cases


COVERED, CASES = _load_tables()
# Gradients that deliberately raise (TF semantics); tested in their family's file instead.
RAISING_GRADIENTS = {"PreventGradient"}


def _package_ops():
    ops = []
    for name, op_def in OP_DEFS.items():
        if name.startswith("_") or TESTS in (op_def.where or ""):
            continue
        ops.append((name, op_def))
    return sorted(ops, key=lambda item: item[0])


def test_every_op_has_a_test_row():
    missing = [name for name, _ in _package_ops() if name not in COVERED]
    assert not missing, f"ops without a row in any COVERED_OPS table: {missing}"


def test_every_op_has_a_shape_function():
    missing = [name for name, op_def in _package_ops() if op_def.shape_rule is None]
    assert not missing, f"ops without a shape function: {missing}"


def test_every_differentiable_op_has_a_gradient_and_a_case():
    with_case = {op for op, _ in CASES}
    no_grad = [name for name, op_def in _package_ops()
               if op_def.differentiable and name not in GRADIENTS]
    assert not no_grad, f"differentiable ops with no registered gradient: {no_grad}"
    no_case = [name for name, _ in _package_ops()
               if GRADIENTS.get(name) is not None and name not in with_case
               and name not in RAISING_GRADIENTS]
    assert not no_case, f"gradients without a GRADIENT_CASES entry: {no_case}"


def _numeric_gradient(sess, loss, x, values, feed, index, eps=1e-6):
    value = np.array(values[index], dtype=np.float64, copy=True)
    flat = value.reshape(-1)
    grad = np.zeros_like(flat)
    for i in range(flat.size):
        original = flat[i]
        flat[i] = original + eps
        up = sess.run(loss, {**feed, x: value})
        flat[i] = original - eps
        down = sess.run(loss, {**feed, x: value})
        flat[i] = original
        grad[i] = (up - down) / (2 * eps)
    return grad.reshape(value.shape)


@pytest.mark.parametrize("op_type,build", CASES, ids=[f"{op}-{i}" for i, (op, _) in
                                                       enumerate(CASES)])
def test_gradient_matches_finite_differences(op_type, build):
    with tf.Graph().as_default():
        y, xs, values = build(tf)
        y = tf.convert_to_tensor(y)
        weights = tf.constant(np.random.RandomState(0).uniform(0.5, 1.5, size=1)[0],
                              y.dtype.base_dtype)
        loss = tf.reduce_sum(y * weights)
        grads = tf.gradients(loss, xs)
        feed = dict(zip(xs, values))
        with tf.Session() as sess:
            analytic = sess.run([g for g in grads if g is not None], feed)
            k = 0
            for i, (x, grad) in enumerate(zip(xs, grads)):
                numeric = _numeric_gradient(sess, loss, x, values, feed, i)
                if grad is None:
                    np.testing.assert_allclose(numeric, 0, atol=1e-6,
                                               err_msg=f"{op_type}: None gradient for input {i}")
                    continue
                value = analytic[k]
                k += 1
                if hasattr(value, "indices"):
                    dense = np.zeros(np.shape(values[i]))
                    np.add.at(dense, value.indices, value.values)
                    value = dense
                np.testing.assert_allclose(value, numeric, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{op_type}: gradient of input {i}")
