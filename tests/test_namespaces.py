"""The TF1 namespaces expose the names TF1 programs use."""

import pytest

import tensorflux as tf

NAMES = {
    "io": ["parse_example", "parse_single_example", "FixedLenFeature", "VarLenFeature",
           "TFRecordWriter", "read_file", "decode_png", "decode_raw", "gfile"],
    "queue": ["FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"],
    "debugging": ["Assert", "check_numerics", "assert_equal"],
    "nn": ["relu", "conv2d", "max_pool", "dynamic_rnn", "rnn_cell", "embedding_lookup",
           "nce_loss", "sampled_softmax_loss", "sigmoid", "tanh", "conv1d", "conv3d",
           "max_pool3d", "max_pool_with_argmax", "pool", "depth_to_space", "space_to_depth",
           "embedding_lookup_sparse", "safe_embedding_lookup_sparse", "zero_fraction"],
    "train": ["AdamOptimizer", "Saver", "Server", "ClusterSpec", "MonitoredTrainingSession",
              "Supervisor", "replica_device_setter", "start_queue_runners", "Example",
              "SyncReplicasOptimizer", "AdagradDAOptimizer", "warm_start", "VocabInfo",
              "checkpoints_iterator", "piecewise_constant_decay"],
    "image": ["resize_images", "random_flip_left_right", "decode_png", "crop_and_resize",
              "non_max_suppression", "extract_patches", "ssim", "psnr", "draw_bounding_boxes",
              "sample_distorted_bounding_box"],
    "summary": ["scalar", "histogram", "FileWriter", "merge_all"],
    "layers": ["dense", "conv2d", "batch_normalization", "conv1d", "conv2d_transpose",
               "separable_conv2d", "conv3d", "max_pooling1d", "max_pooling3d"],
    "losses": ["softmax_cross_entropy", "get_total_loss"],
    "metrics": ["accuracy", "auc", "mean_iou", "precision_at_k", "recall_at_k",
                "mean_per_class_accuracy", "precision_at_thresholds"],
    "sparse": ["sparse_dense_matmul", "reduce_sum", "add", "concat", "reshape", "reorder",
               "retain", "slice", "split", "to_dense", "from_dense", "to_indicator", "softmax"],
    "math": ["xlogy", "erfinv", "cumulative_logsumexp", "bincount", "confusion_matrix"],
    "data": ["Dataset", "TFRecordDataset", "TextLineDataset", "Iterator",
             "make_one_shot_iterator", "make_initializable_iterator", "experimental"],
    "compat": ["v1", "as_bytes", "as_text"],
    "python_io": ["TFRecordWriter", "tf_record_iterator"],
    "linalg": ["inv", "det", "slogdet", "cholesky", "qr", "svd", "eigh", "solve", "lstsq",
               "triangular_solve", "norm", "trace", "einsum", "matmul", "band_part", "eye"],
}


ROOT = ["einsum", "norm", "py_func", "numpy_function", "custom_gradient", "make_template",
        "sort", "argsort", "roll", "repeat", "searchsorted", "disable_v2_behavior",
        "disable_eager_execution", "executing_eagerly", "sparse_tensor_dense_matmul",
        "sparse_reduce_sum", "extract_image_patches", "matrix_inverse", "qr", "svd",
        "space_to_batch_nd", "unsorted_segment_mean", "setdiff1d", "get_logger"]


def test_root_names():
    missing = [name for name in ROOT if not hasattr(tf, name)]
    assert not missing, f"tf lacks {missing}"


@pytest.mark.parametrize("namespace", sorted(NAMES))
def test_namespace_names(namespace):
    module = getattr(tf, namespace)
    missing = [name for name in NAMES[namespace] if not hasattr(module, name)]
    assert not missing, f"tf.{namespace} lacks {missing}"
