"""`tf.bitwise`: bitwise ops on integer tensors."""

from tensorflux.ops.math.bitwise import (bitwise_and, bitwise_or, bitwise_xor, invert, left_shift,
                                         right_shift)
