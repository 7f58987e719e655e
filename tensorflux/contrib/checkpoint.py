"""`tf.contrib.checkpoint` (TF 1.13-1.15): object-based checkpointing before it moved to
`tf.train` -- the manager, the trackable base classes, and object graph inspection."""

from __future__ import annotations

from tensorflux.protos.trackable_object_graph_pb2 import TrackableObjectGraph
from tensorflux.train import checkpoint as checkpoint_mod
from tensorflux.train import checkpoint_utils
from tensorflux.train.checkpoint_management import CheckpointManager
from tensorflux.train.tracking import graph_view
from tensorflux.train.tracking.base import AutoTrackable, NoDependency, Trackable

__all__ = ["CheckpointManager", "Checkpointable", "CheckpointableBase",
           "CheckpointableObjectGraph", "NoDependency", "list_objects", "object_metadata"]

Checkpointable = AutoTrackable
CheckpointableBase = Trackable
CheckpointableObjectGraph = TrackableObjectGraph


def list_objects(root_checkpointable) -> list:
    """Every object reachable from `root_checkpointable` (itself first, breadth-first, then
    optimizer slot variables), as a checkpoint would save them."""
    return list(graph_view.ObjectGraphView(root_checkpointable).objects)


def object_metadata(save_path):
    """The `TrackableObjectGraph` stored in the object-based checkpoint at `save_path`.

    Raises:
        NotFoundError: no checkpoint at `save_path`.
        ValueError: the checkpoint is name-based (it has no object graph).
    """
    graph_proto = checkpoint_mod.read_object_graph(
        checkpoint_utils.NewCheckpointReader(save_path))
    if graph_proto is None:
        raise ValueError(f'The specified checkpoint "{save_path}" does not appear to be '
                         "object-based (it is missing the key "
                         f'"{graph_view.OBJECT_GRAPH_KEY}"). Likely it was created with a '
                         "name-based saver and does not contain an object dependency graph.")
    return graph_proto
