"""contrib.layers summaries: scalar or histogram summaries of tensors and collections.

A 0-d tensor gets a scalar summary tagged with its op name; others a histogram tagged
`<op name>_summary`. `summarize_activation` adds a histogram `<op>/activation` and, for
Relu/Relu6/Softplus outputs, the fraction of zeros (`<op>/zeros`) and, for Relu6, of sixes.
"""

from __future__ import annotations

import functools
import re

from tensorflux import summary
from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops import math as math_ops

__all__ = ["summarize_tensor", "summarize_tensors", "summarize_activation",
           "summarize_activations", "summarize_collection", "summarize_variables",
           "summarize_weights", "summarize_biases"]


def _scalar(tensor, tag=None):
    tensor.get_shape().assert_has_rank(0)
    return summary.scalar(tag or tensor.op.name, tensor)


def _histogram(tensor, tag=None):
    return summary.histogram(tag or f"{tensor.op.name}_summary", tensor)


def summarize_tensor(tensor, tag=None):
    """A scalar summary for a 0-d tensor, else a histogram summary; returns the summary op."""
    if tensor.get_shape().ndims == 0:
        return _scalar(tensor, tag)
    return _histogram(tensor, tag)


def _fraction(condition):
    return math_ops.reduce_mean(math_ops.cast(condition, dtypes.float32))


def summarize_activation(op):
    """Histogram of an activation tensor plus zero (and six) fractions for ReLU-like ops."""
    pre = op.op.inputs[0] if op.op.inputs else None
    if op.op.type in ("Relu", "Softplus", "Relu6") and pre is not None:
        _scalar(_fraction(math_ops.less(pre, math_ops.cast(0.0, pre.dtype))),
                f"{op.op.name}/zeros")
    if op.op.type == "Relu6" and pre is not None:
        _scalar(_fraction(math_ops.greater(pre, math_ops.cast(6.0, pre.dtype))),
                f"{op.op.name}/sixes")
    return _histogram(op, f"{op.op.name}/activation")


def summarize_tensors(tensors, summarizer=summarize_tensor) -> list:
    """`summarizer(t)` for each tensor."""
    return [summarizer(tensor) for tensor in tensors]


def summarize_collection(collection, name_filter=None, summarizer=summarize_tensor) -> list:
    """Summaries of the collection's tensors whose op name matches `name_filter` (re.match)."""
    tensors = [t for t in graph_mod.get_collection(collection)
               if name_filter is None or re.match(name_filter, t.op.name)]
    return summarize_tensors(tensors, summarizer)


summarize_variables = functools.partial(summarize_collection, GraphKeys.GLOBAL_VARIABLES)
summarize_weights = functools.partial(summarize_collection, GraphKeys.WEIGHTS)
summarize_biases = functools.partial(summarize_collection, GraphKeys.BIASES)


def summarize_activations(name_filter=None, summarizer=summarize_activation) -> list:
    """Summaries of the ACTIVATIONS collection."""
    return summarize_collection(GraphKeys.ACTIVATIONS, name_filter, summarizer)
