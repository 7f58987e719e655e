"""`tf.io`: file and record I/O, parsing and serialization (TF 1.15's `tf.io` names)."""

from tensorflux.lib.tfrecord import (TFRecordCompressionType, TFRecordOptions, TFRecordWriter,
                                     tf_record_iterator)
from tensorflux.ops.image_codec_ops import (decode_bmp, decode_gif, decode_image, decode_jpeg,
                                            decode_png, encode_jpeg, encode_png,
                                            extract_jpeg_shape, is_jpeg)
from tensorflux.ops.io_ops_readers import matching_files, read_file, write_file
from tensorflux.ops.parsing_ops import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature,
                                        decode_csv, parse_example, parse_single_example)
from tensorflux.ops.sequence_parsing_ops import parse_single_sequence_example
from tensorflux.ops.string_ops import decode_raw
from tensorflux.platform import gfile
from tensorflux.ops.sparse_io_ops import (deserialize_many_sparse, serialize_many_sparse,
                                          serialize_sparse)
from tensorflux.ops.data_flow_ops import (FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase,
                                          RandomShuffleQueue)
from tensorflux.framework.graph_util import write_graph
from tensorflux.train.input import match_filenames_once
from tensorflux.ops.string_codec_ops import decode_base64, encode_base64
from tensorflux.ops.io_extra_ops import (decode_compressed, decode_json_example, parse_tensor,
                                         serialize_tensor)
