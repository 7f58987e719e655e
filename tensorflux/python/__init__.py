"""`tensorflux.python`: the TensorFlow-private module paths TF1 programs commonly import
(`from tensorflow.python.client import device_lib`, `...framework import graph_util`,
`...platform import gfile`, `...saved_model import tag_constants`, `...util import nest`, ...),
served by the modules that implement them here.

Contract: importing `tensorflux.python.<path>` gives the module `_ALIASES[<path>]` itself (no
copy, so state and identity are shared with the public API), and a path below an aliased one
(`keras.layers`) the same path below its module. A path in `private_names` gives a facade
module holding the public API's objects under the TF module's names. An intermediate path
(`tensorflux.python.framework`) is an empty package; any other path raises
ModuleNotFoundError naming it, since TF's private modules are not an API.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

from tensorflux.python import gen_ops, private_names

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
    "ops.metrics": "tensorflux.metrics",
    "ops.metrics_impl": "tensorflux.python.metrics_impl",
    "ops.math_ops": "tensorflux.ops.math",
    "ops.nn": "tensorflux.nn",
    "ops.nn_ops": "tensorflux.nn",
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
    "training.training_util": "tensorflux.train.training_util",
    "util.deprecation": "tensorflux.python.deprecation",
    "util.nest": "tensorflux.framework.nest",
    "util.tf_inspect": "tensorflux.python.tf_inspect",
    "client.timeline": "tensorflux.client.timeline",
    "estimator": "tensorflux.estimator",
    "estimator.export.export": "tensorflux.estimator.export",
    "estimator.export.export_output": "tensorflux.estimator.export_output",
    "layers.convolutional": "tensorflux.layers.convolutional",
    "layers.core": "tensorflux.layers.core",
    "layers.layers": "tensorflux.layers",
    "layers.normalization": "tensorflux.layers.normalization",
    "tools.freeze_graph": "tensorflux.python.freeze_graph",
    "tools.inspect_checkpoint": "tensorflux.python.inspect_checkpoint",
    "training.input": "tensorflux.train.input",
    "training.session_manager": "tensorflux.train.session_manager",
    "training.supervisor": "tensorflux.train.supervisor",
    "training.sync_replicas_optimizer": "tensorflux.train.sync_replicas_optimizer",
}
# TF's generated op modules (`gen_nn_ops`, ...; training_ops is the generated module of the
# optimizers' Apply* ops).
_GEN_OPS = frozenset(f"ops.gen_{family}_ops" for family in (
    "array", "audio", "bitwise", "candidate_sampling", "control_flow", "ctc", "data_flow",
    "functional", "image", "io", "linalg", "list", "logging", "lookup", "manip", "math", "nn",
    "parsing", "random", "resource_variable", "sdca", "set", "sparse", "spectral", "state",
    "stateless_random", "string", "summary", "user")) | {"training.training_ops",
                                                         "training.gen_training_ops"}
# Paths that TF has as packages with names of their own -> the module whose names they hold.
_PACKAGE_VIEWS = {"estimator.export": "tensorflux.estimator.export"}
_SERVED = set(_ALIASES) | private_names.facade_paths() | _GEN_OPS | set(_PACKAGE_VIEWS)
_PACKAGES = {path.rsplit(".", i)[0] for path in _SERVED for i in range(1, path.count(".") + 1)}
_OWN_MODULES = ("debug", "deprecation", "device_lib", "framework_ops", "freeze_graph",
                "gen_ops", "inspect_checkpoint", "metrics_impl", "private_names", "tf_inspect")
_PREFIX = __name__ + "."


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self._target = target

    def create_module(self, spec):
        if self._target is None:
            module = types.ModuleType(spec.name, "TensorFlow-private package path (empty).")
            module.__path__ = []
            return module
        module = importlib.import_module(self._target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # The import system stamped the alias's spec on the shared module: give it back its
        # own, so the module keeps its identity (reload, tooling) under its real name.
        if self._target is not None:
            module.__spec__ = self._own_spec


class _PackageViewLoader(importlib.abc.Loader):
    """A package holding the public names of one of our modules: TF's path is both a module
    with names and the parent of submodules (`estimator.export` and `estimator.export.export`)."""

    def __init__(self, target):
        self._target = target

    def create_module(self, spec):
        source = importlib.import_module(self._target)
        module = types.ModuleType(spec.name, source.__doc__)
        module.__dict__.update({k: v for k, v in vars(source).items() if not k.startswith("_")})
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


class _FacadeLoader(importlib.abc.Loader):
    def __init__(self, path):
        self._path = path

    def create_module(self, spec):
        if self._path in _GEN_OPS:
            return gen_ops.GenOpsModule(spec.name, f"TensorFlow's generated `{self._path}`: "
                                        "one function per registered op.")
        module = types.ModuleType(spec.name, f"TensorFlow's private `{self._path}`: the public "
                                  "API's objects under that module's names.")
        module.__dict__.update(private_names.facade_attributes(self._path))
        return module

    def exec_module(self, module):
        pass


def _below_alias(rest):
    """The module serving `rest` when it lies below an aliased path (`keras.layers`), or None."""
    head, _, tail = rest.partition(".")
    while tail:
        if head in _ALIASES:
            target = f"{_ALIASES[head]}.{tail}"
            try:
                return importlib.util.find_spec(target) and target
            except ModuleNotFoundError:
                return None
        step, _, tail = tail.partition(".")
        head = f"{head}.{step}"
    return None


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds `tensorflux.python.*` paths in `_ALIASES` (and their parent packages)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        rest = fullname[len(_PREFIX):]
        if rest in _ALIASES:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(_ALIASES[rest]))
        if rest in _PACKAGE_VIEWS:
            return importlib.machinery.ModuleSpec(
                fullname, _PackageViewLoader(_PACKAGE_VIEWS[rest]), is_package=True)
        if rest in _SERVED:
            return importlib.machinery.ModuleSpec(fullname, _FacadeLoader(rest))
        if rest in _PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(None), is_package=True)
        if rest in _OWN_MODULES:
            return None  # this package's own modules
        below = _below_alias(rest)
        if below is not None:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(below))
        raise ModuleNotFoundError(
            f"No module named '{fullname}': tensorflux serves only the TensorFlow-private "
            f"paths TF1 programs commonly import ({', '.join(sorted(_SERVED))}); use the "
            "public API (tf.*) for the rest.", name=fullname)


if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())
