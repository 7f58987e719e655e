"""LoggingTensorHook as TF1 programs use it: tensors named by their op, the elapsed time on the
same line as the values, and the estimator's evaluation announcing one restore."""

import logging

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture
def info_records(caplog):
    logger = logging.getLogger("tensorflow")
    old = logger.level
    tf.logging.set_verbosity(tf.logging.INFO)
    caplog.set_level(logging.INFO, logger="tensorflow")
    yield caplog
    logger.setLevel(old)


def _messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "tensorflow"]


def test_bare_op_name_logs_its_first_output(info_records):
    # cnn_mnist.py logs {"probabilities": "softmax_tensor"}: an op name, resolved as "op:0".
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        probs = tf.nn.softmax(x, name="probs_op")
        hook = tf.train.LoggingTensorHook({"p": "probs_op"}, every_n_iter=1)
        feed = np.array([[0.0, 1.0, 2.0], [3.0, 3.0, 3.0]], np.float32)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            got = sess.run(probs, {x: feed})
    e = np.exp(feed - feed.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    lines = [m for m in _messages(info_records) if m.startswith("p = ")]
    assert len(lines) == 1
    assert "None" not in lines[0]
    # The logged values are the softmax rows (printed without scientific notation).
    printed = lines[0][len("p = "):]
    with np.printoptions(suppress=True):
        assert printed == str(want.astype(np.float32))


def test_elapsed_time_shares_the_values_line(info_records):
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter")
        bump = tf.assign_add(counter, 5)
        hook = tf.train.LoggingTensorHook(["counter:0"], every_n_iter=2)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(3):
                sess.run(bump)
    lines = [m for m in _messages(info_records) if m.startswith("counter:0 = ")]
    # Logged at iterations 0 and 2; the second carries "(x.xxx sec)" on the same line.
    assert len(lines) == 2
    assert not lines[0].endswith("sec)")
    value, _, rest = lines[1][len("counter:0 = "):].partition(" ")
    assert rest.startswith("(") and rest.endswith(" sec)")
    assert float(rest[1:-len(" sec)")]) >= 0.0
    assert int(value) in (10, 15)  # fetched ref read before or after the step's update
    assert not any(m.startswith("(") for m in _messages(info_records))


def test_name_of_multi_output_op_is_ambiguous():
    with tf.Graph().as_default():
        tf.unstack(tf.constant([1.0, 2.0]), name="two_outputs")
        hook = tf.train.LoggingTensorHook({"v": "two_outputs"}, every_n_iter=1)
        with pytest.raises(ValueError, match="two_outputs is ambiguous"):
            hook.begin()


def test_unknown_name_raises_key_error():
    with tf.Graph().as_default():
        hook = tf.train.LoggingTensorHook({"v": "no_such_op"}, every_n_iter=1)
        with pytest.raises(KeyError, match="no_such_op"):
            hook.begin()


def test_checkpoint_saver_writes_graph_and_meta_graph_events(tmp_path):
    # TensorBoard's graph view reads the graph from the events file of the checkpoint dir.
    with tf.Graph().as_default() as g:
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.5, -2.0], name="w")
        train = tf.group(tf.assign_add(step, 1), tf.assign_sub(w, [0.5, 0.5]))
        hooks = [tf.train.StopAtStepHook(last_step=3)]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                               save_summaries_steps=None,
                                               save_summaries_secs=None) as sess:
            while not sess.should_stop():
                sess.run(train)
        node_names = {op.name for op in g.get_operations()}
    events = [e for f in sorted(tmp_path.glob("events.out.tfevents.*"))
              for e in tf.train.summary_iterator(str(f))]
    graphs = [e for e in events if e.HasField("graph_def")]
    metas = [e for e in events if e.HasField("meta_graph_def")]
    assert len(graphs) == 1 and len(metas) == 1
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(graphs[0].graph_def)
    assert {n.name for n in graph_def.node} == node_names
    meta = tf.MetaGraphDef()
    meta.ParseFromString(metas[0].meta_graph_def)
    assert meta.saver_def.filename_tensor_name.endswith(":0")
    assert {n.name for n in meta.graph_def.node} == node_names
    # The checkpoint it saved holds the trained value: 1.5 - 3 * 0.5, -2.0 - 3 * 0.5.
    reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(str(tmp_path)))
    np.testing.assert_allclose(reader.get_tensor("w"), [0.0, -3.5])
