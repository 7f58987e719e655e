"""`tf.python_io`: TFRecord files from Python (TF1 names).

Example:
    >>> with tf.python_io.TFRecordWriter("/tmp/data.tfrecord") as writer:
    ...     writer.write(b"record")
    >>> list(tf.python_io.tf_record_iterator("/tmp/data.tfrecord"))
    [b'record']
"""

from tensorflux.lib.formats.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
