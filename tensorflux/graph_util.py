"""`tf.graph_util`: GraphDef surgery (extract, freeze, strip training nodes)."""

from tensorflux.framework.graph_import import import_graph_def
from tensorflux.framework.graph_util import (
    convert_variables_to_constants,
    extract_sub_graph,
    must_run_on_cpu,
    remove_training_nodes,
    tensor_shape_from_node_def_name,
)

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "import_graph_def",
           "must_run_on_cpu", "remove_training_nodes", "tensor_shape_from_node_def_name"]
