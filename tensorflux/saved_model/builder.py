"""Writing SavedModels (TF1 `tf.saved_model.builder.SavedModelBuilder`).

Layout of an export directory, as TensorFlow's:
    saved_model.pb (or .pbtxt)     a `SavedModel` proto: one MetaGraphDef per tag set
    variables/variables.index      the checkpoint of every saveable object (our V2 format,
    variables/variables.data-00000-of-00001    written by `tf.train.Saver(sharded=True)`)
    assets/                        copies of the asset files (vocabularies ...)

Assets are recorded the TF1 way: an `AssetFileDef` (packed in a `google.protobuf.Any` typed
as TensorFlow's, so TensorFlow can read it) per asset in the `saved_model_assets` collection;
the loader feeds each asset tensor with the copied file's path when it runs the main op.
"""

from __future__ import annotations

import os
import shutil

from google.protobuf import any_pb2, text_format

from tensorflux.framework import graph as graph_mod
from tensorflux.framework import tensor_util
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.ops.state import variables
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import meta_graph_pb2, saved_model_pb2, saver_pb2
from tensorflux.saved_model import constants
from tensorflux.train import meta_graph
from tensorflux.train.saver import Saver

__all__ = ["SavedModelBuilder"]

ASSET_TYPE_URL = "type.googleapis.com/tensorflow.AssetFileDef"


def _asset_path_from_tensor(path_tensor) -> str:
    if not isinstance(path_tensor, Tensor):
        raise TypeError("Asset path tensor must be a Tensor.")
    if path_tensor.op.type != "Const":
        raise TypeError("Asset path tensor must be of type constant.")
    if path_tensor.dtype.base_dtype.name != "string":
        raise TypeError("Asset path tensor must be of type string.")
    values = tensor_util.make_ndarray(path_tensor.op.get_attr("value"))
    if getattr(values, "size", 1) != 1:
        raise TypeError("Asset path tensor must be a scalar.")
    value = values.reshape(-1)[0] if hasattr(values, "reshape") else values
    return value.decode() if isinstance(value, bytes) else str(value)


def _same_file(a: str, b: str) -> bool:
    with open(a, "rb") as first, open(b, "rb") as second:
        return first.read() == second.read()


def _asset_filename(path: str, taken: dict) -> str:
    """The name of `path` under assets/: its basename, suffixed "_<i>" when another file of
    that name and different content is already there."""
    base = os.path.basename(path)
    if base not in taken or taken[base] == path or _same_file(path, taken[base]):
        return base
    i = 1
    name = f"{base}_{i}"
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name


def _pack_asset(asset: meta_graph_pb2.AssetFileDef) -> any_pb2.Any:
    return any_pb2.Any(type_url=ASSET_TYPE_URL, value=asset.SerializeToString())


class SavedModelBuilder:
    """Builds a SavedModel: variables and assets once, then one MetaGraphDef per tag set.

    Contract: `add_meta_graph_and_variables` is called exactly once, before any
    `add_meta_graph`; `save` writes `saved_model.pb` (or `.pbtxt`) and returns its path as bytes.
    The export directory must not exist or be empty.

    Example:
        >>> builder = tf.saved_model.builder.SavedModelBuilder("/tmp/model/1")
        >>> builder.add_meta_graph_and_variables(
        ...     sess, [tf.saved_model.tag_constants.SERVING],
        ...     signature_def_map={"serving_default": signature})
        >>> builder.save()
    """

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        if isinstance(self._export_dir, bytes):
            self._export_dir = self._export_dir.decode()
        self._saved_model = saved_model_pb2.SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        if os.path.exists(self._export_dir):
            if os.listdir(self._export_dir):
                raise AssertionError(
                    f"Export directory already exists, and isn't empty. Please choose a "
                    f"different export directory, or delete all the contents of the specified "
                    f"directory: {self._export_dir}")
        else:
            os.makedirs(self._export_dir)
        self._has_saved_variables = False

    # -- checks -------------------------------------------------------------------------------

    @staticmethod
    def _validate_tensor_info(tensor_info) -> None:
        if tensor_info is None:
            raise AssertionError("All TensorInfo protos used in the SignatureDefs must have "
                                 "the name and dtype fields set.")
        if tensor_info.WhichOneof("encoding") is None:
            raise AssertionError(f"All TensorInfo protos used in the SignatureDefs must have "
                                 f"one of the 'encoding' fields (e.g., name or coo_sparse) "
                                 f"set: {tensor_info}")
        if tensor_info.dtype == 0:
            raise AssertionError(f"All TensorInfo protos used in the SignatureDefs must have "
                                 f"the dtype field set: {tensor_info}")

    def _validate_signature_def_map(self, signature_def_map) -> None:
        for key, signature in signature_def_map.items():
            if key in (constants.INIT_OP_SIGNATURE_KEY, constants.TRAIN_OP_SIGNATURE_KEY):
                raise KeyError(f'SignatureDef map key "{key}" is reserved for initialization '
                               f"and training ops. Please use a different key.")
            if not isinstance(signature, meta_graph_pb2.SignatureDef):
                raise TypeError(f"signature_def_map['{key}'] must be a SignatureDef, got "
                                f"{type(signature).__name__}")
            for info in signature.inputs.values():
                self._validate_tensor_info(info)
            for info in signature.outputs.values():
                self._validate_tensor_info(info)

    # -- collections --------------------------------------------------------------------------

    def _add_assets(self, assets_collection) -> None:
        if assets_collection is None:
            logging.info("No assets to save.")
            return
        graph = graph_mod.get_default_graph()
        taken: dict = {}
        for tensor in assets_collection:
            source = _asset_path_from_tensor(tensor)
            if not source:
                raise ValueError(f"Invalid asset filepath tensor {tensor}")
            filename = _asset_filename(source, taken)
            asset = meta_graph_pb2.AssetFileDef(filename=filename)
            asset.tensor_info.name = tensor.name
            graph.add_to_collection(constants.ASSETS_KEY, _pack_asset(asset))
            taken[filename] = source
        if not taken:
            logging.info("No assets to write.")
            return
        assets_dir = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY)
        os.makedirs(assets_dir, exist_ok=True)
        for filename, source in taken.items():
            target = os.path.join(assets_dir, filename)
            if os.path.exists(source) and source != target and not os.path.exists(target):
                shutil.copyfile(source, target)

    @staticmethod
    def _add_main_op(main_op) -> None:
        if main_op is None:
            return
        if not isinstance(main_op, Operation):
            raise TypeError(f"main_op needs to be an Operation: {main_op!r}")
        graph = graph_mod.get_default_graph()
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            if graph.get_collection(key):
                raise ValueError(f"Graph already contains one or more main ops under the "
                                 f"collection {key}.")
        graph.add_to_collection(constants.MAIN_OP_KEY, main_op)

    @staticmethod
    def _maybe_create_saver(saver):
        if saver is not None:
            return saver

        return Saver(variables._all_saveable_objects(), sharded=True,
                     write_version=saver_pb2.SaverDef.V2, allow_empty=True)

    def _export_meta_graph(self, saver, clear_devices, strip_default_attrs):
        """The default graph's MetaGraphDef; the asset collection (Any protos) is written
        here, as TensorFlow writes it."""

        graph = graph_mod.get_default_graph()
        keys = [k for k in graph.get_all_collection_keys()
                if isinstance(k, str) and k != constants.ASSETS_KEY]
        saver_def = saver.saver_def if getattr(saver, "saver_def", None) else None
        meta = meta_graph.export_meta_graph(saver_def=saver_def, collection_list=keys,
                                            clear_devices=clear_devices,
                                            strip_default_attrs=strip_default_attrs)
        assets = graph.get_collection(constants.ASSETS_KEY)
        if assets:
            meta.collection_def[constants.ASSETS_KEY].any_list.value.extend(assets)
        return meta

    def _tag_and_add_meta_graph(self, meta, tags, signature_def_map) -> None:
        meta.meta_info_def.tags.extend(tags)
        for key, signature in signature_def_map.items():
            meta.signature_def[key].CopyFrom(signature)
        self._saved_model.meta_graphs.add().CopyFrom(meta)

    # -- public API ---------------------------------------------------------------------------

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Saves the variables of `sess` and adds the current graph under `tags`.

        Args:
            sess: the Session holding the variable values.
            tags: list of tag strings for this MetaGraphDef (e.g. [tag_constants.SERVING]).
            signature_def_map: {key: SignatureDef}.
            assets_collection: string Const tensors naming files to copy into assets/.
            legacy_init_op, main_op: an Operation the loader runs after restoring
                (legacy_init_op is the older name of the same thing).
            clear_devices: drop device placements from the exported graph.
            strip_default_attrs: accepted for API compatibility.
            saver: the Saver to use (default: a sharded Saver of all saveable objects).

        Raises:
            AssertionError: called twice, or a SignatureDef with an incomplete TensorInfo.
            TypeError: `main_op` is not an Operation.
            ValueError: the graph already has a main op.
        """
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already "
                                 "been saved. Please invoke `add_meta_graph()` instead.")
        signature_def_map = signature_def_map or {}
        self._validate_signature_def_map(signature_def_map)
        with sess.graph.as_default():
            self._add_assets(assets_collection)
            self._add_main_op(main_op if main_op is not None else legacy_init_op)
            variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
            os.makedirs(variables_dir, exist_ok=True)
            saver = self._maybe_create_saver(saver)
            saver.save(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME),
                       write_meta_graph=False, write_state=False)
            meta = self._export_meta_graph(saver, clear_devices, strip_default_attrs)
        self._tag_and_add_meta_graph(meta, tags, signature_def_map)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        """Adds the current default graph under `tags`, sharing the saved variables.

        Raises:
            AssertionError: `add_meta_graph_and_variables` was not called first.
        """
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        signature_def_map = signature_def_map or {}
        self._validate_signature_def_map(signature_def_map)
        self._add_assets(assets_collection)
        self._add_main_op(main_op if main_op is not None else legacy_init_op)
        saver = self._maybe_create_saver(saver)
        meta = self._export_meta_graph(saver, clear_devices, strip_default_attrs)
        self._tag_and_add_meta_graph(meta, tags, signature_def_map)

    def save(self, as_text=False):
        """Writes saved_model.pb (or saved_model.pbtxt with `as_text`); returns its path."""
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        partial = path + ".tmp"
        with open(partial, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
        logging.info("SavedModel written to: %s", path)
        return path.encode()


Builder = SavedModelBuilder
