"""The TF1 namespaces expose the names TF1 programs use."""

import pytest

import tensorflux as tf

NAMES = {
    "io": ["parse_example", "parse_single_example", "FixedLenFeature", "VarLenFeature",
           "TFRecordWriter", "read_file", "decode_png", "decode_raw", "gfile"],
    "queue": ["FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"],
    "debugging": ["Assert", "check_numerics", "assert_equal"],
    "nn": ["relu", "conv2d", "max_pool", "dynamic_rnn", "rnn_cell", "embedding_lookup",
           "nce_loss", "sampled_softmax_loss", "sigmoid", "tanh"],
    "train": ["AdamOptimizer", "Saver", "Server", "ClusterSpec", "MonitoredTrainingSession",
              "Supervisor", "replica_device_setter", "start_queue_runners", "Example"],
    "image": ["resize_images", "random_flip_left_right", "decode_png"],
    "summary": ["scalar", "histogram", "FileWriter", "merge_all"],
    "layers": ["dense", "conv2d", "batch_normalization"],
    "losses": ["softmax_cross_entropy", "get_total_loss"],
    "metrics": ["accuracy", "auc"],
    "python_io": ["TFRecordWriter", "tf_record_iterator"],
}


@pytest.mark.parametrize("namespace", sorted(NAMES))
def test_namespace_names(namespace):
    module = getattr(tf, namespace)
    missing = [name for name in NAMES[namespace] if not hasattr(module, name)]
    assert not missing, f"tf.{namespace} lacks {missing}"
