"""`tf.keras.utils`: `to_categorical`, `normalize`, `get_file`, `Sequence`, `Progbar`, the
custom-object registry, object (de)serialization, enqueuers, `get_source_inputs`,
`plot_model` / `model_to_dot` (need pydot), `HDF5Matrix` (needs h5py) and
`convert_all_kernels_in_model`."""

from __future__ import annotations

import inspect

import numpy as np

from tensorflux.keras.custom_objects import (
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)
from tensorflux.keras.enqueuers import GeneratorEnqueuer, OrderedEnqueuer, SequenceEnqueuer
from tensorflux.keras.file_cache import get_file
from tensorflux.keras.progbar import Progbar

__all__ = ["to_categorical", "normalize", "get_file", "Sequence", "Progbar",
           "CustomObjectScope", "custom_object_scope", "get_custom_objects",
           "register_keras_serializable", "get_registered_name", "get_registered_object",
           "serialize_keras_object", "deserialize_keras_object", "get_source_inputs",
           "SequenceEnqueuer", "OrderedEnqueuer", "GeneratorEnqueuer", "plot_model",
           "model_to_dot", "HDF5Matrix", "convert_all_kernels_in_model"]


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot rows for the integer class vector `y` (a trailing 1 dimension is dropped)."""
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"to_categorical: class ids must lie in [0, {num_classes}).")
    out = np.zeros((y.size, num_classes), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """`x` divided by its `order`-norm along `axis` (zero norms left as 1)."""
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


class Sequence:
    """A dataset of batches: subclasses define `__getitem__(index)` and `__len__()`.

    `fit` and `fit_generator` walk the batches in order each epoch, then call `on_epoch_end`.
    """

    def __getitem__(self, index):
        raise IndexError(f"{type(self).__name__} defines no batches: implement __getitem__.")

    def __len__(self):
        return 0

    def on_epoch_end(self):
        pass

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]


def serialize_keras_object(instance):
    """`{"class_name", "config"}` of an object with `get_config`, else its name."""
    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        return {"class_name": type(instance).__name__, "config": instance.get_config()}
    if hasattr(instance, "__name__"):
        return instance.__name__
    raise ValueError(f"Cannot serialize {instance!r}: no get_config and no __name__")


def deserialize_keras_object(identifier, module_objects=None, custom_objects=None,
                             printable_module_name="object"):
    """The object a config dict or name describes, looked up in the custom objects, then
    `module_objects`.

    Raises:
        ValueError: an unknown name or a malformed config.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        if "class_name" not in identifier or "config" not in identifier:
            raise ValueError(f"Improper config format: {identifier}")
        name = identifier["class_name"]
        cls = get_registered_object(name, custom_objects, module_objects)
        if cls is None:
            raise ValueError(f"Unknown {printable_module_name}: {name}")
        config = dict(identifier["config"])
        if hasattr(cls, "from_config"):
            params = inspect.signature(cls.from_config).parameters
            if "custom_objects" in params:
                return cls.from_config(config, custom_objects=custom_objects)
            return cls.from_config(config)
        return cls(**config)
    if isinstance(identifier, str):
        obj = get_registered_object(identifier, custom_objects, module_objects)
        if obj is None:
            raise ValueError(f"Unknown {printable_module_name}: {identifier}")
        return obj
    raise ValueError(f"Could not interpret serialized {printable_module_name}: {identifier}")


def get_source_inputs(tensor, layer=None, node_index=None):
    """The `tf.keras.Input` tensors `tensor` was computed from (itself if it is one)."""
    # cycle: the engine imports this module (Sequence); its history helper is read lazily
    from tensorflux.keras.engine.base_layer import keras_history
    from tensorflux.keras.engine.input_layer import InputLayer

    history = keras_history(tensor)
    if history is None:
        return [tensor]
    node = history[0]
    if isinstance(node.layer, InputLayer) or not node.input_tensors:
        return [tensor]
    found = []
    for source in node.input_tensors:
        for t in get_source_inputs(source):
            if all(t is not seen for seen in found):
                found.append(t)
    return found


def _pydot():
    try:
        import pydot
    except ImportError:
        raise ImportError("Failed to import pydot. You must install pydot and graphviz for "
                          "`pydotprint` to work.") from None
    return pydot


def model_to_dot(model, show_shapes=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=96, subgraph=False):
    """The model's layer graph as a `pydot.Dot` (one node per layer, edges from inputs).

    Raises:
        ImportError: pydot is not installed.
    """
    pydot = _pydot()
    dot = pydot.Dot()
    dot.set("rankdir", rankdir)
    dot.set("concentrate", True)
    dot.set("dpi", dpi)
    dot.set_node_defaults(shape="record")
    for layer in model.layers:
        label = type(layer).__name__
        if show_layer_names:
            label = f"{layer.name}: {label}"
        if show_shapes:
            label = f"{label}|output: {getattr(layer, 'output_shape', '?')}"
        dot.add_node(pydot.Node(str(id(layer)), label=label))
    for layer in model.layers:
        for node in getattr(layer, "_inbound_nodes", []):
            # cycle: the engine imports this module (Sequence)
            from tensorflux.keras.engine.base_layer import keras_history
            for source in node.input_tensors:
                history = keras_history(source)
                if history is not None and history[0].layer in model.layers:
                    dot.add_edge(pydot.Edge(str(id(history[0].layer)), str(id(layer))))
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_layer_names=True,
               rankdir="TB", expand_nested=False, dpi=96):
    """Writes `model_to_dot(model)` to `to_file` (format from its extension).

    Raises:
        ImportError: pydot (or graphviz) is not installed.
    """
    dot = model_to_dot(model, show_shapes, show_layer_names, rankdir, expand_nested, dpi)
    extension = to_file.rsplit(".", 1)[-1] if "." in to_file else "png"
    dot.write(to_file, format=extension)
    return dot


class HDF5Matrix:
    """A dataset of an HDF5 file read like a NumPy array (rows `start` to `end`).

    Raises:
        ImportError: h5py is not installed.
    """

    refs: dict = {}

    def __init__(self, datapath, dataset, start=0, end=None, normalizer=None):
        try:
            import h5py
        except ImportError:
            raise ImportError("The use of HDF5Matrix requires HDF5 and h5py installed.") \
                from None
        if datapath not in HDF5Matrix.refs:
            HDF5Matrix.refs[datapath] = h5py.File(datapath, "r")
        self.data = HDF5Matrix.refs[datapath][dataset]
        self.start = start
        self.end = self.data.shape[0] if end is None else end
        self.normalizer = normalizer

    def __len__(self):
        return self.end - self.start

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop = key.start or 0, len(self) if key.stop is None else key.stop
            if stop > len(self):
                raise IndexError
            idx = slice(start + self.start, stop + self.start)
        elif isinstance(key, (int, np.integer)):
            if key >= len(self):
                raise IndexError
            idx = key + self.start
        else:
            rows = np.asarray(key) + self.start
            if rows.size and rows.max() >= self.end:
                raise IndexError
            idx = list(rows)
        out = self.data[idx]
        return self.normalizer(out) if self.normalizer is not None else out

    @property
    def shape(self):
        return (self.end - self.start,) + tuple(self.data.shape[1:])

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return int(np.prod(self.shape))


def convert_kernel(kernel):
    """A convolution kernel with its spatial axes flipped (Theano <-> TensorFlow)."""
    kernel = np.asarray(kernel)
    flips = tuple([slice(None, None, -1)] * (kernel.ndim - 2) + [slice(None), slice(None)])
    return np.copy(kernel[flips])


def convert_all_kernels_in_model(model):
    """Flips the kernels of the model's convolution layers in place (Theano-trained
    weights)."""
    # cycle: the backend imports the op families, which the engine imports lazily too
    from tensorflux.keras import backend

    names = {"Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose"}
    pairs = [(layer.kernel, convert_kernel(backend.get_value(layer.kernel)))
             for layer in model.layers if type(layer).__name__ in names]
    if pairs:
        backend.batch_set_value(pairs)

