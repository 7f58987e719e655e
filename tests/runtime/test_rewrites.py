"""Graph rewrites: each one's effect on the dumped step graph, and unchanged results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.lib.numerics import gemm_update_jit, intra_op, update_jit
from tensorflux.runtime import graph_ir, remapper, rewrites, subgraph

L0 = -1


def _optimize(fetches, feeds=(), options=None, targets=()):
    nodes, fetch_points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                       list(fetches), list(targets))
    before = graph_ir.dump(nodes)
    optimized = rewrites.optimize(nodes, fetch_points, options)
    return before, graph_ir.dump(optimized).splitlines()


def _ops(lines):
    return sorted(line.split(" = ")[1].split("(")[0] for line in lines)


def _run(fetches, feed_dict=None, options=None):
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options)) \
        if options is not None else None
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_cse_merges_equal_and_commuted_expressions(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.placeholder(tf.float32, [2], name="y")
    a = tf.add(x, y, name="a")
    b = tf.add(x, y, name="b")
    c = tf.add(y, x, name="c")
    out = tf.multiply(tf.multiply(a, b, name="ab"), c, name="out")
    _, lines = _optimize([out], [x, y])
    assert _ops(lines) == ["AddV2", "Mul", "Mul", "_Arg", "_Arg"]
    assert any(line.startswith("ab = Mul(a, a)") for line in lines)
    assert any(line.startswith("out = Mul(ab, a)") for line in lines)
    feed = {x: [1.0, 2.0], y: [3.0, -1.0]}
    np.testing.assert_allclose(_run(out, feed), (np.array([4.0, 1.0])) ** 3)


def test_cse_never_merges_stateful_ops(graph):
    r1 = tf.random_uniform([3], seed=1, name="r1")
    r2 = tf.random_uniform([3], seed=1, name="r2")
    total = tf.add(r1, r2, name="total")
    _, lines = _optimize([total])
    assert sum(" = RandomUniform(" in line for line in lines) == 2


def test_cse_keeps_fetched_duplicates(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    a = tf.square(x, name="a")
    b = tf.square(x, name="b")
    _, lines = _optimize([a, b], [x])
    assert sum(" = Square(" in line for line in lines) == 2


def test_constant_folding_replaces_the_constant_subgraph(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    c = tf.add(tf.constant(2.0) * tf.constant(3.0), 1.0, name="c")
    y = tf.multiply(x, c, name="y")
    before, lines = _optimize([y], [x])
    assert _ops(before.splitlines()) == ["AddV2", "Const", "Const", "Const", "Mul", "Mul",
                                         "_Arg"]
    assert _ops(lines) == ["Const", "Mul", "_Arg"]
    folded = [line for line in lines if " = Const(" in line][0]
    assert folded.startswith("c/_folded_0 = Const()") and "array(7." in folded
    assert any(line.startswith("y = Mul(_arg_x_0_0, c/_folded_0)") for line in lines)
    assert _run(y, {x: 2.0}) == 14.0


def test_a_fetched_constant_expression_becomes_a_const_in_place(graph):
    c = tf.add(tf.constant(2), tf.constant(5), name="c")
    _, lines = _optimize([c])
    assert lines == [line for line in lines if line.startswith("c = Const()")]
    assert _run(c) == 7


def test_folding_keeps_control_dependencies_of_the_subgraph(graph):
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [], name="x")
    out = tf.cond(p, lambda: x + tf.constant(2.0) * 3.0, lambda: x - 1.0)
    _, lines = _optimize([out], [p, x])
    folded = [line for line in lines if "_folded_" in line and " = Const(" in line]
    assert len(folded) == 1 and "^cond/switch_t" in folded[0] and "array(6." in folded[0]
    assert _run(out, {p: True, x: 1.0}) == 7.0
    assert _run(out, {p: False, x: 1.0}) == 0.0


def test_folding_respects_the_size_limit(graph):
    big = tf.add(tf.fill([1000], 1.5), 1.0, name="big")
    total = tf.reduce_sum(big, name="total")
    small = tf.OptimizerOptions(opt_level=L0, do_constant_folding=True,
                                max_folded_constant_in_bytes=100)
    _, lines = _optimize([total], options=small)
    assert "Fill" in _ops(lines) and "AddV2" in _ops(lines)
    _, lines = _optimize([total])
    assert _ops(lines) == ["Const"]
    assert _run(total) == 2500.0


def test_folding_leaves_failing_kernels_to_the_step(graph):
    bad = tf.gather(tf.constant([1, 2, 3]), tf.constant(7), name="bad_gather")
    _, lines = _optimize([bad])
    assert any(line.startswith("bad_gather = GatherV2(") for line in lines)
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad_gather"):
        _run(bad)


def test_stateful_ops_are_not_folded(graph):
    noisy = tf.multiply(tf.random_uniform([2], seed=3), tf.constant(2.0), name="noisy")
    _, lines = _optimize([noisy])
    assert "RandomUniform" in _ops(lines) and "Mul" in _ops(lines)
    v = tf.Variable(2.0, name="v")
    read = tf.add(v, 1.0, name="read")
    _, lines = _optimize([read])
    assert "VariableV2" in _ops(lines) and "AddV2" in _ops(lines)


def test_identity_chains_are_removed(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    i1 = tf.identity(x, name="i1")
    i2 = tf.identity(i1, name="i2")
    y = tf.multiply(i2, 2.0, name="y")
    _, lines = _optimize([y], [x])
    assert _ops(lines) == ["Const", "Mul", "_Arg"]
    assert any(line.startswith("y = Mul(_arg_x_0_0, ") for line in lines)
    _, lines = _optimize([y, i2], [x])
    assert any(line.startswith("i2 = Identity(_arg_x_0_0)") for line in lines)
    assert not any(line.startswith("i1 = ") for line in lines)


def test_identities_with_a_role_are_kept(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    first = tf.square(x, name="first")
    with tf.control_dependencies([first]):
        gated = tf.identity(x, name="gated")
    with tf.device("/cpu:0"):
        pinned = tf.identity(first, name="pinned")
    y = tf.add(gated, pinned, name="y")
    _, lines = _optimize([y], [x])
    assert any(line.startswith("gated = Identity(_arg_x_0_0, ^first)") for line in lines)
    assert any(line.startswith("pinned = Identity(first)") for line in lines)


def test_dead_branches_of_a_constant_predicate_are_pruned(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    out = tf.cond(tf.constant(True), lambda: x * 2.0, lambda: tf.square(x) * 3.0)
    before, lines = _optimize([out], [x])
    assert {"Switch", "Merge", "Square"} <= set(_ops(before.splitlines()))
    assert not {"Switch", "Merge", "Square"} & set(_ops(lines))
    assert _run(out, {x: 5.0}) == 10.0
    _, kept = _optimize([out], [x], tf.OptimizerOptions(opt_level=L0))
    assert {"Switch", "Merge", "Square"} <= set(_ops(kept))
    assert _run(out, {x: 5.0}, tf.OptimizerOptions(opt_level=L0)) == 10.0


def test_dead_branch_pruning_takes_the_false_side_too(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    out = tf.cond(tf.constant(False), lambda: x * 2.0, lambda: x - 4.0)
    _, lines = _optimize([out], [x])
    assert not {"Switch", "Merge"} & set(_ops(lines))
    assert _run(out, {x: 5.0}) == 1.0


def test_opt_level_zero_disables_everything_unless_asked(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    a = tf.add(x, tf.constant(1.0) + tf.constant(1.0), name="a")
    b = tf.add(x, tf.constant(1.0) + tf.constant(1.0), name="b")
    out = tf.multiply(tf.identity(a), b, name="out")
    before, off = _optimize([out], [x], tf.OptimizerOptions(opt_level=L0))
    assert off == before.splitlines()
    _, fold_only = _optimize([out], [x], tf.OptimizerOptions(
        opt_level=L0, do_constant_folding=True))
    assert _ops(fold_only).count("AddV2") == 2 and "Identity" in _ops(fold_only)
    _, cse_only = _optimize([out], [x], tf.OptimizerOptions(
        opt_level=L0, do_common_subexpression_elimination=True))
    assert "Identity" not in _ops(cse_only)
    assert _ops(cse_only).count("AddV2") == 2  # the two sums of constants merge, a and b too
    _, everything = _optimize([out], [x])
    assert _ops(everything) == ["AddV2", "Const", "Mul", "_Arg"]
    assert _run(out, {x: 1.0}) == 9.0


def test_rewrite_options_from_proto():
    assert rewrites.RewriteOptions.from_proto(None) == rewrites.RewriteOptions()
    off = rewrites.RewriteOptions.from_proto(tf.OptimizerOptions(opt_level=L0))
    assert not (off.fold_constants or off.common_subexpressions or off.remove_identities
                or off.prune_dead_branches)
    limited = rewrites.RewriteOptions.from_proto(
        tf.OptimizerOptions(max_folded_constant_in_bytes=64))
    assert limited.max_folded_bytes == 64 and limited.fold_constants


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "mul", "sub", "id", "const", "square"]),
                          st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=10),
       st.floats(-3, 3))
def test_optimized_results_equal_unoptimized(program, feed):
    results = []
    for options in (tf.OptimizerOptions(opt_level=L0), tf.OptimizerOptions()):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float64, [], name="x")
            values = [x, tf.constant(1.5, tf.float64)]
            for kind, i, j in program:
                a, b = values[i % len(values)], values[j % len(values)]
                if kind == "add":
                    values.append(a + b)
                elif kind == "mul":
                    values.append(a * b)
                elif kind == "sub":
                    values.append(a - b)
                elif kind == "id":
                    values.append(tf.identity(a))
                elif kind == "square":
                    values.append(tf.square(a))
                else:
                    values.append(tf.constant(float(i) / 7.0, tf.float64))
            results.append(_run(values[-3:], {x: feed}, options))
    for plain, optimized in zip(*results):
        np.testing.assert_array_equal(plain, optimized)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_relu_and_bias_gradients_move_below_the_max_pool_gradient(graph, padding):
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float64, [2, 5, 6, 3], name="x")
    w = tf.constant(rng.randn(3, 3, 3, 4))
    b = tf.constant(rng.randn(4))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    p = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], padding)
    gw, gb, gx = tf.gradients(tf.reduce_sum(p * p), [w, b, x])
    _, lines = _optimize([gw, gb, gx], [x])
    relu_grad = [line for line in lines if " = ReluGrad(" in line]
    pool_grad = [line for line in lines if " = MaxPoolGrad(" in line]
    bias_grad = [line for line in lines if " = BiasAddGrad(" in line]
    assert len(relu_grad) == len(pool_grad) == len(bias_grad) == 1
    pooled = relu_grad[0].split(" = ")[0]
    assert pooled.endswith("/pooled") and f", {pooled})" in pool_grad[0]  # MaxPoolGrad's grad
    assert f"BiasAddGrad({pooled})" in bias_grad[0]
    feed = {x: rng.randn(2, 5, 6, 3)}
    got = _run([gw, gb, gx], feed)
    want = _run([gw, gb, gx], feed, tf.OptimizerOptions(opt_level=L0))
    for g, ref in zip(got, want):
        np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype,padding", [(tf.float32, "SAME"), (tf.float64, "VALID"),
                                           (tf.float32, "VALID")])
def test_relu_bias_and_max_pool_gradients_fuse_into_one_op(graph, dtype, padding, monkeypatch):
    rng = np.random.RandomState(1)
    x = tf.placeholder(dtype, [3, 6, 7, 2], name="x")
    w = tf.constant(rng.randn(3, 3, 2, 5), dtype)
    b = tf.constant(rng.randn(5), dtype)
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    p = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], padding)
    gw, gb, gx = tf.gradients(tf.reduce_sum(p * p), [w, b, x])
    gb = tf.multiply(gb, 2.0, name="gb2")  # a fetched BiasAddGrad itself would stay
    _, lines = _optimize([gw, gb, gx], [x])
    fused = [line for line in lines if " = _FusedMaxPoolGrad(" in line]
    assert len(fused) == 1 and fused[0].startswith("gradients/MaxPool_grad/MaxPoolGrad = ")
    assert not any(f" = {op}(" in line for line in lines
                   for op in ("ReluGrad", "MaxPoolGrad", "BiasAddGrad"))
    assert any(line.startswith("gb2 = Mul(gradients/MaxPool_grad/MaxPoolGrad:1, ")
               for line in lines)
    feed = {x: np.round(rng.randn(3, 6, 7, 2) * 2)}  # ties inside windows too
    feed[x][0, 0, 0, 0] = np.nan
    got = _run([gw, gb, gx], feed)
    monkeypatch.setenv("TFX_JIT", "0")  # the fused op's NumPy path: the unfused kernels
    numpy_path = _run([gw, gb, gx], feed)
    monkeypatch.delenv("TFX_JIT")
    for a, b in zip(got[::2], numpy_path[::2]):
        np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(remapper, "FUSE_POOL_GRADIENTS", False)
    unfused = _run([gw, gb, gx], feed)
    plain = _run([gw, gb, gx], feed, tf.OptimizerOptions(opt_level=L0))
    for want in (unfused, plain, numpy_path):
        np.testing.assert_array_equal(got[0], want[0])  # the routed gradient is exact
        np.testing.assert_array_equal(got[2], want[2])
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5 if dtype == tf.float32
                                   else 1e-12, equal_nan=True)


def test_pool_gradient_fuses_without_bias_and_keeps_a_fetched_bias_gradient(graph):
    rng = np.random.RandomState(2)
    x = tf.placeholder(tf.float32, [2, 4, 4, 3], name="x")
    p = tf.nn.max_pool(tf.nn.relu(x * 1.5), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    (gx,) = tf.gradients(tf.reduce_sum(p * p), [x])  # the ReluGrad is not fetched itself
    _, lines = _optimize([gx], [x])
    assert sum(" = _FusedMaxPoolGrad(" in line for line in lines) == 1
    assert not any(" = ReluGrad(" in line for line in lines)
    feed = {x: rng.randn(2, 4, 4, 3)}
    np.testing.assert_array_equal(
        _run(gx, feed), _run(gx, feed, tf.OptimizerOptions(opt_level=L0)))
    b = tf.constant(rng.randn(3), tf.float32)
    p = tf.nn.max_pool(tf.nn.relu(tf.nn.bias_add(x, b)), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    gb, gx = tf.gradients(tf.reduce_sum(p), [b, x])
    _, lines = _optimize([gb, gx], [x])  # the fetched BiasAddGrad reads the pooled ReluGrad
    assert not any(" = _FusedMaxPoolGrad(" in line for line in lines)
    assert sum(" = ReluGrad(" in line for line in lines) == 1


def _two_dense_layers(dtype, use_locking=False):
    rng = np.random.RandomState(3)
    x = tf.placeholder(dtype, [16, 96], name="x")
    w1 = tf.Variable(rng.randn(96, 64).astype(dtype.as_numpy_dtype) * 0.1, name="w1")
    w2 = tf.Variable(rng.randn(64, 80).astype(dtype.as_numpy_dtype) * 0.1, name="w2")
    h = tf.nn.relu(tf.matmul(x, w1))
    loss = tf.reduce_sum(tf.square(tf.matmul(h, w2)))
    train = tf.train.GradientDescentOptimizer(0.01, use_locking=use_locking).minimize(loss)
    return x, train, [w1, w2], {x: rng.randn(16, 96)}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_weight_gradients_are_applied_block_by_block(graph, dtype, monkeypatch):
    from tensorflux.ops.internal import fused

    x, train, variables, feed = _two_dense_layers(dtype)
    _, lines = _optimize([], [x], targets=[train])
    fused_lines = [line for line in lines if " = _FusedMatMulApplyGradientDescent(" in line]
    assert len(fused_lines) == 2 and not any(" = ApplyGradientDescent(" in line
                                             for line in lines)
    # The forward products and layer 2's input gradient are left (the latter reads w2's old
    # value: the update still waits for it through the gradients' gate).
    products = [line for line in lines if " = MatMul(" in line]
    assert len(products) == 3 and not any("transpose_a=True" in line for line in products)
    assert all("^gradients/" in line for line in fused_lines)
    monkeypatch.setattr(fused, "UPDATE_BLOCK_ELEMENTS", 1000)  # several blocks of rows
    monkeypatch.setattr(fused, "MIN_BLOCK_ROWS", 1)  # thin ones too (see the next test)
    # BLAS on one thread (on several, the kernel runs the unfused product and update).
    monkeypatch.setattr(intra_op, "elementwise_splits", lambda: 1)
    blocks = []
    update = update_jit.gradient_descent
    monkeypatch.setattr(update_jit, "gradient_descent",
                        lambda var, *args: (blocks.append(var.shape), update(var, *args)))
    results = []
    for fuse, options in ((True, None), (False, None), (True, tf.OptimizerOptions(opt_level=L0))):
        monkeypatch.setattr(remapper, "FUSE_GRADIENT_UPDATES", fuse)
        config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options)) \
            if options is not None else None
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                sess.run(train, feed)
            results.append(sess.run(variables))
        if fuse and options is None:
            fused_blocks, blocks[:] = list(blocks), []
    for got in results[1:]:
        for a, b in zip(results[0], got):
            np.testing.assert_array_equal(a, b)  # the same row sums and update arithmetic
    # w1 [96, 64] in 7 blocks of rows, w2 [64, 80] in 6, each step.
    assert sorted(set(fused_blocks)) == [(10, 80), (11, 80), (13, 64), (14, 64)]
    assert len(fused_blocks) == 4 * (7 + 6)


def test_thin_blocks_of_a_wide_weight_gradient_run_unfused(graph, monkeypatch):
    from tensorflux.ops.internal import fused

    # A [16, 4096] kernel gives blocks of 131072 // 4096 = 32 < MIN_BLOCK_ROWS rows: BLAS
    # would pack `b` once per block, so the product and the update run whole.
    rng = np.random.RandomState(1)
    x = tf.placeholder(tf.float32, [8, 16])
    w = tf.Variable(rng.randn(16, 4096).astype(np.float32) * 0.1)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(tf.reduce_sum(tf.matmul(x, w)))
    monkeypatch.setattr(intra_op, "elementwise_splits", lambda: 1)
    # The BLAS path (float32 k <= 128 updates in the product's tiles elsewhere).
    monkeypatch.setattr(gemm_update_jit, "MIN_ELEMENTS", 1 << 62)
    calls = []
    update = update_jit.gradient_descent
    monkeypatch.setattr(update_jit, "gradient_descent",
                        lambda var, *args: (calls.append(var.shape), update(var, *args)))
    feed = {x: rng.randn(8, 16)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(w)
        sess.run(train, feed)
        after = sess.run(w)
    assert 131072 // 4096 < fused.MIN_BLOCK_ROWS
    assert calls == [(16, 4096)]  # one update of the whole variable, not per block of rows
    grad = feed[x].astype(np.float32).T @ np.ones((8, 4096), np.float32)
    np.testing.assert_allclose(after, before - np.float32(0.01) * grad, rtol=1e-5, atol=1e-6)


def test_weight_gradient_update_keeps_shared_gradients_and_locking(graph):
    x, train, variables, feed = _two_dense_layers(tf.float32, use_locking=True)
    _, lines = _optimize([], [x], targets=[train])
    assert all("use_locking=True" in line for line in lines
               if " = _FusedMatMulApplyGradientDescent(" in line)
    grads = tf.get_default_graph().get_operation_by_name(
        "gradients/MatMul_1_grad/MatMul_1").outputs[0]
    _, lines = _optimize([grads], [x], targets=[train])  # the product is fetched too
    assert sum(" = _FusedMatMulApplyGradientDescent(" in line for line in lines) == 1
    assert sum(" = ApplyGradientDescent(" in line for line in lines) == 1


def test_pool_gradient_reorder_keeps_fetched_or_shared_gradients(graph):
    x = tf.placeholder(tf.float32, [1, 4, 4, 2])
    h = tf.nn.relu(x)
    p = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    (pool_grad,) = tf.gradients(tf.reduce_sum(p), [h])
    relu_grad = tf.gradients(tf.reduce_sum(p), [x])[0]
    # The MaxPoolGrad output is fetched itself: its ReluGrad reader cannot take its place.
    _, lines = _optimize([pool_grad, relu_grad], [x])
    assert not any("/pooled" in line for line in lines)


def test_chains_read_only_through_control_edges_all_become_noops(graph):
    # y = -x feeds z = sum(y); only a control edge reads z. Both become NoOps (z first, then
    # y, whose sole reader is now a NoOp); the fetched value waits as before.
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.negative(x, name="y")
    z = tf.reduce_sum(y, name="z")
    with tf.control_dependencies([z]):
        out = tf.identity(x * 2.0, name="out")
    _, lines = _optimize([out], [x])
    ops = {line.split(" = ")[0]: line.split(" = ")[1].split("(")[0] for line in lines}
    assert ops["y"] == "NoOp" and ops["z"] == "NoOp"
    feed = {x: np.array([1.0, -2.0, np.nan], np.float32)}
    np.testing.assert_array_equal(_run(out, feed), [2.0, -4.0, np.nan])
    # A stateful reader keeps the chain: an Assign is not pure.
    var = tf.Variable(np.zeros(3, np.float32))
    with tf.control_dependencies([tf.assign(var, y)]):
        kept = tf.identity(x, name="kept")
    _, lines = _optimize([kept], [x])
    ops = {line.split(" = ")[0]: line.split(" = ")[1].split("(")[0] for line in lines}
    assert ops["y"] == "Neg"
