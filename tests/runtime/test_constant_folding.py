"""Plan-time constant folding (runtime/constant_folding.py): static shapes, multiplications by
one, and the same fetched values with folding on and off."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.runtime import rewrites, subgraph

L0 = -1
OFF = tf.OptimizerOptions(opt_level=L0)
FOLD_ONLY = tf.OptimizerOptions(opt_level=L0, do_constant_folding=True)


def _optimized_ops(fetches, feeds=(), options=None):
    nodes, fetch_points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                       list(fetches), [])
    optimized = rewrites.optimize(nodes, fetch_points, options)
    return [node.describe() for node in optimized], sorted(node.op for node in optimized)


def _run(fetches, feed_dict=None, options=None):
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options)) \
        if options is not None else None
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feed_dict)


def _assert_same_with_folding_on_and_off(fetches, feed_dict=None):
    folded = _run(fetches, feed_dict, FOLD_ONLY)
    plain = _run(fetches, feed_dict, OFF)
    for a, b in zip(folded, plain):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.asarray(a).shape == np.asarray(b).shape
        np.testing.assert_array_equal(a, b)


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_shape_size_rank_of_known_static_shapes_fold(graph):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    y = tf.tanh(x, name="y")  # computed, with a fully known static shape
    shape = tf.raw_ops.Shape(input=y, out_type=tf.int64, name="shape")
    size = tf.raw_ops.Size(input=y, name="size")
    rank = tf.raw_ops.Rank(input=y, name="rank")
    s1, s2 = tf.raw_ops.ShapeN(input=[y, tf.zeros([2, 0, 5])], name="shape_n")
    s1, s2 = tf.identity(s1, name="s1"), tf.identity(s2, name="s2")
    total = tf.add(tf.cast(tf.reduce_prod(shape), tf.int32), size * rank, name="total")
    fetches = [shape, size, rank, s1, s2, total]
    lines, ops = _optimized_ops(fetches, [x], FOLD_ONLY)
    # NOTE: Tanh stays (nothing reads it now): an unread producer could be a target.
    assert ops == ["Const"] * 6 + ["Tanh", "_Arg"]
    feed = {x: np.ones((4, 3), np.float32)}
    _assert_same_with_folding_on_and_off(fetches, feed)
    assert [v.tolist() for v in _run(fetches, feed)] == [[4, 3], 12, 2, [4, 3], [2, 0, 5], 36]
    assert _run(shape, feed).dtype == np.int64


def test_rank_folds_with_unknown_dims_but_shape_does_not(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.exp(x, name="y")
    shape = tf.raw_ops.Shape(input=y, name="shape")
    rank = tf.raw_ops.Rank(input=y, name="rank")
    _, ops = _optimized_ops([shape, rank], [x])
    assert "Shape" in ops and "Rank" not in ops
    _assert_same_with_folding_on_and_off([shape, rank], {x: np.zeros((5, 3), np.float32)})


def test_shapes_of_feeds_and_variables_are_not_folded(graph):
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    fed_shape = tf.raw_ops.Shape(input=x, name="fed_shape")
    v = tf.Variable(tf.zeros([3]), name="v")
    var_shape = tf.raw_ops.Shape(input=v.value(), name="var_shape")
    # A computed tensor fed in this signature is not folded either (its value is the feed's).
    y = tf.square(x, name="y")
    y_shape = tf.raw_ops.Shape(input=y, name="y_shape")
    _, ops = _optimized_ops([fed_shape, var_shape, y_shape], [x, y])
    assert ops.count("Shape") == 3
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        got = sess.run([fed_shape, var_shape, y_shape],
                       {x: np.zeros((2, 2), np.float32), y: np.zeros((2, 2), np.float32)})
    assert [g.tolist() for g in got] == [[2, 2], [3], [2, 2]]


def test_shape_in_a_while_loop_folds_inside_its_frame(graph):
    def body(i, acc):
        step = tf.ones([2, 3]) * tf.cast(i, tf.float32)
        shape = tf.raw_ops.Shape(input=step)
        return i + 1, acc + tf.cast(tf.reduce_sum(shape), tf.float32) + tf.reduce_sum(step)

    _, out = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.constant(0.0)])
    lines, ops = _optimized_ops([out])
    assert "Shape" not in ops
    # Shape -> Sum -> Cast folds to one value, kept in the loop's frame by its producer.
    folded = [line for line in lines if "_folded_" in line and " = Const(" in line]
    assert len(folded) == 1 and "^while/mul" in folded[0] and "array(5." in folded[0]
    _assert_same_with_folding_on_and_off([out])
    assert _run(out) == pytest.approx(4 * 5 + 6 * (0 + 1 + 2 + 3))


def test_multiplication_by_one_becomes_an_identity(graph):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    a = tf.multiply(x, tf.constant(1.0), name="a")
    b = tf.multiply(tf.ones([1, 3]), x, name="b")
    c = tf.realdiv(x, tf.ones([2, 3]), name="c")
    d = tf.add(a + b, c, name="d")
    lines, ops = _optimized_ops([d], [x])
    assert "Mul" not in ops and "RealDiv" not in ops
    assert any(line.startswith("d = AddV2(") for line in lines)
    special = np.array([[np.nan, -0.0, np.inf], [-np.inf, 1e-45, -3.5]], np.float32)
    folded = _run([a, b, c, d], {x: special}, FOLD_ONLY)
    plain = _run([a, b, c, d], {x: special}, OFF)
    for got, want in zip(folded, plain):
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_reshapes_to_the_inputs_own_shape_become_identities(graph):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.sin(x, name="y")
    same = tf.reshape(y, [-1, 3], name="same")
    same_bcast = tf.broadcast_to(y, [2, 3], name="same_bcast")
    other = tf.reshape(y, [3, 2], name="other")
    grown = tf.broadcast_to(y, [4, 2, 3], name="grown")
    fed = tf.placeholder(tf.float32, None, name="fed")
    unknown = tf.reshape(fed, [-1], name="unknown")
    fetches = [same, same_bcast, other, grown, unknown]
    lines, _ = _optimized_ops(fetches, [x, fed])
    ops = {line.split(" = ")[0]: line.split(" = ")[1].split("(")[0] for line in lines}
    assert (ops["same"], ops["same_bcast"]) == ("Identity", "Identity")
    assert (ops["other"], ops["grown"], ops["unknown"]) == ("Reshape", "BroadcastTo", "Reshape")
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3), fed: np.ones(4, np.float32)}
    _assert_same_with_folding_on_and_off(fetches, feed)


def test_multiplications_that_change_values_or_shapes_stay(graph):
    x = tf.placeholder(tf.float32, [3], name="x")
    grows = tf.multiply(x, tf.ones([2, 3]), name="grows")  # broadcasting enlarges x
    z = tf.placeholder(tf.complex64, [2], name="z")
    complex_one = tf.multiply(z, tf.constant(1 + 0j, tf.complex64), name="complex_one")
    unknown = tf.placeholder(tf.float32, None, name="unknown")
    maybe_grows = tf.multiply(unknown, tf.ones([2]), name="maybe_grows")
    not_one = tf.multiply(x, tf.constant([1.0, 1.0, 2.0]), name="not_one")
    added = tf.add(x, 0.0, name="added")  # -0.0 + 0.0 is +0.0: never removed
    fetches = [grows, complex_one, maybe_grows, not_one, added]
    _, ops = _optimized_ops(fetches, [x, z, unknown])
    assert ops.count("Mul") == 4 and ops.count("AddV2") == 1
    feed = {x: [1.0, -0.0, 2.0], z: [complex(1.0, np.inf), 2j], unknown: 3.0}
    with np.errstate(invalid="ignore"):
        got = _run(fetches, feed)
    assert got[0].shape == (2, 3) and got[2].shape == (2,)
    assert np.isnan(got[1][0].real)  # z * (1+0j) is not z: inf * 0 in the real part
    assert np.signbit(got[4][1]) == np.signbit(np.float32(-0.0) + np.float32(0.0))


def test_gradients_of_broadcasting_ops_equal_with_folding_on_and_off(graph):
    rng = np.random.RandomState(3)
    a = tf.Variable(rng.randn(3, 1).astype(np.float32), name="a")
    b = tf.Variable(rng.randn(1, 4).astype(np.float32), name="b")
    c = tf.Variable(rng.randn(4).astype(np.float32), name="c")
    loss = tf.reduce_sum(tf.square(a + b) * c - a / (tf.abs(b) + 1.0) + tf.maximum(a, c))
    loss += tf.reduce_mean(tf.reshape(tf.tile(a, [2, 4]) * tf.expand_dims(c, 0), [-1]))
    grads = tf.gradients(loss, [a, b, c])
    init = tf.global_variables_initializer()
    results = []
    for options in (FOLD_ONLY, OFF):
        config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options))
        with tf.Session(config=config) as sess:
            sess.run(init)
            results.append(sess.run(grads + [loss]))
    for folded, plain in zip(*results):
        np.testing.assert_array_equal(folded, plain)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(["shape", "size", "rank", "mul1", "div1", "sum", "bcast"]),
                min_size=1, max_size=6),
       st.lists(st.integers(0, 3), min_size=0, max_size=3))
def test_folded_values_equal_the_kernels(program, dims):
    results = []
    for options in (FOLD_ONLY, OFF):
        with tf.Graph().as_default():
            base = tf.placeholder(tf.float64, dims, name="x")
            value = tf.sin(base)
            outputs = []
            for kind in program:
                if kind == "shape":
                    outputs.append(tf.raw_ops.Shape(input=value))
                elif kind == "size":
                    outputs.append(tf.raw_ops.Size(input=value, out_type=tf.int64))
                elif kind == "rank":
                    outputs.append(tf.raw_ops.Rank(input=value))
                elif kind == "mul1":
                    value = value * tf.constant(1.0, tf.float64)
                elif kind == "div1":
                    value = tf.realdiv(value, tf.ones(dims, tf.float64))
                elif kind == "sum":
                    outputs.append(tf.reduce_sum(value))
                else:
                    r0, r1 = tf.raw_ops.BroadcastGradientArgs(
                        s0=tf.raw_ops.Shape(input=value), s1=tf.constant([1] * len(dims),
                                                                        tf.int32))
                    outputs.extend([r0, r1])
            outputs.append(value)
            feed = {base: np.linspace(-2, 2, int(np.prod(dims))).reshape(dims)}
            results.append(_run(outputs, feed, options))
    for folded, plain in zip(*results):
        assert np.asarray(folded).dtype == np.asarray(plain).dtype
        np.testing.assert_array_equal(folded, plain)


def test_fast_path_calls_no_const_or_pass_through(graph):
    x = tf.placeholder(tf.float32, [3], name="x")
    v = tf.Variable([1.0, 2.0, 3.0], name="v")
    kept = tf.identity(tf.stop_gradient(x * 2.0), name="kept")
    with tf.control_dependencies([kept]):
        out = tf.identity(v.value() + kept, name="out")
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        got = sess.run([out, kept, v.value()], {x: [1.0, 1.0, 1.0]})
        plan = next(p for p in sess._backend._cache.values()
                    if any(len(part.plan.items) > 4 for part in p.partitions))
    source = plan.partitions[0].runner.source
    calls = [line for line in source.splitlines()[1:] if " k" in line or line.startswith("    k")]
    # VariableV2 (with ctx), Mul and AddV2 are the only kernels called.
    assert len(calls) == 3, source
    np.testing.assert_array_equal(got[0], [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(got[1], [2.0, 2.0, 2.0])
    got[2][0] = 100.0  # a fetched variable value is a copy
    with tf.Session() as sess:
        sess.run(init)
        assert sess.run(v)[0] == 1.0


def _config(**toggles):
    config = tf.ConfigProto()
    for name, value in toggles.items():
        setattr(config.graph_options.rewrite_options, name, value)
    return config


def test_rewriter_config_switches_rewrites_off(graph):
    from tensorflux.protos.rewriter_config_pb2 import RewriterConfig

    x = tf.placeholder(tf.float32, [2], name="x")
    folded = tf.add(tf.constant(2.0) * tf.constant(3.0), 1.0, name="folded")
    shape = tf.raw_ops.Shape(input=tf.exp(x), name="shape")
    one = tf.multiply(x, tf.constant(1.0), name="one")
    kept = tf.identity(tf.identity(x * folded), name="kept")

    def ops_with(config):
        options = rewrites.RewriteOptions.from_proto(config.graph_options.optimizer_options,
                                                     config.graph_options.rewrite_options)
        nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), [x],
                                                     [shape, one, kept], [])
        by_name = {n.name: n.op for n in rewrites.optimize(nodes, points, None,
                                                           config.graph_options.rewrite_options)}
        return options, by_name

    options, ops = ops_with(_config())
    assert (ops["shape"], ops["one"], ops["kept"]) == ("Const", "Identity", "Identity")
    assert "folded" not in ops  # folded into its consumer
    options, ops = ops_with(_config(constant_folding=RewriterConfig.OFF))
    assert not options.fold_constants and not options.simplify_arithmetic
    assert (ops["shape"], ops["one"], ops["folded"]) == ("Shape", "Mul", "AddV2")
    options, ops = ops_with(_config(arithmetic_optimization=RewriterConfig.OFF))
    assert options.fold_constants and (ops["shape"], ops["one"]) == ("Const", "Mul")
    options, _ = ops_with(_config(disable_meta_optimizer=True))
    assert options.fold_constants and options.common_subexpressions
    assert not (options.remove_identities or options.fuse_products or
                options.simplify_arithmetic or options.control_only_to_noop)
    options, _ = ops_with(_config(dependency_optimization=RewriterConfig.OFF,
                                  common_subgraph_elimination=RewriterConfig.OFF,
                                  remapping=RewriterConfig.OFF))
    assert not (options.remove_identities or options.common_subexpressions or
                options.fuse_products) and options.fold_constants
    feed = {x: np.array([1.5, -2.0], np.float32)}
    want = _run([shape, one, kept], feed)
    with tf.Session(config=_config(constant_folding=RewriterConfig.OFF,
                                   disable_meta_optimizer=True)) as sess:
        for got, expected in zip(sess.run([shape, one, kept], feed), want):
            np.testing.assert_array_equal(got, expected)


def test_rewrite_options_are_graph_options_field_10():
    from tensorflux.protos.rewriter_config_pb2 import RewriterConfig

    options = tf.GraphOptions()
    options.rewrite_options.constant_folding = RewriterConfig.OFF
    # field 10, length-delimited (0x52), holding field 3 varint (0x18) = OFF (2)
    assert options.SerializeToString() == b"\x52\x02\x18\x02"
    assert tf.GraphOptions.FromString(b"\x52\x02\x18\x02").rewrite_options.constant_folding \
        == RewriterConfig.OFF
