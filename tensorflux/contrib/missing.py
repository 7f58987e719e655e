"""What tensorflux does not provide of `tf.contrib`, and what to use instead.

A program touching a contrib module or name that is not here gets a `ContribNotProvidedError`
(an AttributeError, so `hasattr` and `getattr(..., default)` keep working) naming the module
and its core replacement, instead of a bare "module has no attribute".
"""

from __future__ import annotations

__all__ = ["ContribNotProvidedError", "REPLACEMENTS", "module_getattr"]

# contrib module -> what a TF1 program should use instead (TF 1.15's own advice where it gave
# one). Modules not listed get a generic message.
REPLACEMENTS = {
    "bayesflow": "tf.distributions (tensorflow_probability is not provided)",
    "boosted_trees": "tf.estimator.BoostedTreesClassifier / BoostedTreesRegressor",
    "cloud": "not supported (no cloud integrations)",
    "compiler": "not supported (no XLA)",
    "constrained_optimization": "not supported",
    "copy_graph": "tf.train.export_meta_graph / tf.train.import_meta_graph",
    "cudnn_rnn": "tf.nn.rnn_cell.LSTMCell / tf.contrib.rnn.LSTMBlockCell (no GPU kernels)",
    "deprecated": "tf.summary",
    "eager": "not supported (tensorflux runs graph mode only)",
    "ffmpeg": "not supported",
    "gan": "not supported (build the GAN losses with core ops)",
    "graph_editor": "not supported (rebuild the graph, or tf.import_graph_def with input_map)",
    "grid_rnn": "not supported",
    "hooks": "tf.train hooks (tf.train.*Hook)",
    "input_pipeline": "tf.data",
    "integrate": "not supported",
    "kernel_methods": "not supported",
    "labeled_tensor": "not supported",
    "layers.python": "tf.contrib.layers",
    "learn": "tf.estimator",
    "linear_optimizer": "tf.estimator.LinearClassifier / LinearRegressor",
    "losses": "tf.losses",
    "memory_stats": "not supported",
    "mixed_precision": "not supported",
    "model_pruning": "not supported",
    "nccl": "not supported (no GPUs)",
    "quantization": "not supported (no quantized kernels)",
    "quantize": "not supported (no quantization-aware training rewrites)",
    "receptive_field": "not supported",
    "recurrent": "tf.nn.dynamic_rnn",
    "reduce_slice_ops": "tf.math.segment_sum and friends",
    "remote_fused_graph": "not supported",
    "resampler": "not supported",
    "rpc": "not supported",
    "saved_model": "tf.saved_model",
    "session_bundle": "tf.saved_model",
    "solvers": "tf.linalg",
    "specs": "not supported",
    "staging": "tf.data prefetch / tf.FIFOQueue",
    "stat_summarizer": "tf.RunMetadata step stats",
    "summary": "tf.summary",
    "tensor_forest": "not supported",
    "text": "tf.strings",
    "timeseries": "not supported",
    "verbs": "not supported (gRPC transport only)",
}


class ContribNotProvidedError(AttributeError):
    """A `tf.contrib` module or name that tensorflux does not provide.

    `module` is the dotted contrib path ("contrib.learn"), `name` the attribute asked for,
    `replacement` what to use instead (or None).
    """

    def __init__(self, module: str, name: str, replacement: str | None):
        self.module = module
        self.name = name
        self.replacement = replacement
        target = f"tf.{module}.{name}" if name else f"tf.{module}"
        if replacement is None:
            advice = "it has no tensorflux implementation; write it with core ops"
        elif replacement.startswith("not supported"):
            advice = replacement
        else:
            advice = f"use {replacement} instead"
        super().__init__(f"{target} is not provided by tensorflux: {advice}.")


def _replacement_for(module: str, name: str, table: dict) -> str | None:
    return table.get(name) or table.get("*")


def module_getattr(module: str, replacements: dict | None = None):
    """A module-level `__getattr__` raising ContribNotProvidedError for unknown names.

    Args:
        module: the module's contrib path, e.g. "contrib.layers".
        replacements: name -> replacement text; the key "*" is the default for every name.

    Returns:
        `__getattr__(name)` for the module.
    """
    table = dict(replacements or {})

    def __getattr__(name):  # noqa: N807 - module hook
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module 'tensorflux.{module}' has no attribute '{name}'")
        raise ContribNotProvidedError(module, name, _replacement_for(module, name, table))

    return __getattr__
