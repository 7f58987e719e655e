"""FusedBatchNorm (V1-V3) and their gradient ops, LRN and LRNGrad: NumPy references and values
recorded from TensorFlow 2.21."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.nn import normalization as nn_norm_ops

COVERED_OPS = {
    "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3", "FusedBatchNormGrad",
    "FusedBatchNormGradV2", "FusedBatchNormGradV3", "LRN", "LRNGrad",
}

RNG = np.random.default_rng(11)
BN_OPS = [nn_norm_ops.FusedBatchNorm, nn_norm_ops.FusedBatchNormV2, nn_norm_ops.FusedBatchNormV3]
BN_GRAD_OPS = [nn_norm_ops.FusedBatchNormGrad, nn_norm_ops.FusedBatchNormGradV2,
               nn_norm_ops.FusedBatchNormGradV3]


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def np_batch_norm(x, scale, offset, mean, var, eps):
    return (x - mean) / np.sqrt(var + eps) * scale + offset


# -- FusedBatchNorm -------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_training(version, fmt):
    x = RNG.standard_normal((3, 2, 4, 5)).astype(np.float32)
    x_nhwc = x if fmt == "NHWC" else x.transpose(0, 2, 3, 1)
    depth = x_nhwc.shape[-1]
    scale = RNG.standard_normal(depth).astype(np.float32)
    offset = RNG.standard_normal(depth).astype(np.float32)
    empty = np.zeros([0], np.float32)
    outs = BN_OPS[version](x, scale, offset, empty, empty, epsilon=0.01, data_format=fmt)
    assert len(outs) == (6 if version == 2 else 5)
    assert outs.y.shape.as_list() == list(x.shape)
    assert outs.batch_mean.shape.as_list() == [depth]
    values = run(list(outs))
    mean = x_nhwc.mean((0, 1, 2), dtype=np.float64)
    var = x_nhwc.var((0, 1, 2), dtype=np.float64)
    n = x_nhwc.size // depth
    y = np_batch_norm(x_nhwc, scale, offset, mean, var, 0.01)
    np.testing.assert_allclose(values[0], y if fmt == "NHWC" else y.transpose(0, 3, 1, 2),
                               rtol=1e-4, atol=1e-5)
    assert values[0].dtype == np.float32 and values[1].dtype == np.float32
    np.testing.assert_allclose(values[1], mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values[2], var * n / (n - 1), rtol=1e-5)  # Bessel-corrected
    np.testing.assert_allclose(values[3], mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values[4], var, rtol=1e-5)  # biased, for the gradient


def test_fused_batch_norm_v3_values_recorded_from_tensorflow():
    x, dy, scale, offset = _recorded_inputs()
    mean = np.array([0.1, 0.2, 0.3], np.float32)
    var = np.array([1.0, 2.0, 0.5], np.float32)
    for training, expect in RECORDED.items():
        outs = nn_norm_ops.FusedBatchNormV3(x, scale, offset, mean, var, epsilon=0.01,
                                           is_training=training)
        grads = nn_norm_ops.FusedBatchNormGradV3(dy, x, scale, outs.reserve_space_1,
                                                 outs.reserve_space_2, outs.reserve_space_3,
                                                 epsilon=0.01, is_training=training)
        values = run([outs.y, outs.batch_mean, outs.batch_variance, grads.x_backprop,
                      grads.scale_backprop, grads.offset_backprop])
        for value, want in zip(values, expect):
            np.testing.assert_allclose(value.reshape(-1), want, rtol=2e-5, atol=2e-6)


def test_fused_batch_norm_exponential_average_and_errors():
    x = RNG.standard_normal((2, 3, 3, 2)).astype(np.float32)
    ones = np.ones(2, np.float32)
    outs = nn_norm_ops.FusedBatchNormV3(x, ones, ones * 0, ones, ones, epsilon=0.001,
                                        exponential_avg_factor=0.3)
    mean_v, var_v = run([outs.batch_mean, outs.batch_variance])
    n = 18
    np.testing.assert_allclose(mean_v, 0.7 + 0.3 * x.mean((0, 1, 2)), rtol=1e-5)
    np.testing.assert_allclose(var_v, 0.7 + 0.3 * x.var((0, 1, 2)) * n / (n - 1), rtol=1e-5)
    empty = np.zeros([0], np.float32)
    bad = nn_norm_ops.FusedBatchNorm(x, ones, ones, empty, empty, is_training=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="mean must have shape"):
        run(bad.y)
    with pytest.raises(ValueError, match="rank"):
        nn_norm_ops.FusedBatchNorm(x[0], ones, ones, empty, empty)
    with pytest.raises(TypeError, match="parameter 'x' has DataType int32"):
        nn_norm_ops.FusedBatchNorm(x.astype(np.int32), ones, ones, empty, empty)


def test_fused_batch_norm_inference_and_wrapper():
    x = RNG.standard_normal((2, 3, 2, 4)).astype(np.float32)
    scale, offset = np.float32([1, 2, 3, 4]), np.float32([0, 1, 0, -1])
    mean, var = np.float32([0.5, 0, -0.5, 1]), np.float32([1, 2, 3, 4])
    y, m, v = tf.nn.fused_batch_norm(x, scale, offset, mean, var, epsilon=1e-7,
                                     is_training=False)
    assert y.op.type == "FusedBatchNormV3"
    assert y.op.get_attr("epsilon") == pytest.approx(1.001e-5)  # raised to the minimum
    yv, mv, vv = run([y, m, v])
    np.testing.assert_allclose(yv, np_batch_norm(x, scale, offset, mean, var, 1.001e-5),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mv, mean)
    np.testing.assert_array_equal(vv, var)
    y2, m2, v2 = tf.nn.fused_batch_norm(x, scale, offset, data_format="NHWC")
    np.testing.assert_allclose(run(m2), x.mean((0, 1, 2)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_grad_ops(training, fmt):
    x = RNG.standard_normal((2, 3, 2, 3))
    dy = RNG.standard_normal((2, 3, 2, 3))
    axis = 3 if fmt == "NHWC" else 1
    axes = tuple(i for i in range(4) if i != axis)
    shape = [1, 1, 1, 1]
    shape[axis] = 3
    scale = RNG.standard_normal(3)
    mean = x.mean(axes) if training else RNG.standard_normal(3)
    var = x.var(axes) if training else RNG.uniform(0.5, 2, 3)
    for op in BN_GRAD_OPS:
        extra = [np.zeros(0)] if op is nn_norm_ops.FusedBatchNormGradV3 else []
        grads = op(dy, x, scale, mean, var, *extra, epsilon=0.001, data_format=fmt,
                   is_training=training)
        assert grads.x_backprop.shape.as_list() == list(x.shape)
        dx, dscale, doffset = run(list(grads[:3]))
        rstd = 1 / np.sqrt(var + 0.001)
        x_hat = (x - mean.reshape(shape)) * rstd.reshape(shape)
        np.testing.assert_allclose(doffset, dy.sum(axes))
        np.testing.assert_allclose(dscale, (dy * x_hat).sum(axes))
        if training:
            n = x.size // 3
            expect = (scale * rstd).reshape(shape) * (
                dy - dy.mean(axes, keepdims=True)
                - x_hat * (dy * x_hat).sum(axes, keepdims=True) / n)
        else:
            expect = dy * (scale * rstd).reshape(shape)
        np.testing.assert_allclose(dx, expect, rtol=1e-10, atol=1e-12)


# -- LRN ------------------------------------------------------------------------------------

LRN_X = [[0.3455841839313507, 0.8216181397438049, 0.3304370641708374, -1.3031572103500366,
          0.9053558707237244, 0.4463745653629303, -0.5369532108306885],
         [0.581118106842041, 0.3645724058151245, 0.2941325008869171, 0.028422242030501366,
          0.5467129945755005, -0.7364540696144104, -0.16290995478630066]]
LRN_Y = [[0.22509774565696716, 0.44272878766059875, 0.16489344835281372, -0.6457117199897766,
          0.46454331278800964, 0.23137632012367249, -0.33282509446144104],
         [0.39608266949653625, 0.2484607994556427, 0.19273261725902557, 0.018150249496102333,
          0.35379403829574585, -0.4818406403064728, -0.10659828782081604]]
LRN_DX = [[-0.0050489394925534725, 0.0699634850025177, 0.09491964429616928,
           0.19615721702575684, 0.2231428325176239, 0.2706204652786255, 0.37648606300354004],
          [0.37663108110427856, 0.4805353581905365, 0.5087202787399292, 0.6370924711227417,
           0.731671929359436, 0.725696861743927, 0.8367624878883362]]


def test_lrn_and_grad_recorded_from_tensorflow():
    x = np.array(LRN_X, np.float32).reshape(1, 1, 2, 7)
    y = tf.nn.lrn(x, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)
    assert y.op.type == "LRN" and y.shape.as_list() == [1, 1, 2, 7]
    dy = np.arange(14, dtype=np.float32).reshape(1, 1, 2, 7) / 10
    dx = nn_norm_ops.LRNGrad(dy, x, y, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)
    yv, dxv = run([y, dx])
    assert yv.dtype == np.float32
    np.testing.assert_allclose(yv.reshape(2, 7), LRN_Y, rtol=1e-5)
    np.testing.assert_allclose(dxv.reshape(2, 7), LRN_DX, rtol=1e-4, atol=1e-6)


def test_lrn_matches_loop_reference():
    x = RNG.standard_normal((2, 2, 3, 6))
    y = run(tf.nn.local_response_normalization(tf.constant(x), depth_radius=1, bias=2.0, alpha=0.5,
                                               beta=0.6))
    expect = np.empty_like(x)
    for d in range(6):
        window = x[..., max(d - 1, 0):d + 2]
        expect[..., d] = x[..., d] / (2.0 + 0.5 * (window ** 2).sum(-1)) ** 0.6
    np.testing.assert_allclose(y, expect, rtol=1e-12)
    with pytest.raises(ValueError, match="rank"):
        tf.nn.lrn(x[0])


# -- gradient cases -------------------------------------------------------------------------


def _reduce_all(tf, tensors):
    total = None
    for t in tensors:
        weight = tf.constant(RNG.uniform(0.5, 1.5, t.shape.as_list()))
        term = tf.reduce_sum(t * weight)
        total = term if total is None else total + term
    return total


def _bn_case(version, training, fmt):
    def build(tf):
        shape = (2, 3, 2, 2) if fmt == "NHWC" else (2, 2, 3, 2)
        x = tf.placeholder(tf.float64, shape)
        scale = tf.placeholder(tf.float64, (2,))
        offset = tf.placeholder(tf.float64, (2,))
        mean = tf.constant([0.2, -0.1]) if not training else tf.zeros([0], tf.float64)
        var = tf.constant([1.5, 0.7]) if not training else tf.zeros([0], tf.float64)
        if not training:
            mean, var = tf.cast(mean, tf.float64), tf.cast(var, tf.float64)
        outs = BN_OPS[version](x, scale, offset, mean, var, epsilon=0.01, data_format=fmt,
                               is_training=training)
        y = _reduce_all(tf, [outs.y])
        return y, [x, scale, offset], [RNG.standard_normal(shape), RNG.standard_normal(2),
                                       RNG.standard_normal(2)]

    return build


def _bn_grad_case(version, training, fmt="NHWC"):
    def build(tf):
        shape = (2, 2, 3, 2) if fmt == "NHWC" else (2, 2, 2, 3)
        x = tf.placeholder(tf.float64, shape)
        dy = tf.placeholder(tf.float64, shape)
        scale = tf.placeholder(tf.float64, (2,))
        offset = tf.constant([0.3, -0.2], tf.float64)
        pop = [tf.constant([0.2, -0.1], tf.float64), tf.constant([1.5, 0.7], tf.float64)]
        stats = [tf.zeros([0], tf.float64)] * 2 if training else pop
        fwd = BN_OPS[version](x, scale, offset, *stats, epsilon=0.01, data_format=fmt,
                              is_training=training)
        extra = [fwd.reserve_space_3] if version == 2 else []
        saved = [fwd.reserve_space_1, fwd.reserve_space_2] if training else pop
        grads = BN_GRAD_OPS[version](dy, x, scale, *saved, *extra, epsilon=0.01,
                                     data_format=fmt, is_training=training)
        y = _reduce_all(tf, list(grads[:3]))
        return y, [dy, x, scale], [RNG.standard_normal(shape), RNG.standard_normal(shape),
                                   RNG.standard_normal(2)]

    return build


def _lrn_case(tf):
    x = tf.placeholder(tf.float64, (1, 2, 1, 5))
    y = tf.nn.lrn(x, depth_radius=1, bias=1.0, alpha=0.4, beta=0.75)
    return _reduce_all(tf, [y]), [x], [RNG.standard_normal((1, 2, 1, 5))]


GRADIENT_CASES = [
    ("FusedBatchNorm", _bn_case(0, True, "NHWC")),
    ("FusedBatchNormV2", _bn_case(1, False, "NCHW")),
    ("FusedBatchNormV3", _bn_case(2, True, "NCHW")),
    ("FusedBatchNormV3", _bn_case(2, False, "NHWC")),
    ("FusedBatchNormGrad", _bn_grad_case(0, True)),
    ("FusedBatchNormGradV2", _bn_grad_case(1, False, "NCHW")),
    ("FusedBatchNormGradV3", _bn_grad_case(2, True, "NCHW")),
    ("LRN", _lrn_case),
]


def _recorded_inputs():
    x = (np.arange(12, dtype=np.float32).reshape(2, 2, 1, 3) % 5) / 3 - 0.5
    dy = (np.arange(12, dtype=np.float32).reshape(2, 2, 1, 3) % 7) / 4 - 0.6
    return x, dy, np.float32([0.5, -1.0, 2.0]), np.float32([0.1, 0.2, -0.3])


# Recorded with TensorFlow 2.21: y, batch_mean, batch_variance, dx, dscale, doffset.
RECORDED = {
    True: [
        [-0.52137, 0.696972, 0.563868, 0.410685, -1.290916, -2.891605, -0.210685, 0.034343,
         2.291605, 0.72137, 1.359602, -1.163868],
        [0.166667, 0.083333, 0.0],
        [0.37037, 0.324074, 0.185185],
        [-0.595804, 0.374229, -0.449663, 0.035762, -0.625716, 0.053186, 0.779786, 1.034859,
         -0.053186, -0.219744, -0.783372, 0.449663],
        [0.155342, 0.496972, -1.51177],
        [0.35, -0.4, 0.6],
    ],
    False: [
        [-0.198511, 0.458627, -0.673408, 0.299007, -0.246719, -2.540448, -0.032672, 0.223512,
         0.260112, 0.464847, 0.693742, -1.606928],
        [0.1, 0.2, 0.3],
        [1.0, 2.0, 0.5],
        [-0.298511, 0.246871, -0.280056, 0.074628, -0.282138, 1.820364, 0.447767, 0.423207,
         -0.980196, -0.049752, -0.105802, 1.120224],
        [0.106137, 0.209253, -1.06888],
        [0.35, -0.4, 0.6],
    ],
}
