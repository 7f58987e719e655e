"""`tf.summary`: summary ops that feed TensorBoard, and the event-file writer.

Each summary op returns a serialized `Summary` (string scalar) and is added to the SUMMARIES
collection; its tag is the op's name scope ("family/name" with a family).
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.io import summary as summary_ops
from tensorflux.protos import event_pb2 as _event_pb2
from tensorflux.protos import summary_pb2 as _summary_pb2
from tensorflux.summary.writer import FileWriter, FileWriterCache, summary_iterator
from tensorflux.summary.v2_setup import get_summary_description, initialize

__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge",
           "merge_all", "FileWriter", "FileWriterCache",
           "summary_iterator", "Summary", "SummaryDescription", "Event", "SessionLog",
           "TaggedRunMetadata"]
__all__ += ["get_summary_description", "initialize"]

_INVALID = re.compile(r"[^-/\w\.]")


def _clean(name: str) -> str:
    return _INVALID.sub("_", name).lstrip("/")


class _SummaryScope:
    """TF1's summary scope: a name scope for the op; the tag is that scope (prefixed by the
    family again, so TensorBoard groups it in the family's tab)."""

    def __init__(self, name, family):
        self._name = _clean(name)
        self._family = _clean(family) if family else None

    def __enter__(self):
        base = self._name if self._family is None else f"{self._family}/{self._name}"
        self._scope = graph_mod.get_default_graph().name_scope(base)
        scope = self._scope.__enter__()
        tag = scope.rstrip("/")
        if self._family is not None:
            tag = f"{self._family}/{tag}"
        return tag, scope

    def __exit__(self, *exc):
        return self._scope.__exit__(*exc)


def _collect(op, collections):
    graph = graph_mod.get_default_graph()
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        graph.add_to_collection(key, op)
    return op


def scalar(name, tensor, collections=None, family=None):
    """A summary of one real scalar."""
    with _SummaryScope(name, family) as (tag, scope):
        value = summary_ops.ScalarSummary(tag, tensor, name=scope)
    return _collect(value, collections)


def histogram(name, values, collections=None, family=None):
    """A histogram of `values` (any shape)."""
    with _SummaryScope(name, family) as (tag, scope):
        value = summary_ops.HistogramSummary(tag, values, name=scope)
    return _collect(value, collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` images of a [batch, height, width, 1|3|4] tensor (PNG-encoded)."""
    with _SummaryScope(name, family) as (tag, scope):
        value = summary_ops.ImageSummary(tag, tensor, max_images=max_outputs, name=scope)
    return _collect(value, collections)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` clips of a [batch, frames(, channels)] float tensor (WAV)."""
    with _SummaryScope(name, family) as (tag, scope):
        rate = convert_to_tensor(sample_rate, dtype="float32")
        value = summary_ops.AudioSummaryV2(tag, tensor, rate, max_outputs=max_outputs,
                                           name=scope)
    return _collect(value, collections)


def _metadata(plugin_name, content=b"", display_name=None, description=None):
    metadata = _summary_pb2.SummaryMetadata()
    metadata.plugin_data.plugin_name = plugin_name
    metadata.plugin_data.content = content
    if display_name:
        metadata.display_name = display_name
    if description:
        metadata.summary_description = description
    return metadata


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A summary holding a whole tensor."""
    if summary_metadata is None:
        summary_metadata = _summary_pb2.SummaryMetadata()
    if summary_description:
        summary_metadata.summary_description = summary_description
    if display_name:
        summary_metadata.display_name = display_name
    with _SummaryScope(name, family) as (tag, scope):
        serialized = np.array(summary_metadata.SerializeToString(), dtype=object)
        value = summary_ops.TensorSummaryV2(tag, tensor, serialized, name=scope)
    return _collect(value, collections)


def text(name, tensor, collections=None):
    """A string tensor shown by TensorBoard's text plugin."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype.base_dtype.name != "string":
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got "
                         f"{tensor.dtype.name}")
    return tensor_summary(name, tensor, collections=collections,
                          summary_metadata=_metadata("text"))


def merge(inputs, collections=None, name=None):
    """Merges serialized summaries into one."""
    value = summary_ops.MergeSummary(list(inputs), name=name or "Merge/MergeSummary")
    if collections:
        _collect(value, collections)
    return value


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """Merges every summary in collection `key` (None when there is none)."""
    summaries = graph_mod.get_default_graph().get_collection(key, scope)
    if not summaries:
        return None
    return merge(summaries, name=name)


def __getattr__(name):
    table = {"Summary": _summary_pb2.Summary, "SummaryDescription": _summary_pb2.SummaryDescription,
             "Event": _event_pb2.Event, "SessionLog": _event_pb2.SessionLog,
             "TaggedRunMetadata": _event_pb2.TaggedRunMetadata,
             "HistogramProto": _summary_pb2.HistogramProto}
    if name in table:
        return table[name]
    raise AttributeError(name)
