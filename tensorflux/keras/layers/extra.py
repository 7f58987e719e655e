"""More Keras layers: activation layers, padding/upsampling, Conv2DTranspose, RepeatVector,
Permute, and the TimeDistributed and Bidirectional wrappers."""

from __future__ import annotations

import copy

from tensorflux.keras import activations
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.layers.conv import Conv2D

__all__ = ["ReLU", "LeakyReLU", "ELU", "Softmax", "ZeroPadding2D", "UpSampling2D",
           "Conv2DTranspose", "RepeatVector", "Permute", "TimeDistributed", "Bidirectional"]


def _api():
    import tensorflux

    return tensorflux


class ReLU(Layer):
    """min(max(x, threshold) or negative_slope * (x - threshold), max_value)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return activations.relu(inputs, alpha=self.negative_slope, max_value=self.max_value,
                                threshold=self.threshold)


class LeakyReLU(Layer):
    """x if x > 0 else alpha * x (alpha 0.3)."""

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return _api().nn.leaky_relu(inputs, alpha=self.alpha)


class ELU(Layer):
    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return activations.elu(inputs, self.alpha)


class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return activations.softmax(inputs, axis=self.axis)


def _pairs(padding, name):
    if isinstance(padding, int):
        return ((padding, padding), (padding, padding))
    padding = tuple(padding)
    if len(padding) != 2:
        raise ValueError(f'Layer "{name}": padding must be an int, 2 ints or 2 pairs of ints.')
    return tuple((p, p) if isinstance(p, int) else tuple(p) for p in padding)


class ZeroPadding2D(Layer):
    """Pads height and width of [batch, h, w, c] with zeros."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(padding, self.name)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        return _api().pad(inputs, [[0, 0], list(self.padding[0]), list(self.padding[1]),
                                   [0, 0]])


class UpSampling2D(Layer):
    """Repeats rows and columns of [batch, h, w, c] `size` times (nearest neighbour)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        if interpolation != "nearest":
            raise ValueError(f'Layer "{self.name}": only interpolation="nearest" is supported.')
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        tf = _api()
        return tf.repeat(tf.repeat(inputs, self.size[0], axis=1), self.size[1], axis=2)


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution; kernel [kh, kw, filters, in_channels]."""

    def build(self, input_shape):
        channels = input_shape[-1]
        if channels is None:
            raise ValueError(f'Layer "{self.name}": the channel dimension of the inputs should '
                             "be defined. Found None.")
        self.kernel = self.add_weight("kernel", (*self.kernel_size, self.filters, channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = (self.add_weight("bias", (self.filters,), initializer=self.bias_initializer,
                                     regularizer=self.bias_regularizer,
                                     constraint=self.bias_constraint)
                     if self.use_bias else None)
        self.input_spec = InputSpec(ndim=4, axes={-1: channels})
        self.built = True

    def _size(self, size, kernel, stride):
        if size is None:
            return None
        if self.padding == "same":
            return size * stride
        return size * stride + max(kernel - stride, 0)

    def _convolve(self, tf, inputs):
        if self.dilation_rate != (1, 1):
            raise ValueError(f'Layer "{self.name}": dilation_rate is not supported.')
        dims = inputs.get_shape().as_list()
        dynamic = tf.shape(inputs)
        sizes = [self._size(dims[i + 1], self.kernel_size[i], self.strides[i]) for i in (0, 1)]
        if None in sizes:
            raise ValueError(f'Layer "{self.name}": height and width must be known.')
        output_shape = tf.stack([dynamic[0], sizes[0], sizes[1], self.filters])
        outputs = tf.nn.conv2d_transpose(inputs, self.kernel, output_shape,
                                         strides=[1, *self.strides, 1],
                                         padding=self.padding.upper())
        outputs.set_shape([dims[0], *sizes, self.filters])
        return outputs


class RepeatVector(Layer):
    """[batch, d] -> [batch, n, d]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        tf = _api()
        return tf.tile(tf.expand_dims(inputs, 1), [1, self.n, 1])


class Permute(Layer):
    """Permutes the non-batch dimensions by `dims` (1-based)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f'Layer "{self.name}": invalid permutation `dims` {dims}; it must '
                             "be a permutation of 1..n.")

    def call(self, inputs):
        return _api().transpose(inputs, [0, *self.dims])


class TimeDistributed(Layer):
    """Applies `layer` to every time step of [batch, time, ...]."""

    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        self.layer = layer
        self.input_spec = InputSpec(min_ndim=3)

    def _sublayers(self):
        return [self.layer]

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build((input_shape[0], *input_shape[2:]))
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None):
        tf = _api()
        dims = inputs.get_shape().as_list()
        flat = tf.reshape(inputs, [-1, *dims[2:]]) if None not in dims[2:] else tf.reshape(
            inputs, tf.concat([[-1], tf.shape(inputs)[2:]], 0))
        kwargs = {"training": training} if training is not None else {}
        outputs = self.layer(flat, **kwargs)
        tail = outputs.get_shape().as_list()[1:]
        steps = dims[1] if dims[1] is not None else tf.shape(inputs)[1]
        result = tf.reshape(outputs, tf.concat([[-1, steps], tf.shape(outputs)[1:]], 0)
                            if None in tail or not isinstance(steps, int)
                            else [-1, steps, *tail])
        result.set_shape([dims[0], dims[1], *tail])
        return result


class Bidirectional(Layer):
    """Runs a recurrent `layer` forwards and a copy backwards; merges by `merge_mode`."""

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs):
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be "
                             "one of {'sum', 'mul', 'ave', 'concat', None}")
        super().__init__(**kwargs)
        self.forward_layer = self._renamed(layer, "forward_" + layer.name, layer.go_backwards)
        source = backward_layer if backward_layer is not None else layer
        self.backward_layer = self._renamed(source, "backward_" + source.name,
                                            not layer.go_backwards if backward_layer is None
                                            else source.go_backwards)
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state

    @staticmethod
    def _renamed(layer, name, go_backwards):
        clone = copy.copy(layer)
        clone._name = name
        clone.go_backwards = go_backwards
        clone.built = False
        clone._trainable_weights, clone._non_trainable_weights = [], []
        clone._updates, clone._losses, clone._inbound_nodes = [], [], []
        return clone

    def _sublayers(self):
        return [self.forward_layer, self.backward_layer]

    def call(self, inputs):
        tf = _api()
        forward = self.forward_layer(inputs)
        backward = self.backward_layer(inputs)
        states = []
        if self.return_state:
            forward, *f_states = forward
            backward, *b_states = backward
            states = f_states + b_states
        if self.return_sequences:
            backward = tf.reverse(backward, [1])
        if self.merge_mode == "concat":
            output = tf.concat([forward, backward], axis=-1)
        elif self.merge_mode == "sum":
            output = forward + backward
        elif self.merge_mode == "mul":
            output = forward * backward
        elif self.merge_mode == "ave":
            output = (forward + backward) / 2.0
        else:
            output = [forward, backward]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output
