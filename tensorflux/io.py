"""`tf.io`: file and record I/O, parsing and serialization (TF 1.15's `tf.io` names)."""

from tensorflux.ops.image_codec_ops import (decode_bmp, decode_gif, decode_image, decode_jpeg,
                                            decode_png, encode_jpeg, encode_png, is_jpeg)
