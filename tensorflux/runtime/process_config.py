"""Process-wide session defaults set through `tf.config` (TF 1.15's context settings).

A `ConfigProto` field left at its default falls back to these: the intra-/inter-op thread
counts (`tf.config.threading`), soft device placement, the JIT switch and grappler's
experimental options (`tf.config.optimizer`), the number of logical CPUs
(`tf.config.set_logical_device_configuration`). Values a session's ConfigProto sets win.
"""

from __future__ import annotations

import threading

from tensorflux.protos import config_pb2, rewriter_config_pb2

__all__ = ["defaults", "optimizer_options_for", "rewrite_options_for", "REWRITER_TOGGLES",
           "REWRITER_BOOLS"]

# The experimental options of `tf.config.optimizer.set_experimental_options`: toggles of
# RewriterConfig (True -> ON, False -> OFF) and its plain fields.
REWRITER_TOGGLES = ("layout_optimizer", "constant_folding", "shape_optimization", "remapping",
                    "arithmetic_optimization", "dependency_optimization", "loop_optimization",
                    "function_optimization", "debug_stripper", "scoped_allocator_optimization",
                    "pin_to_host_optimization", "implementation_selector",
                    "auto_mixed_precision", "common_subgraph_elimination")
REWRITER_BOOLS = ("disable_model_pruning", "disable_meta_optimizer")
_REWRITER_INTS = ("min_graph_nodes",)


class _Defaults:
    """The settings; reads and writes are atomic under one lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self.intra_op_threads = 0
        self.inter_op_threads = 0
        self.soft_device_placement = False
        self.jit = False
        self.rewriter: dict = {}
        self.logical_cpus = 1

    def update(self, **values) -> None:
        with self._lock:
            for key, value in values.items():
                if not hasattr(self, key):
                    raise AttributeError(f"no process default named {key!r}")
                setattr(self, key, value)

    def rewriter_options(self) -> dict:
        with self._lock:
            return dict(self.rewriter)

    def set_rewriter_options(self, options: dict) -> None:
        allowed = REWRITER_TOGGLES + REWRITER_BOOLS + _REWRITER_INTS
        for key in options:
            if key not in allowed:
                raise ValueError(f"Unknown optimizer option {key!r}; known options: "
                                 f"{', '.join(allowed)}")
        with self._lock:
            self.rewriter.update(options)


defaults = _Defaults()


def optimizer_options_for(config):
    """`config`'s OptimizerOptions, with the JIT switch of `tf.config.optimizer.set_jit` when
    the config leaves `global_jit_level` at its default (None: no config and no JIT)."""
    options = config.graph_options.optimizer_options if config is not None else None
    if not defaults.jit:
        return options
    if options is not None and options.global_jit_level != config_pb2.OptimizerOptions.DEFAULT:
        return options
    merged = config_pb2.OptimizerOptions()
    if options is not None:
        merged.CopyFrom(options)
    merged.global_jit_level = config_pb2.OptimizerOptions.ON_1
    return merged


def rewrite_options_for(config):
    """`config`'s RewriterConfig, or one built from `tf.config.optimizer`'s experimental
    options when the config sets none (None: no options anywhere)."""
    if config is not None and config.graph_options.HasField("rewrite_options"):
        return config.graph_options.rewrite_options
    options = defaults.rewriter_options()
    if not options:
        return None
    rewriter = rewriter_config_pb2.RewriterConfig()
    for key, value in options.items():
        if key in REWRITER_TOGGLES:
            setattr(rewriter, key, rewriter_config_pb2.RewriterConfig.ON if value
                    else rewriter_config_pb2.RewriterConfig.OFF)
        else:
            setattr(rewriter, key, type(getattr(rewriter, key))(value))
    return rewriter
