"""`tensorflux.python`: the TensorFlow-private module paths TF1 programs commonly import
(`from tensorflow.python.client import device_lib`, `...framework import graph_util`,
`...platform import gfile`, `...saved_model import tag_constants`, `...util import nest`, ...),
served by the modules that implement them here.

Contract: importing `tensorflux.python.<path>` gives the module `_ALIASES[<path>]` itself (no
copy, so state and identity are shared with the public API); an intermediate path
(`tensorflux.python.framework`) is an empty package; any other path raises
ModuleNotFoundError naming it, since TF's private modules are not an API.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

# TF-private path (under tensorflow.python) -> the module that serves it.
_ALIASES = {
    "client.device_lib": "tensorflux.python.device_lib",
    "framework.constant_op": "tensorflux.ops.array.constants",
    "framework.dtypes": "tensorflux.framework.dtypes",
    "framework.errors": "tensorflux.framework.errors",
    "framework.errors_impl": "tensorflux.framework.errors",
    "framework.graph_util": "tensorflux.framework.graph_util",
    "framework.importer": "tensorflux.framework.graph_import",
    "framework.ops": "tensorflux.python.framework_ops",
    "framework.sparse_tensor": "tensorflux.framework.sparse_tensor",
    "framework.tensor_shape": "tensorflux.framework.tensor_shape",
    "framework.tensor_util": "tensorflux.framework.tensor_util",
    "keras": "tensorflux.keras",
    "ops.array_ops": "tensorflux.ops.array",
    "ops.gradients": "tensorflux.ops.autodiff.gradients",
    "ops.gradients_impl": "tensorflux.ops.autodiff.gradients",
    "ops.init_ops": "tensorflux.ops.state.initializers",
    "ops.math_ops": "tensorflux.ops.math",
    "ops.nn": "tensorflux.nn",
    "ops.nn_ops": "tensorflux.nn",
    "ops.resources": "tensorflux.ops.state.resources",
    "ops.rnn": "tensorflux.ops.nn.rnn",
    "ops.rnn_cell": "tensorflux.layers.rnn_cell",
    "ops.rnn_cell_impl": "tensorflux.layers.rnn_cell",
    "ops.variable_scope": "tensorflux.ops.state.variable_scope",
    "ops.variables": "tensorflux.ops.state.variables",
    "platform.app": "tensorflux.platform.app",
    "platform.flags": "tensorflux.platform.flags",
    "platform.gfile": "tensorflux.platform.gfile",
    "platform.tf_logging": "tensorflux.platform.tf_logging",
    "saved_model.builder": "tensorflux.saved_model.builder",
    "saved_model.loader": "tensorflux.saved_model.loader",
    "saved_model.main_op": "tensorflux.saved_model.main_op",
    "saved_model.signature_constants": "tensorflux.saved_model.signature_constants",
    "saved_model.signature_def_utils": "tensorflux.saved_model.signature_def_utils",
    "saved_model.simple_save": "tensorflux.saved_model.simple_save",
    "saved_model.tag_constants": "tensorflux.saved_model.tag_constants",
    "saved_model.utils": "tensorflux.saved_model.utils",
    "summary.summary": "tensorflux.summary",
    "training.basic_session_run_hooks": "tensorflux.train.basic_session_run_hooks",
    "training.checkpoint_utils": "tensorflux.train.checkpoint_utils",
    "training.coordinator": "tensorflux.train.coordinator",
    "training.learning_rate_decay": "tensorflux.train.learning_rate_decay",
    "training.monitored_session": "tensorflux.train.monitored_session",
    "training.moving_averages": "tensorflux.train.moving_averages",
    "training.optimizer": "tensorflux.train.optimizer",
    "training.queue_runner": "tensorflux.train.queue_runner",
    "training.saver": "tensorflux.train.saver",
    "training.session_run_hook": "tensorflux.train.session_run_hook",
    "training.slot_creator": "tensorflux.train.slot_creator",
    "training.training_util": "tensorflux.train.training_util",
    "util.nest": "tensorflux.framework.nest",
}
_PACKAGES = {path.rsplit(".", i)[0] for path in _ALIASES for i in range(1, path.count(".") + 1)}
_PREFIX = __name__ + "."


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self._target = target

    def create_module(self, spec):
        if self._target is None:
            module = types.ModuleType(spec.name, "TensorFlow-private package path (empty).")
            module.__path__ = []
            return module
        return importlib.import_module(self._target)

    def exec_module(self, module):
        pass


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds `tensorflux.python.*` paths in `_ALIASES` (and their parent packages)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        rest = fullname[len(_PREFIX):]
        if rest in _ALIASES:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(_ALIASES[rest]))
        if rest in _PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(None), is_package=True)
        if rest in ("device_lib", "framework_ops"):
            return None  # this package's own modules
        raise ModuleNotFoundError(
            f"No module named '{fullname}': tensorflux serves only the TensorFlow-private "
            f"paths TF1 programs commonly import ({', '.join(sorted(_ALIASES))}); use the "
            "public API (tf.*) for the rest.", name=fullname)


if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())
