"""`tf.contrib`: the parts of TensorFlow 1.15's contrib that TF1 programs used.

Submodules are imported on first access (`tf.contrib.layers` loads
`tensorflux.contrib.layers`), so `import tensorflux` stays cheap. Asking for a contrib module
tensorflux does not provide raises `ContribNotProvidedError` (an AttributeError) naming the
module and its core replacement (see `tensorflux.contrib.missing.REPLACEMENTS`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys

from tensorflux.contrib.missing import REPLACEMENTS, ContribNotProvidedError

__all__ = ["ALIASES", "PROVIDED", "ContribNotProvidedError"]

# The submodules tensorflux provides (each is `tensorflux.contrib.<name>`).
PROVIDED = ("checkpoint", "cluster_resolver", "crf", "data", "distribute", "distributions",
            "estimator", "factorization", "feature_column", "framework", "image", "layers", "learn",
            "legacy_seq2seq", "lookup", "losses", "metrics", "nn", "opt", "predictor", "rnn",
            "seq2seq", "signal", "slim", "sparsemax", "stateless", "tensorboard", "testing",
            "tfprof", "tpu", "training", "util")

_UNBUILT = {"rnn": "tf.nn.rnn_cell and tf.nn.static_rnn / tf.nn.dynamic_rnn",
            "seq2seq": "tf.nn.dynamic_rnn with a hand-written decoder loop",
            "legacy_seq2seq": "tf.nn.static_rnn with a hand-written decoder"}


# TF 1.15's contrib modules that are plain aliases of a core module.
ALIASES = {"keras": "tensorflux.keras"}


def __getattr__(name):  # noqa: N807 - module hook
    if name in ALIASES:
        module = importlib.import_module(ALIASES[name])
        globals()[name] = module
        return module
    if name in PROVIDED:
        full = f"tensorflux.contrib.{name}"
        try:
            module = importlib.import_module(full)
        except ModuleNotFoundError as e:
            if e.name != full:
                raise
            # NOTE: a provided name whose package is absent from this build (built apart).
            raise ContribNotProvidedError("contrib", name, _UNBUILT.get(name)) from None
        globals()[name] = module
        return module
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'tensorflux.contrib' has no attribute '{name}'")
    raise ContribNotProvidedError("contrib", name, REPLACEMENTS.get(name))


class _NotProvidedFinder(importlib.abc.MetaPathFinder):
    """Turns `import tensorflux.contrib.<module tensorflux lacks>` into a clear error.

    Consulted after the regular finders (appended to `sys.meta_path`), so it only sees contrib
    modules that do not exist here; for the ones TF 1.15 had (`REPLACEMENTS`) it raises
    ModuleNotFoundError with the same advice as `tf.contrib.<name>` gives.
    """

    def find_spec(self, fullname, path=None, target=None):
        prefix = "tensorflux.contrib."
        if not fullname.startswith(prefix):
            return None
        name = fullname[len(prefix):]
        if "." in name or name not in REPLACEMENTS:
            return None
        message = str(ContribNotProvidedError("contrib", name, REPLACEMENTS[name]))
        raise ModuleNotFoundError(message, name=fullname)


if not any(isinstance(f, _NotProvidedFinder) for f in sys.meta_path):
    sys.meta_path.append(_NotProvidedFinder())


def __dir__():
    return sorted(set(globals()) | set(PROVIDED) | set(ALIASES))
