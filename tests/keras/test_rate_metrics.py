"""SensitivityAtSpecificity / SpecificityAtSensitivity (TF 1.15 semantics: the rate at the
threshold whose other rate is closest to the target) and the metric/loss name aliases."""

import numpy as np
import pytest

import tensorflux as tf

LABELS = np.array([0, 0, 1, 1, 1, 0, 1, 0], np.float32)
SCORES = np.array([0.1, 0.4, 0.35, 0.8, 0.9, 0.6, 0.2, 0.05], np.float32)


def _rates(thresholds):
    pos, neg = SCORES[LABELS == 1], SCORES[LABELS == 0]
    sens = np.array([(pos > t).mean() for t in thresholds])
    spec = np.array([(neg <= t).mean() for t in thresholds])
    return sens, spec


@pytest.mark.parametrize("target", [0.0, 0.5, 0.75, 1.0])
def test_rates_against_numpy(target):
    thresholds = np.linspace(0, 1, 11).astype(np.float32)   # compared in float32, as in-graph
    sens, spec = _rates(thresholds)
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.keras.metrics.SensitivityAtSpecificity(target, num_thresholds=11)
        b = tf.keras.metrics.SpecificityAtSensitivity(target, num_thresholds=11)
        updates = [a.update_state(LABELS, SCORES), b.update_state(LABELS, SCORES)]
        sess.run(tf.local_variables_initializer())
        sess.run(tf.global_variables_initializer())
        sess.run(updates)
        got_a, got_b = sess.run([a.result(), b.result()])
    assert got_a == pytest.approx(sens[np.argmin(np.abs(spec - target))])
    assert got_b == pytest.approx(spec[np.argmin(np.abs(sens - target))])


def test_rate_metric_arguments_and_config():
    with pytest.raises(ValueError, match="range"):
        tf.keras.metrics.SensitivityAtSpecificity(1.5)
    with pytest.raises(ValueError, match="num_thresholds"):
        tf.keras.metrics.SpecificityAtSensitivity(0.5, num_thresholds=0)
    config = tf.keras.metrics.SpecificityAtSensitivity(0.3, name="s").get_config()
    assert config["sensitivity"] == 0.3 and config["num_thresholds"] == 200


def test_aliases():
    m, l = tf.keras.metrics, tf.keras.losses
    assert m.MSE is m.mse is l.mean_squared_error
    assert m.KLD is m.kl_divergence is l.kl_divergence is l.kullback_leibler_divergence
    assert m.cosine is m.cosine_proximity and m.log_cosh is m.logcosh
    assert m.MAPE is m.mape and m.MSLE is m.msle and m.MAE is m.mae
