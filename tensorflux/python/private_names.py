"""The TensorFlow-private modules that `tensorflux.python` serves as facades: each maps the
names TF1 programs use from that module (`from tensorflow.python.ops import control_flow_ops`,
then `control_flow_ops.with_dependencies(...)`) to the object the public API exports, by the
module that defines it here.

`_FACADES[path][module]` is a space-separated list of names; `name=attr` where the defining
module calls it `attr`. The names are those of the TF module that are public API objects in
TF 1.x, plus the private helpers programs of that era commonly call.
"""

from __future__ import annotations

import importlib

_FACADES = {
    "client.session": {
        "tensorflux.runtime.session": "InteractiveSession Session",
    },
    "data.ops.dataset_ops": {
        "tensorflux.data.dataset_ops": "Dataset DatasetV1=Dataset",
        "tensorflux.data.iterator_ops": (
            "get_legacy_output_classes=get_output_classes "
            "get_legacy_output_shapes=get_output_shapes get_legacy_output_types=get_output_types "
            "make_initializable_iterator make_one_shot_iterator"
        ),
    },
    "data.ops.iterator_ops": {
        "tensorflux.data.iterator_ops": "Iterator",
        "tensorflux.data.optional": "get_next_as_optional",
    },
    "feature_column.feature_column": {
        "tensorflux.feature_column.categorical": (
            "bucketized_column categorical_column_with_hash_bucket "
            "categorical_column_with_identity categorical_column_with_vocabulary_list "
            "numeric_column"
        ),
        "tensorflux.feature_column.crossed": "crossed_column",
        "tensorflux.feature_column.dense": (
            "embedding_column indicator_column input_layer make_parse_example_spec"
        ),
        "tensorflux.feature_column.linear": "linear_model",
        "tensorflux.feature_column.shared_embedding": "shared_embedding_columns",
        "tensorflux.feature_column.vocabulary_file": "categorical_column_with_vocabulary_file",
        "tensorflux.feature_column.weighted": "weighted_categorical_column",
    },
    "framework.function": {
        "tensorflux.ops.control_flow.defun": "Defun",
    },
    "framework.graph_io": {
        "tensorflux.lib.formats.graph_file": "write_graph",
    },
    "framework.random_seed": {
        "tensorflux.ops.random.seed": "get_seed set_random_seed",
    },
    "layers.base": {
        "tensorflux.layers.core": "Layer",
    },
    "layers.pooling": {
        "tensorflux.layers.conv3d": "AveragePooling3D MaxPooling3D average_pooling3d max_pooling3d",
        "tensorflux.layers.convolutional": (
            "AveragePooling1D MaxPooling1D average_pooling1d max_pooling1d"
        ),
        "tensorflux.layers.core": "AveragePooling2D MaxPooling2D average_pooling2d max_pooling2d",
    },
    "lib.io.file_io": {
        "tensorflux.platform.gfile": (
            "copy=Copy copy_v2=copy create_dir=mkdir create_dir_v2=mkdir delete_file=remove "
            "delete_file_v2=remove delete_recursively=rmtree delete_recursively_v2=rmtree "
            "file_exists=exists file_exists_v2=exists get_matching_files=glob "
            "get_matching_files_v2=glob is_directory=isdir is_directory_v2=isdir "
            "list_directory=listdir list_directory_v2=listdir recursive_create_dir=makedirs "
            "recursive_create_dir_v2=makedirs rename=Rename rename_v2=rename stat stat_v2=stat "
            "walk=Walk walk_v2=walk"
        ),
    },
    "lib.io.tf_record": {
        "tensorflux.lib.formats.tfrecord": (
            "TFRecordCompressionType TFRecordOptions TFRecordWriter tf_record_iterator"
        ),
    },
    "ops.bitwise_ops": {
        "tensorflux.ops.math.bitwise": (
            "bitwise_and bitwise_or bitwise_xor invert left_shift right_shift"
        ),
    },
    "ops.candidate_sampling_ops": {
        "tensorflux.ops.nn.candidate_sampling": (
            "all_candidate_sampler compute_accidental_hits fixed_unigram_candidate_sampler "
            "learned_unigram_candidate_sampler log_uniform_candidate_sampler "
            "uniform_candidate_sampler"
        ),
    },
    "ops.check_ops": {
        "tensorflux.framework.tensor_util": "is_numeric_tensor",
        "tensorflux.ops.array.constants": "ensure_shape",
        "tensorflux.ops.debug.checks": (
            "assert_equal assert_greater assert_greater_equal assert_integer assert_less "
            "assert_less_equal assert_near assert_negative assert_non_negative "
            "assert_non_positive assert_none_equal assert_positive assert_proper_iterable "
            "assert_rank assert_rank_at_least assert_rank_in assert_same_float_dtype "
            "assert_scalar assert_type"
        ),
        "tensorflux.ops.debug.shape_checks": "assert_shapes",
        "tensorflux.ops.math.nan_safe": "is_non_decreasing is_strictly_increasing",
    },
    "ops.clip_ops": {
        "tensorflux.ops.math.clip": (
            "clip_by_average_norm clip_by_global_norm clip_by_norm global_norm"
        ),
        "tensorflux.ops.math.select": "clip_by_value",
    },
    "ops.confusion_matrix": {
        "tensorflux.ops.math.histogram": "confusion_matrix_v1=confusion_matrix",
    },
    "ops.control_flow_ops": {
        "tensorflux.ops.array.constants": "identity",
        "tensorflux.ops.control_flow.primitives": (
            "case cond control_trigger enter exit group loop_cond merge next_iteration no_op "
            "switch switch_case tuple with_dependencies"
        ),
        "tensorflux.ops.control_flow.while_loop": "while_loop",
        "tensorflux.ops.debug.logging": "Assert",
    },
    "ops.ctc_ops": {
        "tensorflux.ops.nn.ctc": (
            "collapse_repeated ctc_beam_search_decoder ctc_beam_search_decoder_v2 "
            "ctc_greedy_decoder ctc_loss ctc_loss_v2 ctc_unique_labels"
        ),
    },
    "ops.data_flow_ops": {
        "tensorflux.ops.array.partition": "dynamic_partition dynamic_stitch",
        "tensorflux.ops.data_flow.accumulators": (
            "ConditionalAccumulator ConditionalAccumulatorBase SparseConditionalAccumulator"
        ),
        "tensorflux.ops.data_flow.queues": (
            "FIFOQueue PaddingFIFOQueue PriorityQueue QueueBase RandomShuffleQueue"
        ),
    },
    "ops.distributions.bernoulli": {
        "tensorflux.distributions.bernoulli": "Bernoulli",
    },
    "ops.distributions.categorical": {
        "tensorflux.distributions.categorical": "Categorical",
    },
    "ops.distributions.distribution": {
        "tensorflux.distributions": "FULLY_REPARAMETERIZED NOT_REPARAMETERIZED",
        "tensorflux.distributions.distribution": "Distribution ReparameterizationType",
    },
    "ops.distributions.normal": {
        "tensorflux.distributions.normal": "Normal",
    },
    "ops.embedding_ops": {
        "tensorflux.ops.nn.embedding": "embedding_lookup_sparse safe_embedding_lookup_sparse",
        "tensorflux.ops.nn.functions": "embedding_lookup",
    },
    "ops.functional_ops": {
        "tensorflux.ops.control_flow.functional": "foldl foldr map_fn scan",
    },
    "ops.histogram_ops": {
        "tensorflux.ops.math.histogram": "histogram_fixed_width histogram_fixed_width_bins",
    },
    "ops.image_ops": {
        "tensorflux.ops.image.boxes": "draw_bounding_boxes sample_distorted_bounding_box",
        "tensorflux.ops.image.codecs": (
            "decode_bmp decode_gif decode_image decode_jpeg decode_png encode_jpeg encode_png "
            "extract_jpeg_shape is_jpeg"
        ),
        "tensorflux.ops.image.color": (
            "adjust_contrast adjust_hue adjust_saturation convert_image_dtype grayscale_to_rgb "
            "hsv_to_rgb per_image_standardization random_contrast random_hue random_saturation "
            "rgb_to_grayscale rgb_to_hsv"
        ),
        "tensorflux.ops.image.crop": "crop_and_resize_v1=crop_and_resize extract_glimpse",
        "tensorflux.ops.image.geometry": (
            "central_crop crop_to_bounding_box flip_left_right flip_up_down pad_to_bounding_box "
            "random_flip_left_right random_flip_up_down resize_image_with_crop_or_pad "
            "resize_image_with_pad_v1=resize_image_with_pad rot90 transpose=transpose_image"
        ),
        "tensorflux.ops.image.jpeg_ops": "adjust_jpeg_quality random_jpeg_quality",
        "tensorflux.ops.image.nms": (
            "combined_non_max_suppression non_max_suppression non_max_suppression_padded "
            "non_max_suppression_with_overlaps=non_max_suppression_overlaps "
            "non_max_suppression_with_scores"
        ),
        "tensorflux.ops.image.quality": (
            "image_gradients psnr rgb_to_yiq rgb_to_yuv sobel_edges ssim ssim_multiscale "
            "total_variation yiq_to_rgb yuv_to_rgb"
        ),
        "tensorflux.ops.image.resize": (
            "ResizeMethodV1=ResizeMethod resize_area resize_bicubic resize_bilinear resize_images "
            "resize_nearest_neighbor"
        ),
    },
    "ops.io_ops": {
        "tensorflux.ops.io.readers": (
            "FixedLengthRecordReader IdentityReader ReaderBase TFRecordReader TextLineReader "
            "WholeFileReader matching_files read_file write_file"
        ),
        "tensorflux.ops.io.tensor_codec": "serialize_tensor",
    },
    "ops.linalg_ops": {
        "tensorflux.ops.array.diagonal": "eye",
        "tensorflux.ops.linalg.decompositions": (
            "cholesky log_matrix_determinant matrix_determinant matrix_inverse qr "
            "self_adjoint_eig self_adjoint_eigvals svd"
        ),
        "tensorflux.ops.linalg.functions": "norm",
        "tensorflux.ops.linalg.solvers": (
            "cholesky_solve matrix_solve matrix_solve_ls matrix_triangular_solve"
        ),
    },
    "ops.logging_ops": {
        "tensorflux.ops.debug.logging": "Print print_v2=print timestamp",
    },
    "ops.lookup_ops": {
        "tensorflux.ops.data_flow.lookup": (
            "KeyValueTensorInitializer StaticHashTableV1=StaticHashTable "
            "StaticVocabularyTableV1=StaticVocabularyTable TextFileIndex TextFileInitializer "
            "initialize_all_tables tables_initializer"
        ),
        "tensorflux.ops.data_flow.lookup_mutable": "DenseHashTable MutableHashTable",
    },
    "ops.losses.losses": {
        "tensorflux.losses": (
            "Reduction absolute_difference add_loss compute_weighted_loss cosine_distance "
            "get_losses get_regularization_loss get_regularization_losses get_total_loss "
            "hinge_loss huber_loss log_loss mean_pairwise_squared_error mean_squared_error "
            "sigmoid_cross_entropy softmax_cross_entropy sparse_softmax_cross_entropy"
        ),
    },
    "ops.manip_ops": {
        "tensorflux.ops.array.sorting": "roll",
    },
    "ops.map_fn": {
        "tensorflux.ops.control_flow.functional": "map_fn",
    },
    "ops.nn_impl": {
        "tensorflux.ops.math.histogram": "zero_fraction",
        "tensorflux.ops.nn.conv": "depthwise_conv2d separable_conv2d",
        "tensorflux.ops.nn.conv_composites": "batch_norm_with_global_normalization",
        "tensorflux.ops.nn.functions": (
            "batch_normalization fused_batch_norm l2_normalize log_poisson_loss moments "
            "normalize_moments relu_layer sigmoid_cross_entropy_with_logits sufficient_statistics "
            "weighted_cross_entropy_with_logits weighted_moments"
        ),
        "tensorflux.ops.nn.sampled_losses": "nce_loss sampled_softmax_loss",
    },
    "ops.partitioned_variables": {
        "tensorflux.ops.state.partitioned": (
            "create_partitioned_variables fixed_size_partitioner min_max_variable_partitioner "
            "variable_axis_size_partitioner"
        ),
    },
    "ops.random_ops": {
        "tensorflux.ops.random.stateful": (
            "categorical multinomial random_gamma random_normal random_poisson random_shuffle "
            "random_uniform truncated_normal"
        ),
    },
    "ops.script_ops": {
        "tensorflux.ops.script.py_func": "eager_py_func=py_function numpy_function py_func",
    },
    "ops.session_ops": {
        "tensorflux.ops.data_flow.session_ops": (
            "delete_session_tensor get_session_handle get_session_tensor"
        ),
    },
    "ops.sets": {
        "tensorflux.ops.array.sets": "set_difference set_intersection set_size set_union",
    },
    "ops.sparse_ops": {
        "tensorflux.ops.math.special": "unary_op=bessel_i1e",
        "tensorflux.ops.sparse.arithmetic": (
            "sparse_add sparse_maximum sparse_minimum sparse_reduce_max sparse_reduce_max_sparse "
            "sparse_reduce_sum sparse_reduce_sum_sparse sparse_softmax sparse_tensor_dense_matmul"
        ),
        "tensorflux.ops.sparse.composites": (
            "from_dense sparse_expand_dims=expand_dims sparse_eye=eye sparse_merge "
            "sparse_reset_shape sparse_retain sparse_to_indicator sparse_transpose"
        ),
        "tensorflux.ops.sparse.core": "sparse_tensor_to_dense sparse_to_dense",
        "tensorflux.ops.sparse.cross": "sparse_cross sparse_cross_hashed",
        "tensorflux.ops.sparse.serialization": (
            "deserialize_many_sparse serialize_many_sparse serialize_sparse"
        ),
        "tensorflux.ops.sparse.structure": (
            "sparse_concat sparse_fill_empty_rows sparse_reorder sparse_reshape sparse_slice "
            "sparse_split"
        ),
    },
    "ops.special_math_ops": {
        "tensorflux.ops.linalg.einsum": "einsum",
        "tensorflux.ops.math.nan_safe": "lbeta",
    },
    "ops.state_ops": {
        "tensorflux.ops.array.tensor_scatter": "batch_scatter_update",
        "tensorflux.ops.state.variable_ops": (
            "assign assign_add assign_sub count_up_to scatter_add scatter_div scatter_max "
            "scatter_min scatter_mul scatter_nd_add scatter_nd_sub scatter_nd_update scatter_sub "
            "scatter_update"
        ),
    },
    "ops.string_ops": {
        "tensorflux.ops.strings.conversion": (
            "as_string reduce_join string_format string_join string_to_number_v1=string_to_number"
        ),
        "tensorflux.ops.strings.hashing": (
            "decode_base64 encode_base64 string_to_hash_bucket_fast string_to_hash_bucket_strong "
            "string_to_hash_bucket_v1=string_to_hash_bucket"
        ),
        "tensorflux.ops.strings.text": (
            "regex_full_match regex_replace string_length string_lower=lower string_strip "
            "string_upper=upper substr substr_deprecated=substr"
        ),
        "tensorflux.ops.strings.unicode": "unicode_script unicode_transcode unsorted_segment_join",
    },
    "ops.template": {
        "tensorflux.ops.state.template": "make_template",
    },
    "ops.tensor_array_ops": {
        "tensorflux.ops.data_flow.tensor_array_class": "TensorArray",
    },
    "platform.resource_loader": {
        "tensorflux.resource_loader": (
            "get_data_files_path get_path_to_datafile get_root_dir_with_all_resources "
            "load_resource readahead_file_path"
        ),
    },
    "platform.sysconfig": {
        "tensorflux.sysconfig": "get_compile_flags get_include get_lib get_link_flags",
    },
    "platform.test": {
        "tensorflux.ops.autodiff.checker": "compute_gradient compute_gradient_error",
        "tensorflux.test": (
            "gpu_device_name is_built_with_cuda is_built_with_gpu_support is_built_with_rocm "
            "is_gpu_available test_src_dir_path"
        ),
        "tensorflux.testing.benchmark": "Benchmark",
        "tensorflux.testing.local_cluster": "create_local_cluster",
        "tensorflux.testing.test_case": "TestCase get_temp_dir main",
    },
    "profiler.model_analyzer": {
        "tensorflux.profiler.model_analyzer": "Profiler advise profile",
    },
    "profiler.option_builder": {
        "tensorflux.profiler.option_builder": "ProfileOptionBuilder",
    },
    "summary.summary_iterator": {
        "tensorflux.summary.writer": "summary_iterator",
    },
    "summary.writer.writer": {
        "tensorflux.summary.writer": "FileWriter",
    },
    "tools.optimize_for_inference_lib": {
        "tensorflux.platform.flags": "FLAGS",
    },
    "training.adagrad": {
        "tensorflux.train.optimizers": "AdagradOptimizer",
    },
    "training.adam": {
        "tensorflux.train.optimizers": "AdamOptimizer",
    },
    "training.checkpoint_management": {
        "tensorflux.train.checkpoint_utils": (
            "checkpoint_exists generate_checkpoint_state_proto get_checkpoint_mtimes "
            "get_checkpoint_state latest_checkpoint remove_checkpoint update_checkpoint_state"
        ),
    },
    "training.device_setter": {
        "tensorflux.train.device_setter": "replica_device_setter",
    },
    "training.gradient_descent": {
        "tensorflux.train.optimizers": "GradientDescentOptimizer",
    },
    "training.momentum": {
        "tensorflux.train.optimizers": "MomentumOptimizer",
    },
    "training.rmsprop": {
        "tensorflux.train.optimizers": "RMSPropOptimizer",
    },
    "training.server_lib": {
        "tensorflux.distributed.cluster_spec": "ClusterSpec",
        "tensorflux.distributed.server": "Server",
    },
    "training.training": {
        "tensorflux.distributed.cluster_spec": "ClusterSpec",
        "tensorflux.distributed.server": "Server",
        "tensorflux.lib.formats.graph_file": "write_graph",
        "tensorflux.protos.cluster_pb2": "ClusterDef JobDef",
        "tensorflux.protos.example_pb2": "Example SequenceExample",
        "tensorflux.protos.feature_pb2": (
            "BytesList Feature FeatureList FeatureLists Features FloatList Int64List"
        ),
        "tensorflux.protos.saver_pb2": "SaverDef",
        "tensorflux.protos.tensorflow_server_pb2": "ServerDef",
        "tensorflux.summary.writer": "summary_iterator",
        "tensorflux.train.adagrad_da": "AdagradDAOptimizer",
        "tensorflux.train.basic_loops": "basic_train_loop",
        "tensorflux.train.basic_session_run_hooks": (
            "CheckpointSaverHook CheckpointSaverListener FeedFnHook FinalOpsHook "
            "GlobalStepWaiterHook LoggingTensorHook NanLossDuringTrainingError NanTensorHook "
            "ProfilerHook StepCounterHook StopAtStepHook SummarySaverHook"
        ),
        "tensorflux.train.checkpoint_utils": (
            "NewCheckpointReader checkpoint_exists generate_checkpoint_state_proto "
            "get_checkpoint_mtimes get_checkpoint_state init_from_checkpoint latest_checkpoint "
            "list_variables load_checkpoint load_variable update_checkpoint_state"
        ),
        "tensorflux.train.coordinator": "Coordinator LooperThread",
        "tensorflux.train.device_setter": "replica_device_setter",
        "tensorflux.train.input": (
            "batch batch_join input_producer limit_epochs match_filenames_once maybe_batch "
            "maybe_batch_join maybe_shuffle_batch maybe_shuffle_batch_join range_input_producer "
            "shuffle_batch shuffle_batch_join slice_input_producer string_input_producer"
        ),
        "tensorflux.train.learning_rate_decay": (
            "cosine_decay cosine_decay_restarts exponential_decay inverse_time_decay "
            "linear_cosine_decay natural_exp_decay noisy_linear_cosine_decay piecewise_constant "
            "polynomial_decay"
        ),
        "tensorflux.train.meta_graph": "export_meta_graph import_meta_graph",
        "tensorflux.train.monitored_session": (
            "ChiefSessionCreator MonitoredSession MonitoredTrainingSession Scaffold "
            "SessionCreator SingularMonitoredSession WorkerSessionCreator"
        ),
        "tensorflux.train.moving_averages": "ExponentialMovingAverage",
        "tensorflux.train.optimizer": "Optimizer",
        "tensorflux.train.optimizers": (
            "AdadeltaOptimizer AdagradOptimizer AdamOptimizer FtrlOptimizer "
            "GradientDescentOptimizer MomentumOptimizer ProximalAdagradOptimizer "
            "ProximalGradientDescentOptimizer RMSPropOptimizer"
        ),
        "tensorflux.train.queue_runner": "QueueRunner add_queue_runner start_queue_runners",
        "tensorflux.train.saver": "Saver",
        "tensorflux.train.session_manager": "SessionManager",
        "tensorflux.train.session_run_hook": (
            "SecondOrStepTimer SessionRunArgs SessionRunContext SessionRunHook SessionRunValues"
        ),
        "tensorflux.train.supervisor": "Supervisor",
        "tensorflux.train.sync_replicas_optimizer": "SyncReplicasOptimizer",
        "tensorflux.train.training_util": (
            "assert_global_step create_global_step get_global_step get_or_create_global_step "
            "global_step"
        ),
        "tensorflux.train.warm_starting": "VocabInfo warm_start",
    },
    "util.compat": {
        "tensorflux.compat": (
            "as_bytes as_str=as_text as_str_any as_text bytes_or_text_types complex_types "
            "integral_types path_to_str real_types"
        ),
    },
}


def facade_paths() -> frozenset:
    """The private paths (under `tensorflow.python`) served as facades."""
    return frozenset(_FACADES)


def facade_attributes(path: str) -> dict:
    """The attributes of the facade module for the private `path`: name -> object."""
    attributes = {}
    for module_name, names in _FACADES[path].items():
        module = importlib.import_module(module_name)
        for token in names.split():
            name, _, attr = token.partition("=")
            attributes[name] = getattr(module, attr or name)
    return attributes
