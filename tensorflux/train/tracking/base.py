"""Trackable objects: objects whose named dependencies are saved by `tf.train.Checkpoint`.

A `Trackable` lists its dependencies as `(local_name, object)` pairs in
`_checkpoint_dependencies`; `AutoTrackable` adds every trackable value assigned to one of its
attributes (`self.dense = Dense(3)` makes a dependency named "dense"). A checkpoint key is the
path of local names from the root to a variable, so renaming an attribute changes the key.
"""

from __future__ import annotations

from tensorflux.ops.state.variables import Variable
from tensorflux.train.optimizer import Optimizer

__all__ = ["Trackable", "AutoTrackable", "NoDependency", "is_layer_like",
           "is_trackable"]


class Trackable:
    """Base of objects with named checkpoint dependencies."""

    def _maybe_initialize_trackable(self) -> None:
        if "_tfx_dependencies" not in self.__dict__:
            object.__setattr__(self, "_tfx_dependencies", {})

    def _track_trackable(self, trackable, name: str, overwrite: bool = False):
        """Adds `trackable` as the dependency `name`; returns it.

        Raises:
            ValueError: `name` already names another object and `overwrite` is False.
        """
        self._maybe_initialize_trackable()
        current = self._tfx_dependencies.get(name)
        if current is not None and current is not trackable and not overwrite:
            raise ValueError(f"Called Trackable._track_trackable() with name='{name}', but a "
                             "Trackable with this name is already declared as a dependency. "
                             "Names must be unique (or overwrite=True).")
        self._tfx_dependencies[name] = trackable
        return trackable

    def _lookup_dependency(self, name: str):
        self._maybe_initialize_trackable()
        return self._tfx_dependencies.get(name)

    @property
    def _checkpoint_dependencies(self) -> list:
        """`(local_name, object)` pairs, in the order they were added."""
        self._maybe_initialize_trackable()
        return list(self._tfx_dependencies.items())


def is_layer_like(value) -> bool:
    """A layer (`tf.layers`, `tf.nn.rnn_cell`, Keras): it keeps `_trainable_weights` and
    `_non_trainable_weights` lists."""
    return isinstance(getattr(value, "_trainable_weights", None), list) and isinstance(
        getattr(value, "_non_trainable_weights", None), list)


def is_trackable(value) -> bool:
    """Whether `value` can be a checkpoint dependency: a trackable (anything with
    `_checkpoint_dependencies`), a variable, an optimizer, or a list/tuple/dict holding one."""
    # The class is asked, not the instance: `_checkpoint_dependencies` is usually a property
    # that walks the object.
    if isinstance(value, (Variable, Optimizer)) or hasattr(type(value),
                                                           "_checkpoint_dependencies"):
        return True
    if is_layer_like(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_trackable(v) for v in value)
    if isinstance(value, dict):
        return any(is_trackable(v) for v in value.values())
    return False


class NoDependency:
    """Wraps a value assigned to an `AutoTrackable` attribute so it is not tracked
    (`self.cache = NoDependency([...])` stores the bare list)."""

    def __init__(self, value):
        self.value = value


class AutoTrackable(Trackable):
    """A Trackable that tracks trackable values assigned to its attributes (TF's
    `tf.Module`-style tracking); names starting with `_tfx` are internal."""

    def __setattr__(self, name, value):
        if isinstance(value, NoDependency):
            if "_tfx_dependencies" in self.__dict__:
                self._tfx_dependencies.pop(name, None)
            object.__setattr__(self, name, value.value)
            return
        if not name.startswith("_tfx") and is_trackable(value):
            self._track_trackable(value, name, overwrite=True)
        elif "_tfx_dependencies" in self.__dict__ and name in self._tfx_dependencies:
            del self._tfx_dependencies[name]
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if "_tfx_dependencies" in self.__dict__:
            self._tfx_dependencies.pop(name, None)
        object.__delattr__(self, name)
