"""CTC: CTCLoss (loss and gradient), CTCGreedyDecoder, CTCBeamSearchDecoder and the composites.

Reference values marked "TF" were produced by TensorFlow 1.x semantics (tf.compat.v1) on the
same inputs; the rest are checked against brute-force enumeration over all alignments or a
straightforward scalar implementation of TensorFlow's beam search.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

COVERED_OPS = {"CTCLoss", "CTCGreedyDecoder", "CTCBeamSearchDecoder"}

X = np.random.RandomState(0).randn(5, 2, 4)
LABELS = ([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]], [1, 1, 0, 2, 2], [2, 3])
SEQ = np.array([5, 4], np.int32)

# TF: losses for (preprocess_collapse_repeated, ctc_merge_repeated).
TF_LOSSES = {
    (False, True): [7.5604270415, 6.4663123969],
    (False, False): [6.8114880594, 3.9320104438],
    (True, True): [6.008797904, 2.7122643217],
    (True, False): [6.4840633994, 4.2617088018],
}
# TF: d loss / d inputs at time steps 0 and 1 for the default attrs.
TF_GRAD_01 = np.array([
    [[0.3009676376, -0.4475072339, 0.1372341211, 0.009305505],
     [-0.3712558279, 0.0365575811, 0.2512013678, 0.083496879]],
    [[0.1149547082, -0.0870517771, 0.1472012403, -0.1751041714],
     [0.3438720086, 0.1814366962, -0.7495911385, 0.2242824337]]])
TF_GRAD_01_NO_MERGE = np.array([
    [[0.3009676376, -0.1308598384, 0.1372341211, -0.3073418756],
     [-0.2991370688, 0.0365575811, 0.2512013678, 0.0113781496]],
    [[0.1149547082, -0.235488234, 0.1472012403, -0.0266676847],
     [0.2717532793, 0.1814366962, -0.3232710029, -0.1299189725]]])


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _sparse(indices, values, shape):
    return tf.SparseTensor(np.array(indices, np.int64).reshape(-1, 2),
                           np.array(values, np.int32), shape)


def _dense(sparse_value):
    out = np.full(sparse_value.dense_shape, -1)
    out[tuple(sparse_value.indices.T)] = sparse_value.values
    return out.tolist()


# -- CTCLoss -------------------------------------------------------------------------------------

@pytest.mark.parametrize("collapse,merge", list(TF_LOSSES))
def test_loss_matches_tensorflow(collapse, merge):
    x = tf.constant(X)
    loss = tf.nn.ctc_loss(_sparse(*LABELS), x, SEQ, preprocess_collapse_repeated=collapse,
                          ctc_merge_repeated=merge)
    grad = tf.gradients(loss, x)[0]
    loss_v, grad_v = _run([loss, grad])
    assert loss.dtype == tf.float64 and loss.shape.as_list() == [2]
    np.testing.assert_allclose(loss_v, TF_LOSSES[collapse, merge], rtol=1e-8)
    if not collapse:
        expected = TF_GRAD_01 if merge else TF_GRAD_01_NO_MERGE
        np.testing.assert_allclose(grad_v[:2], expected, atol=1e-7)
    # Past a sequence's end the gradient is zero; each valid step's gradient sums to zero.
    np.testing.assert_array_equal(grad_v[4, 1], 0.0)
    np.testing.assert_allclose(grad_v[:4].sum(axis=2), 0.0, atol=1e-12)


def _brute_loss(logits, labels, merge):
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    blank = logits.shape[1] - 1
    total = -np.inf
    for path in itertools.product(range(logits.shape[1]), repeat=logits.shape[0]):
        if merge:
            decoded = [c for i, c in enumerate(path) if c != blank and (i == 0 or path[i - 1] != c)]
        else:
            decoded = [c for c in path if c != blank]
        if decoded == list(labels):
            total = np.logaddexp(total, log_probs[np.arange(len(path)), path].sum())
    return -total


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(2, 3), st.booleans(), st.integers(0, 2**31 - 1))
def test_loss_matches_enumeration_over_alignments(time, classes, merge, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, classes - 1, size=rng.randint(1, time + 1)).tolist()
    repeats = sum(a == b for a, b in zip(labels, labels[1:]))
    if merge and len(labels) + repeats > time:
        labels = labels[:1]
    logits = rng.randn(time, 1, classes)
    with tf.Graph().as_default():
        loss = tf.nn.ctc_loss(_sparse([[0, i] for i in range(len(labels))], labels,
                                      [1, len(labels)]),
                              logits, [time], ctc_merge_repeated=merge)
        value = _run(loss)
    np.testing.assert_allclose(value, [_brute_loss(logits[:, 0], labels, merge)], rtol=1e-9)


def test_batch_major_inputs_and_float32():
    x = np.transpose(X, [1, 0, 2]).astype(np.float32)
    loss = tf.nn.ctc_loss(_sparse(*LABELS), x, SEQ, time_major=False)
    assert loss.dtype == tf.float32
    np.testing.assert_allclose(_run(loss), TF_LOSSES[False, True], rtol=1e-5)
    loss = tf.nn.ctc_loss(_sparse(*LABELS), logits=X, sequence_length=SEQ)
    np.testing.assert_allclose(_run(loss), TF_LOSSES[False, True], rtol=1e-8)


def test_static_shapes():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    labels = tf.sparse_placeholder(tf.int32)
    out = tf.nn.ctc_loss(labels, x, tf.placeholder(tf.int32, [None]))
    assert out.shape.as_list() == [3]
    assert out.op.outputs[1].shape.as_list() == [None, 3, 5]
    (decoded,), log_prob = tf.nn.ctc_greedy_decoder(x, tf.placeholder(tf.int32, [3]))
    assert decoded.indices.shape.as_list() == [None, 2] and log_prob.shape.as_list() == [3, 1]
    decoded, log_prob = tf.nn.ctc_beam_search_decoder(x, tf.placeholder(tf.int32, [3]),
                                                      beam_width=4, top_paths=2)
    assert len(decoded) == 2 and log_prob.shape.as_list() == [3, 2]
    with pytest.raises(ValueError, match="CTCLoss"):
        tf.nn.ctc_loss(labels, tf.zeros([2, 3]), [2, 2, 2])


def test_ignore_longer_outputs_than_inputs():
    labels = _sparse([[0, 0], [0, 1], [0, 2], [1, 0]], [1, 1, 1, 2], [2, 3])
    x = tf.constant(X[:4])
    with pytest.raises(errors.InvalidArgumentError, match=r"Not enough time.*required: 5, "
                                                          r"available: 4"):
        _run(tf.nn.ctc_loss(labels, x, [4, 4]))
    loss = tf.nn.ctc_loss(labels, x, [4, 4], ignore_longer_outputs_than_inputs=True)
    loss_v, grad_v = _run([loss, tf.gradients(loss, x)[0]])
    assert loss_v[0] == 0.0 and loss_v[1] > 0
    np.testing.assert_array_equal(grad_v[:, 0], 0.0)
    # Without merging, repeated labels need no blank between them.
    assert np.isfinite(_run(tf.nn.ctc_loss(labels, x, [4, 4], ctc_merge_repeated=False))).all()


def test_loss_errors():
    x = tf.constant(X)
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.nn.ctc_loss([[1]], x, SEQ)
    with pytest.raises(errors.InvalidArgumentError, match="nonnegative"):
        _run(tf.nn.ctc_loss(_sparse([[0, 0], [1, 0]], [-1, 0], [2, 1]), x, SEQ))
    with pytest.raises(errors.InvalidArgumentError, match="greater than num_classes"):
        _run(tf.nn.ctc_loss(_sparse([[0, 0], [1, 0]], [4, 0], [2, 1]), x, SEQ))
    with pytest.raises(errors.InvalidArgumentError, match="length is zero in batch 1"):
        _run(tf.nn.ctc_loss(_sparse([[0, 0]], [1], [2, 1]), x, SEQ))
    with pytest.raises(errors.InvalidArgumentError, match="sequence_length"):
        _run(tf.nn.ctc_loss(_sparse(*LABELS), x, [6, 1]))


# -- decoders ------------------------------------------------------------------------------------

def test_greedy_decoder_matches_tensorflow():
    (merged,), log_prob = tf.nn.ctc_greedy_decoder(X, SEQ)
    (plain,), _ = tf.nn.ctc_greedy_decoder(X, SEQ, merge_repeated=False)
    merged_v, log_prob_v, plain_v = _run([merged, log_prob, plain])
    assert _dense(merged_v) == [[0, -1, -1], [0, 2, 0]]  # TF
    assert _dense(plain_v) == [[0, 0, -1, -1], [0, 0, 2, 0]]  # TF
    np.testing.assert_allclose(log_prob_v, [[-7.6153493724], [-5.0258111285]])
    np.testing.assert_allclose(log_prob_v[:, 0], -np.where(
        np.arange(5)[:, None] < SEQ, X.max(axis=2), 0).sum(axis=0))
    x = np.random.RandomState(1).randn(4, 2, 4)
    (decoded,), log_prob = tf.nn.ctc_greedy_decoder(x, [4, 2], blank_index=0)
    decoded_v, log_prob_v = _run([decoded, log_prob])
    assert _dense(decoded_v) == [[2, 3], [2, -1]]  # TF
    np.testing.assert_allclose(log_prob_v, [[-4.5701244637], [-2.8785812066]])
    with pytest.raises(errors.InvalidArgumentError, match="must not be empty"):
        _run(tf.nn.ctc_greedy_decoder(np.zeros((0, 2, 3)), [0, 0])[1])


# TF: (seed, time, batch, classes, beam_width, top_paths, merge_repeated) -> dense paths
# (-1 pads) and log probabilities, for x = RandomState(seed).randn(time, batch, classes) * 2 with
# the last batch entry two steps shorter.
TF_BEAMS = [
    ((7, 6, 2, 7, 3, 2, False),
     [[[0, 3, 5, 3, 4], [1, 2, 3, 1, -1]], [[0, 3, 5, 3, 0], [1, 2, 1, -1, -1]]],
     [[-2.829213, -2.840572], [-1.433982, -2.005557]]),
    ((11, 9, 3, 5, 2, 1, True),
     [[[0, 2, 1, 0, 2, 3], [3, 2, 3, 0, 3, -1], [2, 1, 2, 0, -1, -1]]],
     [[-2.212606], [-3.213921], [-3.123591]]),
    ((3, 12, 2, 4, 4, 3, False),
     [[[0, 2, 1, 2, 0, 1, 2], [2, 1, 2, 2, 2, 1, -1]],
      [[0, 2, 1, 2, 0, 2, 1, 2], [1, 2, 2, 2, 1, -1, -1, -1]],
      [[0, 2, 1, 0, 1, 2], [2, 1, 2, 2, 1, 1]]],
     [[-2.702889, -2.804637, -3.0553], [-3.55248, -3.62982, -3.93105]]),
    ((5, 8, 1, 6, 3, 3, True), [[[2, 1, 0]], [[2, 4, 1, 0]], [[2, 1]]],
     [[-1.668279, -3.523185, -3.648007]]),
]


@pytest.mark.parametrize("config,paths,log_probs", TF_BEAMS)
def test_beam_search_matches_tensorflow(config, paths, log_probs):
    seed, time, batch, classes, width, top, merge = config
    x = np.random.RandomState(seed).randn(time, batch, classes) * 2
    seq = np.full(batch, time, np.int32)
    seq[-1] = time - 2
    decoded, log_prob = tf.nn.ctc_beam_search_decoder(x, seq, beam_width=width, top_paths=top,
                                                      merge_repeated=merge)
    decoded_v, log_prob_v = _run([decoded, log_prob])
    assert [_dense(d) for d in decoded_v] == paths
    np.testing.assert_allclose(log_prob_v, log_probs, atol=2e-6)


class _Beam:
    def __init__(self, parent, label):
        self.parent, self.label, self.children = parent, label, {}
        self.old = [-np.inf] * 3  # total, blank, label
        self.new = [-np.inf] * 3


def _scalar_beam_search(logits, width):
    """TensorFlow's decoder written plainly: beams in a trie, a bounded list, label by label."""
    blank = logits.shape[1] - 1
    root = _Beam(None, -1)
    root.new = [0.0, 0.0, -np.inf]
    leaves = [root]
    for row in logits:
        lp = row - row.max()
        lp = lp - np.log(np.exp(lp).sum())
        branches = sorted(leaves, key=lambda e: -e.new[0])
        leaves = []
        for b in branches:
            b.old = list(b.new)
        for b in branches:
            if b.parent is not None:
                if b.parent.new[0] > -np.inf:
                    prev = b.parent.old[1] if b.label == b.parent.label else b.parent.old[0]
                    b.new[2] = np.logaddexp(b.new[2], prev)
                b.new[2] += lp[b.label]
            b.new[1] = b.old[0] + lp[blank]
            b.new[0] = np.logaddexp(b.new[1], b.new[2])
            leaves.append(b)

        def candidate(p, leaves=leaves):
            return p[0] > -np.inf and (len(leaves) < width or
                                       p[0] > min(e.new[0] for e in leaves))

        for b in branches:
            if not candidate(b.old):
                continue
            for c in range(blank):
                child = b.children.setdefault(c, _Beam(b, c))
                if child.new[0] > -np.inf:
                    continue
                prev = b.old[1] if c == b.label else b.old[0]
                child.new = [lp[c] + prev, -np.inf, lp[c] + prev]
                if candidate(child.new):
                    if len(leaves) == width:
                        bottom = min(leaves, key=lambda e: e.new[0])
                        bottom.new = [-np.inf] * 3
                        leaves.remove(bottom)
                    leaves.append(child)
                else:
                    child.old = [-np.inf] * 3
                    child.new = [-np.inf] * 3
    out = []
    for leaf in sorted(leaves, key=lambda e: -e.new[0]):
        labels, node = [], leaf
        while node.parent is not None:
            labels.append(node.label)
            node = node.parent
        out.append((labels[::-1], leaf.new[0]))
    return out


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 10), st.integers(2, 6), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_beam_search_matches_scalar_reference(time, classes, width, seed):
    rng = np.random.RandomState(seed)
    x = rng.randn(time, 2, classes) * rng.uniform(0.5, 4)
    seq = np.array([time, rng.randint(1, time + 1)], np.int32)
    refs = [_scalar_beam_search(x[:seq[b], b], width) for b in range(2)]
    top = min(len(r) for r in refs)
    with tf.Graph().as_default():
        decoded, log_prob = tf.nn.ctc_beam_search_decoder(x, seq, beam_width=width,
                                                          top_paths=top, merge_repeated=False)
        decoded_v, log_prob_v = _run([decoded, log_prob])
    for p in range(top):
        dense = _dense(decoded_v[p])
        for b in range(2):
            assert [v for v in dense[b] if v >= 0] == refs[b][p][0]
            np.testing.assert_allclose(log_prob_v[b, p], refs[b][p][1], rtol=1e-9)


def test_wide_beam_gives_exact_labelling_probabilities():
    x = np.random.RandomState(3).randn(3, 1, 3)
    log_probs = x[:, 0] - np.log(np.exp(x[:, 0]).sum(axis=1, keepdims=True))
    exact = {}
    for path in itertools.product(range(3), repeat=3):
        key = tuple(c for i, c in enumerate(path) if c != 2 and (i == 0 or path[i - 1] != c))
        exact[key] = np.logaddexp(exact.get(key, -np.inf), log_probs[np.arange(3), path].sum())
    best = sorted(exact.items(), key=lambda kv: -kv[1])[:4]
    decoded, log_prob = tf.nn.ctc_beam_search_decoder(x, [3], beam_width=20, top_paths=4,
                                                      merge_repeated=False)
    decoded_v, log_prob_v = _run([decoded, log_prob])
    assert [tuple(d.values) for d in decoded_v] == [k for k, _ in best]
    np.testing.assert_allclose(log_prob_v[0], [v for _, v in best], rtol=1e-12)


def test_beam_search_v2_does_not_merge():
    config, paths, log_probs = TF_BEAMS[2]
    seed, time, batch, classes, width, top, _ = config
    x = np.random.RandomState(seed).randn(time, batch, classes) * 2
    seq = np.array([time, time - 2], np.int32)
    decoded, log_prob = tf.nn.ctc_beam_search_decoder_v2(x, seq, beam_width=width, top_paths=top)
    decoded_v, log_prob_v = _run([decoded, log_prob])
    assert [_dense(d) for d in decoded_v] == paths
    np.testing.assert_allclose(log_prob_v, log_probs, atol=2e-6)


def test_beam_search_errors():
    with pytest.raises(errors.InvalidArgumentError, match="more paths than the beam width"):
        _run(tf.nn.ctc_beam_search_decoder(X, SEQ, beam_width=2, top_paths=3)[1])
    with pytest.raises(errors.InvalidArgumentError, match="Less leaves"):
        _run(tf.nn.ctc_beam_search_decoder(X, [0, 0], beam_width=3, top_paths=2)[1])
    decoded, log_prob = tf.nn.ctc_beam_search_decoder(X, [0, 0], beam_width=3)
    value, lp = _run([decoded[0], log_prob])
    assert value.dense_shape.tolist() == [2, 0] and lp.tolist() == [[0.0], [0.0]]


# -- composites ----------------------------------------------------------------------------------

def test_collapse_repeated_and_unique_labels():
    labels = np.array([[1, 1, 2, 2, 0], [3, 3, 3, 0, 0], [1, 2, 1, 1, 0]], np.int32)
    collapsed, length = _run(tf.nn.collapse_repeated(labels, [5, 3, 4]))
    np.testing.assert_array_equal(collapsed, [[1, 2, 0], [3, 0, 0], [1, 2, 1]])
    np.testing.assert_array_equal(length, [3, 1, 3])
    assert collapsed.dtype == np.int32 and length.dtype == np.int32
    collapsed, length = _run(tf.nn.collapse_repeated(labels, [2, 3, 0]))
    np.testing.assert_array_equal(collapsed, [[1], [3], [0]])
    np.testing.assert_array_equal(length, [1, 1, 0])
    unique, idx = _run(tf.nn.ctc_unique_labels(labels))
    np.testing.assert_array_equal(unique, [[1, 2, 0, 0, 0], [3, 0, 0, 0, 0], [1, 2, 0, 0, 0]])
    np.testing.assert_array_equal(idx, [[0, 0, 1, 1, 2], [0, 0, 0, 1, 1], [0, 1, 0, 0, 2]])
    assert unique.dtype == np.int64 and idx.dtype == np.int32


def test_ctc_loss_v2_matches_tensorflow():
    x = np.random.RandomState(0).randn(6, 3, 5).astype(np.float32)
    labels = np.array([[1, 1, 2], [3, 0, 0], [1, 2, 3]], np.int32)
    expected = {None: [6.6250453, 10.131362, 5.9912996], 0: [6.6250453, 10.131362, 5.9912996],
                2: [9.0959635, 6.520467, 7.1050177], -1: [6.663213, 5.9542146, 4.9169416]}
    for blank, values in expected.items():
        loss = tf.nn.ctc_loss_v2(labels, x, [3, 1, 2], [6, 5, 4], blank_index=blank)
        np.testing.assert_allclose(_run(loss), values, rtol=2e-6)
    loss = tf.nn.ctc_loss_v2(labels, np.transpose(x, [1, 0, 2]), [3, 1, 2], [6, 5, 4],
                             logits_time_major=False, blank_index=-1)
    np.testing.assert_allclose(_run(loss), expected[-1], rtol=2e-6)
    sparse = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], [1, 2, 3], [2, 2])
    loss = tf.nn.ctc_loss_v2(sparse, x[:, :2], None, [6, 5], blank_index=0)
    np.testing.assert_allclose(_run(loss), [6.7708426, 7.0735617], rtol=2e-6)
    with pytest.raises(ValueError, match="blank_index"):
        tf.nn.ctc_loss_v2(sparse, x[:, :2], None, [6, 5])
    # Empty label sequences: the all-blank alignment (TF).
    loss = tf.nn.ctc_loss_v2(np.ones((3, 2), np.int32), x, [0, 0, 0], [6, 5, 4],
                             blank_index=-1)
    np.testing.assert_allclose(_run(loss), [9.765173, 7.025954, 7.468269], rtol=2e-6)
    loss = tf.nn.ctc_loss_v2(labels, x, [3, 1, 0], [6, 5, 4], blank_index=-1)
    np.testing.assert_allclose(_run(loss), [6.663213, 5.9542146, 7.468269], rtol=2e-6)
    logits = tf.constant(x)
    loss = tf.nn.ctc_loss_v2(np.array([[1, 1, 2], [3, 0, 0], [1, 1, 1]], np.int32), logits,
                             [3, 1, 3], [6, 5, 6])
    grad = _run(tf.gradients(loss, logits)[0])
    np.testing.assert_allclose(grad[0], [  # TF
        [-0.43267548, -0.28398582, 0.10289047, 0.36351478, 0.2502561],
        [-0.26190597, 0.414981, 0.13793562, -0.5329635, 0.24195282],
        [-0.00805811, -0.46234086, 0.20852564, 0.11002408, 0.15184915]], atol=1e-6)


# -- gradients -----------------------------------------------------------------------------------

def _loss_case(merge, collapse=False, time_major=True):
    def build(tf):
        x = tf.placeholder(tf.float64, [5, 2, 4] if time_major else [2, 5, 4])
        value = X if time_major else np.ascontiguousarray(np.transpose(X, [1, 0, 2]))
        loss = tf.nn.ctc_loss(_sparse(*LABELS), x, SEQ, ctc_merge_repeated=merge,
                              preprocess_collapse_repeated=collapse, time_major=time_major)
        return loss, [x], [value]

    return build


GRADIENT_CASES = [
    ("CTCLoss", _loss_case(True)),
    ("CTCLoss", _loss_case(False, collapse=True)),
    ("CTCLoss", _loss_case(False, time_major=False)),
]


def test_ctc_loss_v2_gradient_matches_finite_differences():
    x = np.random.RandomState(9).randn(4, 2, 3)
    logits = tf.placeholder(tf.float64, [4, 2, 3])
    loss = tf.nn.ctc_loss_v2(np.array([[1, 2], [2, 2]], np.int32), logits, [2, 0], [4, 3])
    with tf.Session():
        error = tf.test.compute_gradient_error(logits, [4, 2, 3], loss, [2], x_init_value=x)
    assert error < 1e-6


def test_second_derivative_is_refused():
    x = tf.constant(X)
    loss = tf.nn.ctc_loss(_sparse(*LABELS), x, SEQ)
    grad = tf.gradients(loss, x)[0]
    with pytest.raises(LookupError, match="second derivative"):
        tf.gradients(tf.reduce_sum(grad), x)


@pytest.mark.parametrize("width,paths,log_probs", [
    # TensorFlow 2.21's decoder on this input (a beam pushed out, then offered again).
    (3, [[[3, 1], [1]], [[1], [1, 0]], [[3, 2], [1, 3]]],
     [[-0.4521, -0.05429], [-1.87194, -4.58847], [-3.08593, -4.66684]]),
    (4, [[[3, 1], [1]], [[1], [3, 1]], [[3, 2], [1, 0]], [[3], [1, 3]]],
     [[-0.45204, -0.05429], [-1.87194, -4.18116], [-3.084, -4.58847], [-3.98604, -4.66684]]),
])
def test_beam_search_pruning_order_matches_tensorflow(width, paths, log_probs):
    rng = np.random.RandomState(0)
    x = rng.randn(3, 2, 5) * rng.uniform(0.5, 4)
    seq = np.array([3, rng.randint(1, 4)], np.int32)
    decoded, log_prob = tf.nn.ctc_beam_search_decoder(x, seq, beam_width=width,
                                                      top_paths=width, merge_repeated=False)
    decoded_v, log_prob_v = _run([decoded, log_prob])
    for p, want in enumerate(paths):
        dense = _dense(decoded_v[p])
        assert [[v for v in row if v >= 0] for row in dense] == want
    np.testing.assert_allclose(log_prob_v.T, log_probs, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 12), st.integers(2, 7), st.integers(1, 6), st.integers(0, 2**31 - 1),
       st.booleans())
def test_compiled_beam_search_equals_the_python_one(time, classes, width, seed, extreme):
    from tensorflux.lib.numerics import ctc_beam_search, jit

    if not jit.available():
        pytest.skip("numba is not available")
    rng = np.random.RandomState(seed)
    logits = rng.randn(time, classes) * rng.uniform(0.5, 6)
    if extreme and time:
        logits[rng.randint(time), rng.randint(classes)] = -np.inf
    log_p = ctc_beam_search.log_softmax(logits) if time else np.zeros((0, classes))
    plain = ctc_beam_search.decode_sequence(log_p, width)
    compiled = ctc_beam_search._decode_sequence_jit(log_p, width)
    for a, b in zip(plain, compiled):
        np.testing.assert_array_equal(a, b)
