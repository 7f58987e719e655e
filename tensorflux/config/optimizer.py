"""`tf.config.optimizer`: the JIT switch and grappler's experimental options, applied to
sessions whose ConfigProto does not set them."""

from __future__ import annotations

from tensorflux.runtime.process_config import defaults

__all__ = ["get_jit", "set_jit", "get_experimental_options", "set_experimental_options"]


def get_jit():
    """True when elementwise fusion (TF's XLA auto-clustering switch) is on by default."""
    return defaults.jit


def set_jit(enabled):
    """Turns the fusion rewrite on (`global_jit_level=ON_1`) for sessions created afterwards."""
    defaults.update(jit=bool(enabled))


def get_experimental_options():
    """The grappler options set so far (a dict of option name to value)."""
    return defaults.rewriter_options()


def set_experimental_options(options):
    """Sets grappler options ('constant_folding': False, 'disable_meta_optimizer': True, ...).

    Raises:
        ValueError: an option name grappler does not have.
    """
    defaults.set_rewriter_options(dict(options))
