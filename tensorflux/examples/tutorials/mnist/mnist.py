"""`tensorflow.examples.tutorials.mnist.mnist`: the TF 1.x "MNIST for ML beginners" graph that
`fully_connected_feed.py` builds: two ReLU hidden layers and a linear softmax layer
(`inference`), mean sparse softmax cross entropy (`loss`), plain gradient descent with a
global step and a loss summary (`training`), and the count of correct top-1 predictions
(`evaluation`)."""

from __future__ import annotations

import math

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import name_scope
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import activations
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.random import stateful
from tensorflux.ops.state.variables import Variable
from tensorflux.summary import scalar
from tensorflux.train.optimizers import GradientDescentOptimizer

__all__ = ["NUM_CLASSES", "IMAGE_SIZE", "IMAGE_PIXELS", "inference", "loss", "training",
           "evaluation"]

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _layer(inputs, fan_in, units, scope):
    with name_scope(scope):
        weights = Variable(stateful.truncated_normal([fan_in, units],
                                                     stddev=1.0 / math.sqrt(float(fan_in))),
                           name="weights")
        biases = Variable(array_ops.zeros([units]), name="biases")
        return math_ops.matmul(inputs, weights) + biases


def inference(images, hidden1_units, hidden2_units):
    """Logits [batch, NUM_CLASSES] of `images` [batch, IMAGE_PIXELS] through layers named
    hidden1, hidden2 and softmax_linear (each with `weights` and `biases`)."""
    hidden1 = activations.relu(_layer(images, IMAGE_PIXELS, hidden1_units, "hidden1"))
    hidden2 = activations.relu(_layer(hidden1, hidden1_units, hidden2_units, "hidden2"))
    return _layer(hidden2, hidden2_units, NUM_CLASSES, "softmax_linear")


def loss(logits, labels):
    """Mean cross entropy of `logits` against int `labels` [batch]."""
    labels = math_ops.cast(labels, dtypes.int64)
    return math_ops.reduce_mean(
        nn_functions.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def training(loss, learning_rate):  # noqa: A002 - the tutorial's argument name
    """The train op: a "loss" scalar summary and one gradient-descent step that increments a
    non-trainable `global_step`."""
    scalar("loss", loss)
    global_step = Variable(0, name="global_step", trainable=False)
    return GradientDescentOptimizer(learning_rate).minimize(loss, global_step=global_step)


def evaluation(logits, labels):
    """How many of the batch's `labels` are the top-1 prediction of `logits` (an int32)."""
    correct = nn_core.in_top_k(logits, labels, 1)
    return math_ops.reduce_sum(math_ops.cast(correct, dtypes.int32))
