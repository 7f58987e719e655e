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
    "lookup": ["StaticHashTable", "StaticVocabularyTable", "KeyValueTensorInitializer",
               "TextFileInitializer", "TextFileIndex", "experimental"],
    "saved_model": ["builder", "loader", "load", "simple_save", "tag_constants",
                    "signature_constants", "signature_def_utils", "utils", "main_op",
                    "build_tensor_info", "predict_signature_def", "Builder", "SERVING"],
    "linalg": ["inv", "det", "slogdet", "cholesky", "qr", "svd", "eigh", "solve", "lstsq",
               "triangular_solve", "norm", "trace", "einsum", "matmul", "band_part", "eye"],
    "distributions": ["Normal", "Bernoulli", "Categorical", "Uniform", "Exponential", "Gamma",
                      "Beta", "Dirichlet", "Multinomial", "DirichletMultinomial", "Laplace",
                      "StudentT", "Distribution", "kl_divergence", "RegisterKL",
                      "ReparameterizationType", "FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED"],
    "signal": ["fft", "ifft", "rfft", "irfft", "fft2d", "rfft3d", "fftshift", "ifftshift", "frame",
               "overlap_and_add", "hann_window", "hamming_window", "stft", "inverse_stft",
               "inverse_stft_window_fn", "linear_to_mel_weight_matrix",
               "mfccs_from_log_mel_spectrograms", "dct", "idct"],
    "spectral": ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d",
                 "irfft2d", "rfft3d", "irfft3d", "dct", "idct"],
}


ROOT = ["einsum", "norm", "py_func", "numpy_function", "custom_gradient", "make_template",
        "sort", "argsort", "roll", "repeat", "searchsorted", "disable_v2_behavior",
        "disable_eager_execution", "executing_eagerly", "sparse_tensor_dense_matmul",
        "sparse_reduce_sum", "extract_image_patches", "matrix_inverse", "qr", "svd",
        "space_to_batch_nd", "unsorted_segment_mean", "setdiff1d", "get_logger"]
ROOT += ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d"]
ROOT += ["igamma", "igammac", "betainc", "zeta", "polygamma", "spectral", "signal"]
ROOT += ["tables_initializer", "initialize_all_tables"]
ROOT += ["Summary", "SessionLog", "HistogramProto", "SummaryMetadata", "Event", "LogMessage",
         "MetaGraphDef", "NameAttrList", "TensorInfo", "OpError", "NoGradient",
         "UnconnectedGradients", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
         "tensor_scatter_nd_sub", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
         "tensor_scatter_update", "batch_scatter_update", "verify_tensor_all_finite",
         "assert_rank_in", "assert_same_float_dtype", "assert_proper_iterable",
         "convert_to_tensor_or_indexed_slices", "timestamp", "conv2d_backprop_filter_v2",
         "conv2d_backprop_input_v2"]
NAMES.update({"dtypes": ["DType", "as_dtype", "cast", "complex", "saturate_cast", "float32"],
              "nest": ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure",
                       "is_nested"],
              "sets": ["set_intersection", "set_union", "set_difference", "set_size"],
              "bitwise": ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
                          "right_shift"]})
NAMES["random"] = ["stateless_uniform", "stateless_normal", "stateless_truncated_normal",
                   "stateless_categorical", "stateless_multinomial"]
NAMES["io"] = NAMES["io"] + ["PaddingFIFOQueue", "PriorityQueue", "RandomShuffleQueue",
                             "QueueBase", "write_graph", "match_filenames_once",
                             "encode_base64", "decode_base64", "serialize_tensor",
                             "parse_tensor", "decode_json_example", "decode_compressed"]
NAMES["train"] = NAMES["train"] + ["ClusterDef", "JobDef", "ServerDef"]
NAMES["math"] = NAMES["math"] + ["igamma", "igammac", "betainc", "zeta", "polygamma", "bessel_i0",
                                 "bessel_i0e", "bessel_i1", "bessel_i1e", "xlog1py", "erfcinv",
                                 "nextafter"]

NAMES["nn"] = NAMES["nn"] + ["ctc_loss", "ctc_loss_v2", "ctc_greedy_decoder",
                             "ctc_beam_search_decoder", "ctc_unique_labels", "collapse_repeated",
                             "ctc_beam_search_decoder_v2",
                             "dilation2d", "erosion2d", "conv_transpose",
                             "atrous_conv2d_transpose", "with_space_to_batch",
                             "depthwise_conv2d_backprop_input",
                             "depthwise_conv2d_backprop_filter",
                             "batch_norm_with_global_normalization", "fractional_max_pool",
                             "fractional_avg_pool"]
ROOT += ["required_space_to_batch_paddings"]
NAMES["strings"] = ["unicode_transcode", "unicode_encode", "unicode_script",
                    "unsorted_segment_join", "ngrams", "join", "split"]
NAMES["keras"] = ["layers", "backend", "Sequential", "Model", "Input", "optimizers", "losses",
                  "activations", "initializers", "regularizers", "constraints", "utils",
                  "metrics", "models"]
NAMES["estimator"] = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "TrainSpec",
                       "EvalSpec", "train_and_evaluate", "LinearClassifier", "LinearRegressor",
                       "DNNClassifier", "DNNRegressor", "DNNLinearCombinedClassifier",
                       "DNNLinearCombinedRegressor", "BaselineClassifier", "BaselineRegressor",
                       "LatestExporter", "BestExporter", "FinalExporter", "Exporter", "export",
                       "inputs", "SessionRunHook", "LoggingTensorHook", "StopAtStepHook",
                       "CheckpointSaverHook", "CheckpointSaverListener", "SummarySaverHook",
                       "StepCounterHook", "NanTensorHook", "WarmStartSettings", "VocabInfo",
                       "classifier_parse_example_spec", "add_metrics", "experimental",
                       "BinaryClassHead", "MultiClassHead", "RegressionHead",
                       "LinearEstimator", "DNNEstimator", "BaselineEstimator",
                       "DNNLinearCombinedEstimator"]
NAMES["distribute"] = ["cluster_resolver", "MirroredStrategy", "OneDeviceStrategy", "Strategy",
                       "StrategyExtended", "ReplicaContext", "ReduceOp", "InputContext",
                       "InputReplicationMode", "CrossDeviceOps", "ReductionToOneDevice",
                       "HierarchicalCopyAllReduce", "NcclAllReduce", "get_strategy",
                       "has_strategy", "get_replica_context", "in_cross_replica_context",
                       "experimental_set_strategy", "get_loss_reduction", "experimental"]
NAMES["keras"] = NAMES["keras"] + ["estimator"]
NAMES["feature_column"] = ["linear_model", "input_layer", "numeric_column", "crossed_column",
                           "categorical_column_with_vocabulary_file",
                           "weighted_categorical_column", "shared_embedding_columns",
                           "sequence_categorical_column_with_identity",
                           "sequence_categorical_column_with_hash_bucket",
                           "sequence_categorical_column_with_vocabulary_list",
                           "sequence_categorical_column_with_vocabulary_file",
                           "sequence_numeric_column"]
NAMES["data"] = NAMES["data"] + ["Options", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]
NAMES["data.experimental"] = [
    "OptimizationOptions", "ThreadingOptions", "StatsOptions",
    "DistributeOptions", "MapVectorizationOptions", "make_csv_dataset",
    "make_batched_features_dataset", "scan", "unique", "group_by_reducer", "Reducer",
    "get_next_as_optional", "Optional", "TFRecordWriter", "cardinality", "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY", "rejection_resample", "take_while"]
NAMES["contrib.feature_column"] = ["sequence_input_layer", "sequence_numeric_column",
                                   "sequence_categorical_column_with_identity"]
NAMES["sparse"] = NAMES["sparse"] + ["cross", "cross_hashed"]
ROOT += ["function", "GradientTape", "TensorSpec", "RaggedTensor", "ragged"]
NAMES["ragged"] = ["constant", "range", "RaggedTensorValue"]


def test_root_names():
    missing = [name for name in ROOT if not hasattr(tf, name)]
    assert not missing, f"tf lacks {missing}"


@pytest.mark.parametrize("namespace", sorted(NAMES))
def test_namespace_names(namespace):
    module = tf
    for part in namespace.split("."):
        module = getattr(module, part)
    missing = [name for name in NAMES[namespace] if not hasattr(module, name)]
    assert not missing, f"tf.{namespace} lacks {missing}"
