"""`tf.io`: file and record I/O, parsing and serialization (TF 1.15's `tf.io` names)."""

from tensorflux.lib.formats.tfrecord import (TFRecordCompressionType, TFRecordOptions,
                                             TFRecordWriter, tf_record_iterator)
from tensorflux.ops.image.jpeg_ops import decode_and_crop_jpeg
from tensorflux.ops.image.codecs import (decode_bmp, decode_gif, decode_image, decode_jpeg,
                                         decode_png, encode_jpeg, encode_png, extract_jpeg_shape,
                                         is_jpeg)
from tensorflux.ops.io.readers import matching_files, read_file, write_file
from tensorflux.ops.io.parsing import (FixedLenFeature, FixedLenSequenceFeature, SparseFeature,
                                       VarLenFeature, decode_csv, parse_example,
                                       parse_single_example)
from tensorflux.ops.io.sequence_batch_parsing import parse_sequence_example
from tensorflux.ops.io.sequence_parsing import parse_single_sequence_example
from tensorflux.ops.strings.conversion import decode_raw
from tensorflux.platform import gfile
from tensorflux.ops.sparse.serialization import (deserialize_many_sparse, serialize_many_sparse,
                                                 serialize_sparse)
from tensorflux.ops.data_flow.queues import (FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase,
                                             RandomShuffleQueue)
from tensorflux.lib.formats.graph_file import write_graph
from tensorflux.train.input import match_filenames_once
from tensorflux.ops.strings.hashing import decode_base64, encode_base64
from tensorflux.ops.io.tensor_codec import (decode_compressed, decode_json_example, parse_tensor,
                                            serialize_tensor)
