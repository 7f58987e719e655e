"""`tf.summary.get_summary_description` and `tf.summary.initialize`.

`initialize` belongs to the `tf.contrib.summary` writers (summary ops that write from inside
the graph); tensorflux writes summaries through `tf.summary.FileWriter` only, so no such
writer is ever the default and `initialize` raises as TensorFlow does without one.
"""

from __future__ import annotations

from google.protobuf import json_format

from tensorflux.protos import summary_pb2


def get_summary_description(node_def):
    """The `SummaryDescription` stored (as JSON) in a TensorSummary NodeDef's `description`.

    Args:
        node_def: a `NodeDef` of op "TensorSummary".

    Returns:
        A `tf.summary.SummaryDescription`.

    Raises:
        ValueError: `node_def` is not a TensorSummary, or its description is not valid JSON
            for a SummaryDescription.
    """
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    text = node_def.attr["description"].s
    text = text.decode("utf-8") if isinstance(text, bytes) else str(text)
    description = summary_pb2.SummaryDescription()
    try:
        json_format.Parse(text, description)
    except json_format.ParseError as err:
        raise ValueError(f"Bad SummaryDescription JSON in {node_def.name}: {err}") from None
    return description


def initialize(graph=None, session=None):
    """Initializes the default `tf.contrib.summary` writer; there never is one here.

    Raises:
        RuntimeError: always: no default contrib SummaryWriter exists.
    """
    del graph, session
    raise RuntimeError("No default tf.contrib.summary.SummaryWriter found: tensorflux writes "
                       "summaries with tf.summary.FileWriter, which needs no initialize().")
