"""`tf.sets`: set operations along the last dimension, returning SparseTensors."""

from tensorflux.ops.array.sets import set_difference, set_intersection, set_size, set_union

difference = set_difference
intersection = set_intersection
size = set_size
union = set_union
