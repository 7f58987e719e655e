"""Object-based checkpointing: trackable objects and the dependency graph between them.

`base` defines `Trackable` / `AutoTrackable`; `graph_view` walks the dependencies of any
object (trackables, variables, optimizers, Keras layers) and turns them into the
`TrackableObjectGraph` stored in a checkpoint (`tensorflux.train.checkpoint`).
"""
