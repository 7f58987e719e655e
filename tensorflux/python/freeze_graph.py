"""`tensorflow.python.tools.freeze_graph`: a graph and a checkpoint (or a MetaGraph, or a
SavedModel) made into one GraphDef whose variables are constants, written as a binary file.

A missing checkpoint or missing output node names raise ValueError (TF 1.x printed these and
returned -1; later releases raise, which a caller cannot miss).
"""

from __future__ import annotations

import argparse
import sys

from google.protobuf import text_format

from tensorflux.framework import graph_util
from tensorflux.framework.graph import Graph
from tensorflux.framework.graph_import import import_graph_def
from tensorflux.platform import gfile
from tensorflux.protos import graph_pb2, meta_graph_pb2, saver_pb2
from tensorflux.runtime.session import Session
from tensorflux.saved_model import loader, tag_constants
from tensorflux.train import checkpoint_utils, meta_graph
from tensorflux.train.checkpoint_utils import NewCheckpointReader
from tensorflux.train.saver import Saver

__all__ = ["freeze_graph", "freeze_graph_with_def_protos", "main", "run_main"]


def _names(text) -> list:
    return [name for name in (text or "").replace(" ", "").split(",") if name]


def _read_proto(path, message, binary):
    if not gfile.Exists(path):
        raise OSError(f"Input file '{path}' does not exist!")
    mode = "rb" if binary else "r"
    with gfile.GFile(path, mode) as handle:
        data = handle.read()
    if binary:
        message.ParseFromString(data)
    else:
        text_format.Merge(data, message)
    return message


def _restore_from_checkpoint(sess, graph, input_saver_def, input_checkpoint):
    if input_saver_def is not None:
        Saver(saver_def=input_saver_def).restore(sess, input_checkpoint)
        return
    reader = NewCheckpointReader(input_checkpoint)
    var_list = {}
    for key in reader.get_variable_to_shape_map():
        try:
            tensor = graph.get_tensor_by_name(key + ":0")
        except KeyError:
            continue  # saved state the graph does not use (optimizer slots, ...)
        var_list[key] = tensor
    if not var_list:
        raise ValueError(f"No variable of checkpoint '{input_checkpoint}' is in the graph.")
    Saver(var_list=var_list).restore(sess, input_checkpoint)


def freeze_graph_with_def_protos(input_graph_def, input_saver_def, input_checkpoint,
                                 output_node_names, restore_op_name, filename_tensor_name,
                                 output_graph, clear_devices, initializer_nodes,
                                 variable_names_whitelist="", variable_names_blacklist="",
                                 input_meta_graph_def=None, input_saved_model_dir=None,
                                 saved_model_tags=None,
                                 checkpoint_version=saver_pb2.SaverDef.V2):
    """Freezes `input_graph_def` with the values of `input_checkpoint` (or those a MetaGraph
    or SavedModel restores) and writes the result to `output_graph` (when given).

    `restore_op_name`, `filename_tensor_name` and `checkpoint_version` are accepted for TF 1.x
    compatibility (the restore goes through a Saver, as TF's does).

    Returns:
        The frozen `GraphDef`.

    Raises:
        ValueError: the checkpoint does not exist, no output node is named, or no checkpoint
            variable is in the graph.
    """
    del restore_op_name, filename_tensor_name, checkpoint_version
    if not input_saved_model_dir and not checkpoint_utils.checkpoint_exists(input_checkpoint):
        raise ValueError(f"Input checkpoint '{input_checkpoint}' doesn't exist!")
    if not output_node_names:
        raise ValueError("You need to supply the name of a node to --output_node_names.")
    if clear_devices:
        for graph_def in filter(None, (input_graph_def, getattr(
                input_meta_graph_def, "graph_def", None))):
            for node in graph_def.node:
                node.device = ""
    graph = Graph()
    with graph.as_default(), Session(graph=graph) as sess:
        if input_meta_graph_def is not None:
            restorer = meta_graph.import_meta_graph(input_meta_graph_def,
                                                    clear_devices=clear_devices)
            restorer.restore(sess, input_checkpoint)
            if initializer_nodes:
                sess.run(_names(initializer_nodes))
        elif input_saved_model_dir:
            tags = _names(saved_model_tags) if isinstance(saved_model_tags, str) else (
                list(saved_model_tags or [tag_constants.SERVING]))
            loader.load(sess, tags, input_saved_model_dir)
        else:
            import_graph_def(input_graph_def, name="")
            _restore_from_checkpoint(sess, graph, input_saver_def, input_checkpoint)
            if initializer_nodes:
                sess.run(_names(initializer_nodes))
        source = graph.as_graph_def() if input_graph_def is None else input_graph_def
        output_graph_def = graph_util.convert_variables_to_constants(
            sess, source, _names(output_node_names),
            variable_names_whitelist=_names(variable_names_whitelist) or None,
            variable_names_blacklist=_names(variable_names_blacklist) or None)
    if output_graph:
        with gfile.GFile(output_graph, "wb") as handle:
            handle.write(output_graph_def.SerializeToString())
    return output_graph_def


def freeze_graph(input_graph, input_saver, input_binary, input_checkpoint, output_node_names,
                 restore_op_name, filename_tensor_name, output_graph, clear_devices,
                 initializer_nodes, variable_names_whitelist="", variable_names_blacklist="",
                 input_meta_graph=None, input_saved_model_dir=None,
                 saved_model_tags=tag_constants.SERVING,
                 checkpoint_version=saver_pb2.SaverDef.V2):
    """`freeze_graph_with_def_protos` on files: the GraphDef `input_graph` (text, or binary
    with `input_binary`), an optional SaverDef file `input_saver`, an optional MetaGraphDef
    file `input_meta_graph`, or a SavedModel directory `input_saved_model_dir`."""
    graph_def = (_read_proto(input_graph, graph_pb2.GraphDef(), input_binary)
                 if input_graph else None)
    saver_def = (_read_proto(input_saver, saver_pb2.SaverDef(), input_binary)
                 if input_saver else None)
    meta_def = (_read_proto(input_meta_graph, meta_graph_pb2.MetaGraphDef(), input_binary)
                if input_meta_graph else None)
    return freeze_graph_with_def_protos(
        graph_def, saver_def, input_checkpoint, output_node_names, restore_op_name,
        filename_tensor_name, output_graph, clear_devices, initializer_nodes,
        variable_names_whitelist, variable_names_blacklist, meta_def, input_saved_model_dir,
        saved_model_tags, checkpoint_version)


def main(argv=None) -> int:
    """The `freeze_graph` command line (`python -m tensorflux.python.freeze_graph`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("input_graph", "input_saver", "input_checkpoint", "output_node_names",
                 "output_graph", "initializer_nodes", "variable_names_whitelist",
                 "variable_names_blacklist", "input_meta_graph", "input_saved_model_dir"):
        parser.add_argument(f"--{flag}", default="")
    parser.add_argument("--restore_op_name", default="save/restore_all")
    parser.add_argument("--filename_tensor_name", default="save/Const:0")
    parser.add_argument("--saved_model_tags", default=tag_constants.SERVING)
    for flag in ("input_binary", "clear_devices"):
        parser.add_argument(f"--{flag}", nargs="?", const=True, default=flag == "clear_devices",
                            type=lambda text: text.lower() in ("1", "true", "yes"))
    args = parser.parse_args(argv)
    result = freeze_graph(args.input_graph, args.input_saver, args.input_binary,
                          args.input_checkpoint, args.output_node_names, args.restore_op_name,
                          args.filename_tensor_name, args.output_graph, args.clear_devices,
                          args.initializer_nodes, args.variable_names_whitelist,
                          args.variable_names_blacklist, args.input_meta_graph or None,
                          args.input_saved_model_dir or None, args.saved_model_tags)
    return 0 if result is not None else 1


def run_main() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run_main()
