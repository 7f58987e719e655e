"""Writing to a closed FileWriter is a no-op with a warning until `reopen` (TF 1.x)."""

import warnings

import tensorflux as tf
from tensorflux.summary import summary_iterator


def _values(path):
    return [v.simple_value for e in summary_iterator(path) for v in e.summary.value]


def test_closed_writer_drops_events_until_reopened(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    value = tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=1.5)])
    writer.add_summary(value, 1)
    writer.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=9.0)]), 2)
    assert any("closed FileWriter" in str(w.message) for w in caught)
    writer.reopen()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=2.5)]), 3)
    writer.close()
    paths = list(tmp_path.iterdir())
    assert len(paths) == 1
    assert _values(str(paths[0])) == [1.5, 2.5]
