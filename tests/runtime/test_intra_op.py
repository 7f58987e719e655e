"""Intra-op split of large matrix products (lib/numerics/intra_op.py) and the policy of the
thread budget that turns it on only when BLAS runs fewer threads than the budget allows."""

import threading

import numpy as np
import pytest

from tensorflux.lib.numerics import conv2d, intra_op
from tensorflux.lib.numerics.window import Window2D
from tensorflux.runtime import thread_budget as tb


@pytest.fixture
def split_two():
    pool = tb.KernelPool(1, "test-intra-op", counted=False)
    used = []

    def submit(fn):
        ran = pool.try_run(fn)
        used.append(ran)
        return ran

    intra_op.configure(2, submit)
    yield used
    intra_op.configure(1)
    pool.close()


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


def test_large_product_is_split_and_equals_numpy(split_two):
    a, b = _rand(256, 300), _rand(300, 200, seed=1)
    got = intra_op.matmul(a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)
    assert split_two == [True]
    with pytest.raises(ValueError):
        intra_op.matmul(a, b, out=np.empty((300, 200), np.float32))
    out = np.empty((200, 256), np.float32)
    assert intra_op.matmul(b.T, a.T, out=out) is out  # transposed (strided) views
    np.testing.assert_allclose(out, (a @ b).T, rtol=1e-5, atol=1e-4)


def test_small_product_is_not_split(split_two):
    a, b = _rand(8, 16), _rand(16, 8, seed=1)
    np.testing.assert_allclose(intra_op.matmul(a, b), a @ b, rtol=1e-6)
    assert split_two == []


def test_refusing_pool_runs_every_chunk_inline():
    intra_op.configure(3, lambda fn: False)
    try:
        a, b = _rand(512, 256), _rand(256, 128, seed=1)
        np.testing.assert_allclose(intra_op.matmul(a, b), a @ b, rtol=1e-5, atol=1e-4)
    finally:
        intra_op.configure(1)


def test_chunk_error_reaches_the_caller():
    threads = []

    def submit(fn):
        t = threading.Thread(target=fn)
        threads.append(t)
        t.start()
        return True

    intra_op.configure(2, submit)
    try:
        a = _rand(512, 256)
        with pytest.raises(ValueError):
            intra_op.matmul(a, _rand(255, 64))  # inner sizes differ: each chunk fails
    finally:
        intra_op.configure(1)
        for t in threads:
            t.join(5.0)


def test_conv2d_with_split_equals_unsplit(split_two):
    x, w = _rand(8, 16, 16, 16), _rand(3, 3, 16, 32, seed=1)
    geo = Window2D(data_format="NHWC", padding="SAME")
    split = conv2d.conv2d(x, w, geo)
    intra_op.configure(1)
    np.testing.assert_allclose(split, conv2d.conv2d(x, w, geo), rtol=1e-5, atol=1e-4)


def test_splits_policy():
    assert tb.intra_op_splits(2, 2, blas=1) == 2  # loaded: BLAS has 1 thread
    assert tb.intra_op_splits(2, 2, blas=2) == 1  # quiet: BLAS uses the cores itself
    assert tb.intra_op_splits(2, 2, blas=1, concurrent=2) == 1  # inter-op kernels share
    assert tb.intra_op_splits(1, 4, blas=1) == 1  # intra_op_parallelism_threads=1
    assert tb.intra_op_splits(4, 4, blas=2) == 2


class _FakeBlas:
    def set(self, threads):
        pass

    def restore(self):
        pass


def test_process_splits_under_load_and_resets_on_release():
    load = [2.0]
    process = tb._Process(probe=lambda cores: load[0], blas=_FakeBlas())
    budget = tb.ThreadBudget(2, 2, 2)
    try:
        process.acquire(budget)
        assert process.threads == 1 and intra_op.splits() == 2
        assert intra_op.elementwise_splits() == 1  # under load they stay inline
        process.kernel_started()  # an inter-op kernel runs too: no split
        assert intra_op.splits() == 1
        process.kernel_finished()
        assert intra_op.splits() == 2
        load[0] = 0.0
        process.next_probe = 0.0
        process.refresh(budget)
        process.next_probe = 0.0
        process.refresh(budget)
        assert process.threads == 2 and intra_op.splits() == 1
        assert intra_op.elementwise_splits() == 2  # kernels without BLAS use BLAS's threads
        load[0] = 2.0
        process.next_probe = 0.0
        process.refresh(budget)
        assert intra_op.splits() == 2
    finally:
        process.release()
    assert intra_op.splits() == 1 and intra_op.elementwise_splits() == 1
    process.intra_pool.close()


def test_one_thread_budget_never_splits_elementwise_kernels():
    process = tb._Process(probe=lambda cores: 0.0, blas=_FakeBlas())
    try:
        process.acquire(tb.ThreadBudget(2, 1, 2))  # intra_op_parallelism_threads=1
        assert intra_op.splits() == 1 and intra_op.elementwise_splits() == 1
    finally:
        process.release()


@pytest.fixture
def elementwise_two():
    """A quiet machine: products unsplit (BLAS has the threads), elementwise kernels on 2."""
    pool = tb.KernelPool(1, "test-intra-op", counted=False)
    used = []

    def submit(fn):
        ran = pool.try_run(fn)
        used.append(ran)
        return ran

    intra_op.configure(1, submit, elementwise=2)
    yield used
    intra_op.configure(1)
    pool.close()


def test_elementwise_parts_run_on_helpers_while_products_stay_whole(elementwise_two):
    assert intra_op.splits() == 1 and intra_op.elementwise_splits() == 2
    a, b = _rand(256, 300), _rand(300, 200, seed=1)
    np.testing.assert_array_equal(intra_op.matmul(a, b), a @ b)
    intra_op.run_parts(lambda i: None, 4)
    assert elementwise_two == []  # run_parts follows the product split: inline
    done = []
    intra_op.run_elementwise(done.append, 5)
    assert sorted(done) == [0, 1, 2, 3, 4] and elementwise_two == [True]
    with pytest.raises(ZeroDivisionError):
        intra_op.run_elementwise(lambda i: 1 // (i - 3), 6)


def test_split_xent_and_epilogue_equal_inline(elementwise_two):
    from tensorflux.lib.numerics import epilogue_jit, jit
    from tensorflux.ops.nn import core
    rng = np.random.default_rng(4)
    logits = _rand(70, 9000, seed=2)
    logits[3, 5], logits[9, :] = np.nan, -np.inf
    labels = rng.integers(0, 9000, 70)
    loss, backprop = core._sparse_softmax_xent_kernel(logits, labels)
    y = _rand(300, 1000, seed=3)
    bias = _rand(1000, seed=4)
    split_y = y.copy()
    if jit.available():
        epilogue_jit.bias_activation(split_y, bias, "Relu")
    assert elementwise_two  # both ran on the helper
    intra_op.configure(1)
    with np.errstate(all="ignore"):
        want_loss, want_backprop = core._sparse_softmax_xent_kernel(logits, labels)
    np.testing.assert_array_equal(loss, want_loss)
    np.testing.assert_array_equal(backprop, want_backprop)
    if jit.available():
        epilogue_jit.bias_activation(y, bias, "Relu")
        np.testing.assert_array_equal(split_y, y)
