"""`tf.contrib.training`: HParams, the slim-style create_train_op, and queue-based bucketing
(bucket, bucket_by_sequence_length)."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.training.bucket_ops import bucket, bucket_by_sequence_length
from tensorflux.contrib.training.hparam import HParams, parse_values
from tensorflux.contrib.training.training import *  # noqa: F403

__getattr__ = _missing.module_getattr("contrib.training", {
    "*": "tf.train (hooks, MonitoredTrainingSession) and tf.data",
    "train": "tf.train.MonitoredTrainingSession",
    "batch_sequences_with_states": "not supported (tf.data with padded_batch)",
    "stratified_sample": "tf.data with filter / rejection_resample",
    "StopAfterNEvalsHook": "tf.train.StopAtStepHook",
    "evaluate_repeatedly": "tf.estimator.Estimator.evaluate",
})
