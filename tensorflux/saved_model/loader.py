"""Loading SavedModels into a session (TF1 `tf.saved_model.loader.load`)."""

from __future__ import annotations

import os

from google.protobuf import message as protobuf_message
from google.protobuf import text_format

from tensorflux.framework import errors
from tensorflux.ops.state import variables
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import meta_graph_pb2, saved_model_pb2
from tensorflux.saved_model import constants
from tensorflux.train import meta_graph
from tensorflux.train.saver import Saver

__all__ = ["load", "maybe_saved_model_directory", "contains_saved_model", "SavedModelLoader"]


def _as_str(path) -> str:
    path = os.fspath(path)
    return path.decode() if isinstance(path, bytes) else path


def parse_saved_model(export_dir):
    """The SavedModel proto of `export_dir` (saved_model.pb, else saved_model.pbtxt).

    Raises:
        OSError: neither file exists.
        DataLossError: the file cannot be parsed.
    """
    export_dir = _as_str(export_dir)
    pb_path = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    txt_path = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    saved_model = saved_model_pb2.SavedModel()
    if os.path.exists(pb_path):
        with open(pb_path, "rb") as handle:
            data = handle.read()
        try:
            saved_model.ParseFromString(data)
        except protobuf_message.DecodeError as err:
            raise errors.DataLossError(None, None, f"Cannot parse file {pb_path}: {err}") \
                from None
        return saved_model
    if os.path.exists(txt_path):
        with open(txt_path, encoding="utf-8") as handle:
            try:
                text_format.Merge(handle.read(), saved_model)
            except text_format.ParseError as err:
                raise errors.DataLossError(None, None, f"Cannot parse file {txt_path}: "
                                           f"{err}") from None
        return saved_model
    raise OSError(f"SavedModel file does not exist at: {export_dir}{os.path.sep}"
                  f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                  f"{constants.SAVED_MODEL_FILENAME_PB}}}")


def maybe_saved_model_directory(export_dir) -> bool:
    """True if `export_dir` holds a saved_model.pb or saved_model.pbtxt."""
    export_dir = _as_str(export_dir)
    return any(os.path.exists(os.path.join(export_dir, name))
               for name in (constants.SAVED_MODEL_FILENAME_PB,
                            constants.SAVED_MODEL_FILENAME_PBTXT))


contains_saved_model = maybe_saved_model_directory


def _prefixed(name: str, import_scope) -> str:
    return f"{import_scope}/{name}" if import_scope else name


def get_asset_tensors(export_dir, meta_graph_def, import_scope=None) -> dict:
    """{asset tensor name: path of the asset file under export_dir/assets}."""
    assets = list(meta_graph_def.asset_file_def)
    if not assets and constants.ASSETS_KEY in meta_graph_def.collection_def:
        for packed in meta_graph_def.collection_def[constants.ASSETS_KEY].any_list.value:
            if not packed.type_url.endswith(".AssetFileDef"):
                raise errors.DataLossError(None, None, f"Asset collection holds a "
                                           f"{packed.type_url}, expected an AssetFileDef")
            asset = meta_graph_pb2.AssetFileDef()
            asset.ParseFromString(packed.value)
            assets.append(asset)
    directory = os.path.join(_as_str(export_dir), constants.ASSETS_DIRECTORY)
    return {_prefixed(asset.tensor_info.name, import_scope):
            os.path.join(directory, asset.filename).encode() for asset in assets}


def _init_op(graph, meta_graph_def, import_scope):
    if constants.INIT_OP_SIGNATURE_KEY in meta_graph_def.signature_def:
        name = meta_graph_def.signature_def[constants.INIT_OP_SIGNATURE_KEY].outputs[
            constants.INIT_OP_SIGNATURE_KEY].name
        return graph.as_graph_element(_prefixed(name, import_scope)).op
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key in meta_graph_def.collection_def:
            names = meta_graph_def.collection_def[key].node_list.value
            if len(names) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel init op. Found "
                                   f"{len(names)}: {list(names)}.")
            return graph.as_graph_element(_prefixed(names[0], import_scope))
    return None


class SavedModelLoader:
    """Reads a SavedModel directory and loads one of its MetaGraphDefs into a session."""

    def __init__(self, export_dir):
        self._export_dir = _as_str(export_dir)
        self._variables_path = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY,
                                            constants.VARIABLES_FILENAME)
        self._saved_model = parse_saved_model(self._export_dir)

    @property
    def export_dir(self) -> str:
        return self._export_dir

    @property
    def variables_path(self) -> str:
        return self._variables_path

    @property
    def saved_model(self):
        return self._saved_model

    def get_meta_graph_def_from_tags(self, tags):
        """The MetaGraphDef whose tag set equals `tags`.

        Raises:
            RuntimeError: no MetaGraphDef has exactly these tags (the available sets are named).
        """
        available = []
        for meta in self._saved_model.meta_graphs:
            found = set(meta.meta_info_def.tags)
            available.append(found)
            if found == set(tags):
                return meta
        raise RuntimeError(f"MetaGraphDef associated with tags {str(list(tags)).strip('[]')} "
                           f"could not be found in SavedModel, with available tags "
                           f"'{available}'. To inspect available tag-sets in the SavedModel, "
                           f"please use the SavedModel CLI: `saved_model_cli`.")

    def load_graph(self, graph, tags, import_scope=None, **saver_kwargs):
        """Imports the MetaGraphDef of `tags` into `graph`; returns (saver or None, meta)."""

        meta = self.get_meta_graph_def_from_tags(tags)
        with graph.as_default():
            saver = meta_graph.import_meta_graph(meta, import_scope=import_scope,
                                                 **saver_kwargs)
        return saver, meta

    def restore_variables(self, sess, saver, import_scope=None) -> None:
        """Restores the variables from export_dir/variables (if the model has any)."""

        with sess.graph.as_default():
            if saver is None and not variables._all_saveable_objects(scope=import_scope):
                logging.info("The specified SavedModel has no variables; no checkpoints were "
                             "restored.")
            elif isinstance(saver, Saver):
                saver.restore(sess, self._variables_path)
            else:
                raise ValueError("No tf.train.Saver object was passed to the function "
                                 "`SavedModelLoader.restore_variables`. Since there are "
                                 "variables in the graph, a saver is required.")

    def run_init_ops(self, sess, tags, import_scope=None) -> None:
        """Runs the main op (or legacy init op), feeding asset tensors their file paths."""
        meta = self.get_meta_graph_def_from_tags(tags)
        with sess.graph.as_default():
            assets = get_asset_tensors(self._export_dir, meta, import_scope)
            init_op = _init_op(sess.graph, meta, import_scope)
            if init_op is not None:
                sess.run(fetches=[init_op], feed_dict=assets)

    def load(self, sess, tags, import_scope=None, **saver_kwargs):
        """Loads the MetaGraphDef of `tags` into `sess`: graph, variables, init ops."""
        with sess.graph.as_default():
            saver, meta = self.load_graph(sess.graph, tags, import_scope, **saver_kwargs)
            self.restore_variables(sess, saver, import_scope)
            self.run_init_ops(sess, tags, import_scope)
        return meta


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads a SavedModel's MetaGraphDef into `sess` and returns that MetaGraphDef.

    The graph is imported into `sess.graph` (under `import_scope`), its variables restored
    from export_dir/variables, and its main op (or legacy init op) run with each asset tensor
    fed the path of its copy under export_dir/assets.

    Args:
        sess: the Session to restore into.
        tags: the tag set of the MetaGraphDef to load (e.g. [tag_constants.SERVING]).
        export_dir: the SavedModel directory.
        import_scope: optional name scope prefixed to the imported nodes.
        **saver_kwargs: passed to `import_meta_graph` (e.g. clear_devices).

    Returns:
        The loaded MetaGraphDef (its `signature_def` map names the tensors to run).

    Raises:
        OSError: no saved_model.pb / saved_model.pbtxt in `export_dir`.
        RuntimeError: no MetaGraphDef with exactly these tags.

    Example:
        >>> meta = tf.saved_model.loader.load(sess, ["serve"], "/tmp/model/1")
        >>> sig = meta.signature_def["serving_default"]
        >>> y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: batch})
    """
    return SavedModelLoader(export_dir).load(sess, tags, import_scope, **saver_kwargs)
