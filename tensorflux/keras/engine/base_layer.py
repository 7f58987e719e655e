"""The Keras `Layer`: a named callable that builds its weights on first call.

Contract: a layer gets a graph-unique snake-case name (`dense`, `dense_1`, ...); its first
call opens the name scope `<name>` and builds its weights there (`dense/kernel:0`), later calls
open `<name>_1`, ... for their ops only. Inputs are checked against `input_spec` before `call`
and a mismatch raises ValueError naming the layer. Each call records a `Node` (inputs, outputs,
the updates and activity losses it created) so functional models can replay it.
"""

from __future__ import annotations

import functools
import inspect
import re
import weakref

import numpy as np

from tensorflux.framework import dtypes, scopes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.keras import backend, constraints, initializers, regularizers
from tensorflux.keras.engine import tracking as layer_tracking
from tensorflux.layers.input_spec import InputSpec
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.state import variables as state_variables

__all__ = ["Layer", "InputSpec", "Node", "keras_history"]

_HISTORY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CALL_STACK: list = []


def to_snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
    return "private" + name if name.startswith("_") else name


def keras_history(tensor):
    """(node, index) of the layer call that produced `tensor`, or None."""
    try:
        return _HISTORY.get(tensor)
    except TypeError:
        return None


def format_shape(shape):
    return (
        "("
        + ", ".join("None" if d is None else str(d) for d in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )


def flatten(structure):
    if isinstance(structure, (list, tuple)):
        return [t for item in structure for t in flatten(item)]
    if isinstance(structure, dict):   # a dict of features: values in key order
        return [t for key in sorted(structure) for t in flatten(structure[key])]
    return [structure]


def _masks_of(inputs):
    """The `_keras_mask` of `inputs` (a list for a list), None when no input has one."""
    if isinstance(inputs, list):
        masks = [getattr(t, "_keras_mask", None) for t in inputs]
        return masks if any(m is not None for m in masks) else None
    return getattr(inputs, "_keras_mask", None)


class Node:
    """One call of a layer: input and output tensors, call kwargs, created updates/losses."""

    def __init__(self, layer, inputs, outputs, kwargs, updates, losses):
        self.layer = layer
        self.inputs = inputs
        self.outputs = outputs
        self.input_tensors = flatten(inputs)
        self.output_tensors = flatten(outputs)
        self.kwargs = kwargs
        self.updates = updates
        self.losses = losses


class Layer:
    """Base Keras layer: subclasses define `build(input_shape)` and `call(inputs, ...)`."""

    def __init_subclass__(cls, **kwargs):
        """Wraps each subclass `__init__` to record the outermost constructor call (class,
        args, kwargs) for `tf.keras.models.save_model` / `to_json`."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def recording_init(self, *args, **kw):
            if "_init_call" not in self.__dict__:
                self.__dict__["_init_call"] = (args, dict(kw))
            init(self, *args, **kw)

        cls.__init__ = recording_init

    def __init__(
        self,
        trainable=True,
        name=None,
        dtype=None,
        input_shape=None,
        batch_input_shape=None,
        input_dim=None,
        batch_size=None,
        activity_regularizer=None,
        weights=None,
        **kwargs,
    ):
        kwargs.pop("autocast", None)
        # initial values, assigned once the layer is built (TF 1.x `weights=` argument)
        self._initial_weights = weights
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {', '.join(sorted(kwargs))}")
        self._name = name or backend.unique_object_name(to_snake_case(type(self).__name__))
        self.trainable = trainable
        self.dtype = dtype or backend.floatx()
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size, *tuple(input_shape))
        self._batch_input_shape = (
            tuple(batch_input_shape) if batch_input_shape is not None else None
        )
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.built = False
        self.input_spec = None
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._updates: list = []
        self._losses: list = []
        self._inbound_nodes: list = []

    @property
    def name(self):
        return self._name

    # -- weights ---------------------------------------------------------------------------

    def _add_configured_weight(self, name, shape, prefix=None):
        """`add_weight` with the layer's own `<prefix>_initializer`, `<prefix>_regularizer` and
        `<prefix>_constraint` attributes (prefix defaults to `name`), as Keras layers keep them."""
        prefix = prefix or name
        return self.add_weight(name, shape, initializer=getattr(self, prefix + "_initializer"),
                               regularizer=getattr(self, prefix + "_regularizer"),
                               constraint=getattr(self, prefix + "_constraint"))

    def _add_bias(self, size):
        """The layer's bias of `size` units when `use_bias`, else None."""
        return self._add_configured_weight("bias", (size,)) if self.use_bias else None

    def _defined_channels(self, input_shape):
        """The last (channel) dimension of `input_shape`; ValueError when it is unknown."""
        channels = input_shape[-1]
        if channels is None:
            raise ValueError(f'Layer "{self.name}": the channel dimension of the inputs should '
                             "be defined. Found None.")
        return channels

    def add_weight(
        self,
        name=None,
        shape=(),
        dtype=None,
        initializer=None,
        regularizer=None,
        trainable=None,
        constraint=None,
        **kwargs,
    ):
        """Creates a variable `<scope>/<name>` initialized by `initializer` (glorot_uniform)."""
        for ignored in (
            "partitioner",
            "use_resource",
            "synchronization",
            "aggregation",
            "experimental_autocast",
            "caching_device",
        ):
            kwargs.pop(ignored, None)
        if kwargs:
            raise TypeError(f"Unknown keyword argument(s) to add_weight: {sorted(kwargs)}")
        trainable = True if trainable is None else trainable
        name = name or "Variable"
        dtype = dtypes.as_dtype(dtype or self.dtype)
        init = initializers.get(initializer)
        if init is None:
            init = initializers.GlorotUniform() if dtype.is_floating else initializers.Zeros()
        shape = tuple(int(d) for d in shape)
        var = state_variables.Variable(
            lambda: init(shape, dtype=dtype),
            name=name,
            dtype=dtype,
            trainable=trainable and self.trainable,
            constraint=constraints.get(constraint),
        )
        if trainable and self.trainable:
            self._trainable_weights.append(var)
        else:
            self._non_trainable_weights.append(var)
        regularizer = regularizers.get(regularizer)
        if regularizer is not None:
            with scopes.name_scope(f"{name}/Regularizer"):
                self._losses.append(regularizer(var))
        return var

    def _sublayers(self):
        return []

    @property
    def _checkpoint_dependencies(self):
        """`(name, object)` dependencies for object-based checkpoints (see `tracking`)."""
        return layer_tracking.layer_dependencies(self)

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        weights = list(self._trainable_weights)
        for layer in self._sublayers():
            weights += layer.trainable_weights
        return _unique(weights)

    @property
    def non_trainable_weights(self):
        weights = list(self._non_trainable_weights)
        if not self.trainable:
            weights = list(self._trainable_weights) + weights
        for layer in self._sublayers():
            weights += layer.non_trainable_weights if self.trainable else layer.weights
        return _unique(weights)

    @property
    def weights(self):
        return _unique(self.trainable_weights + self.non_trainable_weights)

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def updates(self):
        updates = list(self._updates)
        for layer in self._sublayers():
            updates += layer.updates
        return _unique(updates)

    @property
    def losses(self):
        losses = list(self._losses)
        for layer in self._sublayers():
            losses += layer.losses
        return _unique(losses)

    def add_update(self, updates, inputs=None):
        updates = list(updates) if isinstance(updates, (list, tuple)) else [updates]
        self._updates.extend(updates)
        for frame in _CALL_STACK:
            frame[0].extend(updates)

    def add_loss(self, losses, inputs=None):
        losses = list(losses) if isinstance(losses, (list, tuple)) else [losses]
        self._losses.extend(losses)
        for frame in _CALL_STACK:
            frame[1].extend(losses)

    def get_weights(self):
        """The weights' current values (NumPy arrays) from the Keras session."""
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights):
        """Assigns NumPy arrays to the weights, in `weights` order; shapes must match."""
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(
                f'Layer "{self.name}" expects {len(params)} weight(s), but the '
                f"given weights list has {len(weights)}."
            )
        pairs = []
        for var, value in zip(params, weights):
            value = np.asarray(value)
            if tuple(var.get_shape().as_list()) != value.shape:
                raise ValueError(
                    f'Layer "{self.name}" weight shape {tuple(var.shape.as_list())}'
                    f" is not compatible with provided weight shape "
                    f"{value.shape}."
                )
            pairs.append((var, value))
        backend.batch_set_value(pairs)

    def count_params(self):
        return int(sum(np.prod(w.get_shape().as_list(), dtype=np.int64) for w in self.weights))

    # -- connectivity ----------------------------------------------------------------------

    def _only_node(self, what):
        if not self._inbound_nodes:
            raise AttributeError(f'Layer "{self.name}" is not connected, no {what} to return.')
        if len(self._inbound_nodes) > 1:
            raise AttributeError(
                f'Layer "{self.name}" has multiple inbound nodes, hence the '
                f'notion of "layer {what}" is ill-defined.'
            )
        return self._inbound_nodes[0]

    @property
    def input(self):
        """The input tensor(s) of the layer's only call."""
        node = self._only_node("input")
        return node.inputs if node.input_tensors else node.outputs

    @property
    def output(self):
        """The output tensor(s) of the layer's only call."""
        return self._only_node("output").outputs

    @property
    def input_shape(self):
        inputs = self.input
        if isinstance(inputs, list):
            return [tuple(t.get_shape().as_list()) for t in inputs]
        return tuple(inputs.get_shape().as_list())

    @property
    def output_shape(self):
        outputs = self.output
        if isinstance(outputs, list):
            return [tuple(t.get_shape().as_list()) for t in outputs]
        return tuple(outputs.get_shape().as_list())

    # -- calling ---------------------------------------------------------------------------

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    supports_masking = False

    def compute_mask(self, inputs, mask=None):
        """The mask of this layer's outputs: the input mask for layers that support masking,
        else None (the mask stops here, as TF 1.15's layers drop it silently)."""
        return mask if self.supports_masking else None

    def _takes_mask(self) -> bool:
        found = self.__dict__.get("_call_takes_mask")
        if found is None:
            found = "mask" in inspect.signature(self.call).parameters
            self.__dict__["_call_takes_mask"] = found
        return found

    def _positional_mask_index(self, args):
        """Index in `args` (the positionals after `inputs`) of a mask passed positionally
        to a `call` that names a `mask` parameter, or None."""
        if not args or not self._takes_mask():
            return None
        names = list(inspect.signature(self.call).parameters)
        index = names.index("mask") - 1  # names[0] is `inputs`
        return index if 0 <= index < len(args) else None

    def _output_masks(self, inputs, outputs, input_masks) -> None:
        """Attaches `compute_mask`'s result to the outputs as `_keras_mask`."""
        if not (self.supports_masking or type(self).compute_mask is not Layer.compute_mask):
            return
        masks = self.compute_mask(inputs, input_masks)
        flat_outputs = flatten(outputs)
        flat_masks = masks if isinstance(masks, (list, tuple)) else [masks] * len(flat_outputs)
        for output, mask in zip(flat_outputs, flat_masks):
            if mask is not None and hasattr(output, "_op"):
                output._keras_mask = mask

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (list, tuple)):
            inputs = [convert_to_tensor(t) for t in inputs]
        elif isinstance(inputs, dict):   # feature dicts (DenseFeatures); SparseTensors kept
            inputs = {k: v if hasattr(v, "indices") else convert_to_tensor(v)
                      for k, v in inputs.items()}
        else:
            inputs = convert_to_tensor(inputs)
        graph = graph_mod.get_default_graph()
        frame = ([], [])
        with graph.name_scope(self.name):
            self._assert_input_compatibility(inputs)
            if not self.built:
                if isinstance(inputs, dict):
                    shapes = {k: _shape_tuple(t) for k, t in inputs.items()}
                elif isinstance(inputs, list):
                    shapes = [_shape_tuple(t) for t in inputs]
                else:
                    shapes = _shape_tuple(inputs)
                self.build(shapes)
                self.built = True
                if self.__dict__.get("_initial_weights") is not None:
                    self.set_weights(self._initial_weights)
                    self._initial_weights = None
                self._assert_input_compatibility(inputs)
            positional = self._positional_mask_index(args)
            if "mask" in kwargs:
                input_masks = kwargs["mask"]
            elif positional is not None:  # `layer(x, mask)`: call(self, inputs, mask=None)
                input_masks = args[positional]
            else:
                input_masks = _masks_of(inputs)
            call_kwargs = kwargs
            if ("mask" not in kwargs and positional is None and input_masks is not None
                    and self._takes_mask()):
                call_kwargs = dict(kwargs, mask=input_masks)  # not recorded: replays recompute
            _CALL_STACK.append(frame)
            try:
                outputs = self.call(inputs, *args, **call_kwargs)
            finally:
                _CALL_STACK.pop()
            self._output_masks(inputs, outputs, input_masks)
            if self.activity_regularizer is not None:
                with scopes.name_scope("ActivityRegularizer"):
                    for out in flatten(outputs):
                        batch = math_ops.cast(array_ops.shape(out)[0], out.dtype)
                        self.add_loss(self.activity_regularizer(out) / batch)
                        frame[1].append(self._losses[-1])
        node = Node(
            self,
            inputs,
            outputs,
            dict(kwargs, **({"args": args} if args else {})),
            frame[0],
            frame[1],
        )
        self._inbound_nodes.append(node)
        for index, out in enumerate(node.output_tensors):
            _HISTORY[out] = (node, index)
        return outputs

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    def _assert_input_compatibility(self, inputs):
        if self.input_spec is None:
            return
        specs = self.input_spec if isinstance(self.input_spec, list) else [self.input_spec]
        tensors = inputs if isinstance(inputs, list) else [inputs]
        if len(specs) != len(tensors):
            raise ValueError(
                f'Layer "{self.name}" expects {len(specs)} input(s), but it '
                f"received {len(tensors)} input tensors."
            )
        for i, (spec, tensor) in enumerate(zip(specs, tensors)):
            if spec is None:
                continue
            shape = tensor.get_shape()
            if shape.ndims is None:
                continue
            dims = tuple(shape.as_list())
            head = f'Input {i} of layer "{self.name}" is incompatible with the layer: '
            if spec.ndim is not None and len(dims) != spec.ndim:
                raise ValueError(
                    f"{head}expected ndim={spec.ndim}, found ndim={len(dims)}. "
                    f"Full shape received: {format_shape(dims)}"
                )
            if spec.min_ndim is not None and len(dims) < spec.min_ndim:
                raise ValueError(
                    f"{head}expected min_ndim={spec.min_ndim}, found "
                    f"ndim={len(dims)}. Full shape received: {format_shape(dims)}"
                )
            if spec.max_ndim is not None and len(dims) > spec.max_ndim:
                raise ValueError(
                    f"{head}expected max_ndim={spec.max_ndim}, found "
                    f"ndim={len(dims)}. Full shape received: {format_shape(dims)}"
                )
            for axis, value in spec.axes.items():
                if value is None or -len(dims) > axis or axis >= len(dims):
                    continue
                if dims[axis] is not None and dims[axis] != value:
                    raise ValueError(
                        f"{head}expected axis {axis} of input shape to have value "
                        f"{value}, but received input with shape "
                        f"{format_shape(dims)}"
                    )

    def get_config(self):
        """The constructor arguments this layer was created with, by parameter name (plus its
        name, trainable flag and dtype); `from_config` rebuilds an equal, unbuilt layer."""
        args, kwargs = self.__dict__.get("_init_call", ((), {}))
        config = {}
        try:
            bound = inspect.signature(type(self).__init__).bind_partial(self, *args, **kwargs)
        except TypeError:
            bound = None
        for key, value in list(bound.arguments.items())[1:] if bound else []:
            kind = bound.signature.parameters[key].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                config.update(value)
            elif kind is not inspect.Parameter.VAR_POSITIONAL:
                config[key] = value
        config.pop("weights", None)  # values, not configuration (as TF)
        config.update(name=self.name, trainable=self.trainable, dtype=self.dtype)
        if self._batch_input_shape is not None and "batch_input_shape" not in config:
            config["batch_input_shape"] = self._batch_input_shape
            config.pop("input_shape", None)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _unique(items):
    seen, out = set(), []
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            out.append(item)
    return out


def _shape_tuple(tensor):
    shape = tensor.get_shape()
    return None if shape.ndims is None else tuple(shape.as_list())
