"""`tf.contrib`: the parts of TensorFlow 1.15's contrib that TF1 programs used.

Submodules are imported on first access (`tf.contrib.layers` loads
`tensorflux.contrib.layers`), so `import tensorflux` stays cheap. Asking for a contrib module
tensorflux does not provide raises `ContribNotProvidedError` (an AttributeError) naming the
module and its core replacement (see `tensorflux.contrib.missing.REPLACEMENTS`).
"""

from __future__ import annotations

import importlib

from tensorflux.contrib.missing import REPLACEMENTS, ContribNotProvidedError

__all__ = ["PROVIDED", "ContribNotProvidedError"]

# The submodules tensorflux provides (each is `tensorflux.contrib.<name>`).
PROVIDED = ("distributions", "framework", "layers", "learn", "legacy_seq2seq", "losses",
            "metrics", "opt", "rnn", "seq2seq", "slim", "tensorboard", "training")


def __getattr__(name):  # noqa: N807 - module hook
    if name in PROVIDED:
        module = importlib.import_module(f"tensorflux.contrib.{name}")
        globals()[name] = module
        return module
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'tensorflux.contrib' has no attribute '{name}'")
    raise ContribNotProvidedError("contrib", name, REPLACEMENTS.get(name))


def __dir__():
    return sorted(set(globals()) | set(PROVIDED))
