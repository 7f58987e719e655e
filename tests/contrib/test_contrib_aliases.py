"""tf.contrib.signal / stateless / testing: the same functions as core, with real values;
every PROVIDED contrib module imports and is absent from missing.REPLACEMENTS."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib import PROVIDED
from tensorflux.contrib.missing import REPLACEMENTS


def test_provided_modules_import_and_are_not_listed_missing():
    for name in ("crf", "image", "predictor", "estimator", "signal", "stateless", "testing",
                 "nn", "sparsemax"):
        assert name in PROVIDED and name not in REPLACEMENTS
        assert getattr(tf.contrib, name).__name__ == f"tensorflux.contrib.{name}"


def test_contrib_signal_is_tf_signal():
    for name in ("stft", "inverse_stft", "frame", "overlap_and_add", "hann_window",
                 "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms"):
        assert getattr(tf.contrib.signal, name) is getattr(tf.signal, name)
    x = np.arange(10, dtype=np.float32)
    with tf.Session() as sess:
        frames = sess.run(tf.contrib.signal.frame(x, 4, 3))
    np.testing.assert_array_equal(frames, [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    with pytest.raises(tf.contrib.ContribNotProvidedError, match="tf.signal"):
        _ = tf.contrib.signal.nope


def test_contrib_stateless_is_seed_determined():
    st = tf.contrib.stateless
    a = st.stateless_random_uniform([3, 2], seed=[1, 2])
    b = st.stateless_random_uniform([3, 2], seed=[1, 2])
    c = st.stateless_random_normal([3, 2], seed=[1, 3])
    t = st.stateless_truncated_normal([1000], seed=[4, 5])
    m = st.stateless_multinomial(tf.math.log([[0.0, 1.0]]), 5, seed=[1, 1])
    with tf.Session() as sess:
        a_v, b_v, c_v, t_v, m_v = sess.run([a, b, c, t, m])
    np.testing.assert_array_equal(a_v, b_v)
    assert ((a_v >= 0) & (a_v < 1)).all() and not np.allclose(a_v, c_v)
    assert np.abs(t_v).max() <= 2.0
    assert m_v.tolist() == [[1] * 5]
    assert st.stateless_random_uniform is tf.random.stateless_uniform


def test_contrib_testing_reads_back_summaries(tmp_path):
    with tf.Graph().as_default():
        v = tf.placeholder(tf.float32, [])
        summ = tf.summary.scalar("loss", v)
        hist = tf.summary.histogram("h", tf.constant([1.0, 2.0]))
        writer = tf.summary.FileWriter(str(tmp_path))
        with tf.Session() as sess:
            for step, value in [(1, 3.0), (5, 1.5), (3, 2.0)]:
                writer.add_summary(sess.run(summ, {v: value}), step)
            writer.add_summary(sess.run(hist), 2)
        writer.close()
    testing = tf.contrib.testing
    path = testing.latest_event_file(str(tmp_path))
    assert path is not None and "events." in path
    events = testing.latest_events(str(tmp_path))
    assert len(testing.latest_summaries(str(tmp_path))) == 4
    assert len(events) == 5  # plus the file_version event
    assert testing.simple_values_from_events(events, ["loss"]) == {"loss": 1.5}
    with pytest.raises(ValueError, match="not a scalar"):
        testing.simple_values_from_events(events, ["h"])
    assert testing.latest_event_file(str(tmp_path / "none")) is None
    assert testing.latest_events(str(tmp_path / "none")) == []


def test_importing_an_absent_contrib_module_names_it_and_the_advice():
    import importlib

    with pytest.raises(ModuleNotFoundError, match=r"tf\.contrib\.gan is not provided"):
        importlib.import_module("tensorflux.contrib.gan")
    with pytest.raises(ImportError, match=r"tf\.contrib\.tensor_forest is not provided"):
        importlib.import_module("tensorflux.contrib.tensor_forest.python.tensor_forest")
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module("tensorflux.contrib.no_such_module_at_all")
    assert "not provided" not in str(info.value)
    assert importlib.import_module("tensorflux.contrib.layers").instance_norm
