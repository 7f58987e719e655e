"""GraphDef files: `tf.io.write_graph` / `tf.train.write_graph` write a graph as text or binary
protobuf, atomically (a temporary file renamed into place)."""

from __future__ import annotations

import os

from google.protobuf import text_format

from tensorflux.platform import gfile
from tensorflux.protos import graph_pb2

__all__ = ["write_graph"]


def write_graph(graph_or_graph_def, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a Graph's GraphDef (or a GraphDef) to `logdir/name`; returns the path.

    Example:
        >>> tf.train.write_graph(sess.graph, "/tmp/model", "graph.pbtxt")
        '/tmp/model/graph.pbtxt'
    """
    graph_def = graph_or_graph_def
    if hasattr(graph_or_graph_def, "as_graph_def"):
        graph_def = graph_or_graph_def.as_graph_def()
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError(f"graph_def must be a graph_pb2.GraphDef proto, got {type(graph_def)}.")
    gfile.makedirs(logdir)
    path = os.path.join(logdir, name)
    if as_text:
        data = text_format.MessageToString(graph_def).encode()
    else:
        data = graph_def.SerializeToString(deterministic=True)
    temporary = f"{path}.tmp{os.getpid()}"
    with gfile.GFile(temporary, "wb") as handle:
        handle.write(data)
    gfile.rename(temporary, path, overwrite=True)
    return path
