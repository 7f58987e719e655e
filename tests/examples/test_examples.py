"""The TF1-style programs in examples/ run end to end on small settings and reach real results:
losses fall, accuracies clear thresholds, event files and checkpoints are written and resumed."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorflux as tf

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}",
                                                  os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def events(directory):
    files = [os.path.join(directory, f) for f in os.listdir(directory) if "tfevents" in f]
    assert len(files) == 1, files
    return list(tf.train.summary_iterator(files[0]))


def test_mnist_softmax_summaries(tmp_path):
    module = load("mnist_softmax_summaries")
    log_dir = str(tmp_path / "logs")
    result = module.main(["--steps", "150", "--eval_every", "50", "--log_dir", log_dir])
    losses = result["losses"]
    assert len(losses) == 150
    assert np.mean(losses[-20:]) < 0.3 * np.mean(losses[:20])
    assert result["test_accuracy"] > 0.85
    assert result["test_accuracies"][0] < 0.5 < result["test_accuracies"][-1]

    train = events(os.path.join(log_dir, "train"))
    assert any(event.HasField("graph_def") for event in train)
    values = [v for event in train if event.HasField("summary") for v in event.summary.value]
    tags = {v.tag for v in values}
    assert {"accuracy_1", "cross_entropy_1", "dropout/dropout_keep_probability"} <= tags
    assert any(v.HasField("histo") for v in values if "layer1/weights" in v.tag)
    assert any(v.HasField("image") for v in values)
    steps = sorted({event.step for event in train if event.HasField("summary")})
    assert steps == list(range(150))
    test = events(os.path.join(log_dir, "test"))
    accuracy = [v.simple_value for event in test if event.HasField("summary")
                for v in event.summary.value if v.tag == "accuracy_1"]
    np.testing.assert_allclose(accuracy, result["test_accuracies"], rtol=1e-6)

    assert tf.train.latest_checkpoint(log_dir) == result["checkpoint"]
    assert result["checkpoint"].endswith("model.ckpt-150")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(result["checkpoint"] + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, result["checkpoint"])
            assert sess.run(tf.train.get_global_step()) == 150


def test_input_pipeline_distortions_trains_and_resumes(tmp_path):
    module = load("input_pipeline_distortions")
    data_dir, train_dir = str(tmp_path / "data"), str(tmp_path / "train")
    args = ["--batch_size", "16", "--shards", "2", "--examples_per_shard", "40",
            "--data_dir", data_dir, "--train_dir", train_dir]
    result = module.main(["--steps", "120", *args])
    assert len(result["filenames"]) == 2
    for path in result["filenames"]:
        assert sum(1 for _ in tf.python_io.tf_record_iterator(path)) == 40
    losses = result["losses"]
    assert len(losses) == 120
    assert np.mean(losses[-20:]) < 0.6 * np.mean(losses[:20])
    assert np.mean(result["accuracies"][-20:]) > 0.6
    assert result["checkpoint"].endswith("model.ckpt-120")
    summaries = [f for f in os.listdir(train_dir) if "tfevents" in f]
    assert summaries

    resumed = module.main(["--steps", "140", *args])
    assert len(resumed["losses"]) == 20  # the global step continued from 120
    assert resumed["checkpoint"].endswith("model.ckpt-140")
    assert np.mean(resumed["losses"]) < np.mean(losses[:20])


def test_word2vec_skipgram_learns_topics():
    module = load("word2vec_skipgram")
    result = module.main(["--steps", "1000"])
    losses = result["losses"]
    assert np.mean(losses[-100:]) < 0.7 * np.mean(losses[:100])
    assert all(result["sparse_gradients"].values())
    assert set(result["sparse_gradients"]) == {"embeddings/embeddings", "weights/nce_weights",
                                              "biases/nce_biases"}
    assert result["same_topic_fraction"] > 0.6  # chance is 0.2


@pytest.mark.parametrize("name,args", [("word2vec_skipgram", ["--steps", "50"])])
def test_examples_run_standalone(name, args):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(EXAMPLES))
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, f"{name}.py"), *args],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "neighbours sharing the word's topic" in done.stderr + done.stdout


def test_sync_replicas_with_a_backup_worker():
    """Three workers, two gradients per update: the model converges, every update counts,
    and the deliberately slow worker contributes far fewer steps (its late gradients are
    dropped) without holding the others up."""
    result = load("sync_replicas").main(["--steps", "40", "--slow_ms", "30"])
    assert result["global_step"] == 40
    assert result["loss"] < 0.1
    assert result["worker2_steps"] < min(result["worker0_steps"], result["worker1_steps"])
    assert result["seconds"] < 20  # workers poll for the chief with backoff, not every 30 s


def test_distribute_mirrored_trains_in_both_styles(tmp_path):
    """examples/distribute_mirrored.py: two replicas keep equal variable copies and learn the
    blobs in a custom loop and in an Estimator with train/eval_distribute."""
    module = load("distribute_mirrored")
    result = module.main(["--steps", "40", "--model_dir", str(tmp_path)])
    assert result["loop"]["replicas"] == 2 and result["loop"]["copies_equal"]
    assert result["estimator"]["global_step"] == 40
    assert result["estimator"]["accuracy"] > 0.9


def test_tpu_estimator_text_classifier_on_cpu(tmp_path):
    """examples/tpu_estimator_text_classifier.py: BERT-shaped TPUEstimator(use_tpu=False)
    training from TFRecords, evaluation metrics from eval_metrics, and a warm-started second
    estimator predicting exactly as the first."""
    module = load("tpu_estimator_text_classifier")
    result = module.main(["--train_steps", "150", "--output_dir", str(tmp_path)])
    assert result["eval"]["global_step"] == 150
    assert result["eval"]["eval_accuracy"] >= 0.6   # chance is about 0.5
    assert set(result["eval"]) >= {"eval_accuracy", "eval_loss", "loss"}
    np.testing.assert_allclose(result["warm_probs"], result["probs"], atol=1e-5)
    np.testing.assert_allclose(result["probs"].sum(axis=1), 1.0, atol=1e-5)
