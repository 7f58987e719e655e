"""`tf.import_graph_def`: NodeDefs of a `GraphDef` become Operations of the default graph.

Each NodeDef is built through the op registry: attrs are converted with the kinds its op
declares (defaults filled in, type attrs missing from the NodeDef inferred from the inputs),
inputs `"name"`, `"name:i"` and `"^name"` are resolved (or replaced through `input_map`),
dtypes are checked against the signature, and output shapes come from the shape functions
(merged with `_output_shapes` when the NodeDef has them). Names get the prefix `name`
("import" by default, made unique as a name scope); device fields are kept (under the
caller's device scope, the NodeDef's device wins); `_class` colocation attrs follow the
renaming; nodes with no inputs take the caller's control dependencies.

While loops make the graph cyclic (`NextIteration -> Merge`): a Merge is created as soon as
one of its inputs exists, with that input standing in for the others, which are patched in
(`Operation._update_input`) once their producers exist; shapes are then refined until the
loop's shapes are stable. Errors name the offending node; as in TF they are ValueErrors,
except an unregistered op (NotFoundError); an attr the op does not declare is ignored with a
warning (the graph may come from a newer producer).
"""

from __future__ import annotations

import heapq
import logging

from tensorflux.framework import dtypes, errors, function
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph_validation import validate_graph_def
from tensorflux.framework.op_builder import _infer_shapes, _output_types
from tensorflux.framework.tensor import Operation, Tensor, user_location
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.protos import graph_pb2

# TF1's logger name, which `tf.logging` configures (framework sits below platform).
_logger = logging.getLogger("tensorflow")

__all__ = ["import_graph_def"]

_MERGE_OPS = frozenset({"Merge", "RefMerge"})


def _split_input(text: str):
    """'^a' -> ('a', None); 'a:2' -> ('a', 2); 'a' -> ('a', 0)."""
    if text.startswith("^"):
        return text[1:], None
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return text, 0


def _tensor_key(text: str) -> str:
    """Canonical input_map key: 'a' -> 'a:0', '^a' stays."""
    if text.startswith("^"):
        return text
    name, index = _split_input(text)
    return f"{name}:{index}"


def _check_arguments(graph_def, input_map, return_elements):
    if not isinstance(graph_def, graph_pb2.GraphDef):
        if hasattr(graph_def, "SerializeToString") and hasattr(graph_def, "node"):
            graph_def = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
        else:
            raise TypeError(f"Argument `graph_def` must be a GraphDef proto, got "
                            f"{type(graph_def)}.")
    if input_map is not None and not isinstance(input_map, dict):
        raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
    if return_elements is not None:
        if isinstance(return_elements, (str, bytes)) or not all(
                isinstance(e, (str, bytes)) for e in return_elements):
            raise TypeError("return_elements must be a list of strings.")
    return graph_def


def _convert_input_map(graph, input_map, name):
    result = {}
    for key, value in (input_map or {}).items():
        key = key.decode() if isinstance(key, bytes) else key
        if not isinstance(key, str):
            raise TypeError(f"input_map keys must be tensor names (strings), got {key!r}.")
        if key.startswith("^"):
            op = value.op if isinstance(value, Tensor) else value
            if not isinstance(op, Operation):
                raise TypeError(f"input_map[{key!r}] must be an Operation, got {value!r}.")
            result[key] = op
            continue
        if not isinstance(value, Tensor):
            if name == "":
                raise ValueError("tf.import_graph_def() requires a non-empty `name` if "
                                 "`input_map` contains non-Tensor values. Try calling "
                                 "tf.convert_to_tensor() on `input_map` values first.")
            with graph.name_scope("_inputs"):
                value = convert_to_tensor(value)
        if value.graph is not graph:
            raise ValueError(f"input_map[{key!r}] = {value.name} is not an element of the "
                             "graph being imported into.")
        result[_tensor_key(key)] = value
    return result


class _Importer:
    def __init__(self, graph, graph_def, input_map, prefix, producer_ops, checked):
        self.graph = graph
        self.checked = checked  # name -> (OpDef, decoded attrs), from validate_graph_def
        self.graph_def = graph_def
        self.input_map = input_map
        self.prefix = prefix
        self.producer_ops = producer_ops
        self.node_defs = {}
        for node in graph_def.node:
            if node.name in self.node_defs:
                raise ValueError(f"Node '{node.name}' is not unique in the GraphDef: two "
                                 "nodes have that name.")
            self.node_defs[node.name] = node
        self.names: dict = {}
        self.ops: dict = {}
        self.used_keys: set = set()
        self.patches: list = []
        self.location = user_location()

    # -- order -----------------------------------------------------------------------------

    def _dependencies(self, node):
        data, control = [], []
        for text in node.input:
            name, index = _split_input(text)
            key = f"^{name}" if index is None else f"{name}:{index}"
            if key in self.input_map:
                continue
            if name not in self.node_defs:
                raise ValueError(f"Node '{node.name}': Unknown input node '{text}'.")
            (control if index is None else data).append(name)
        return data, control

    def order(self) -> list:
        """Graph-def nodes with producers first; a Merge waits for one data input only."""
        names = list(self.node_defs)
        position = {name: i for i, name in enumerate(names)}
        pending: dict = {}  # name -> [count, control deps left, data deps (one is enough)]
        consumers: dict = {}
        for name, node in self.node_defs.items():
            data, control = self._dependencies(node)
            data, control = set(data), set(control)
            if node.op in _MERGE_OPS and data:
                pending[name] = [len(control) + 1, control, data]
            else:
                pending[name] = [len(data | control), data | control, set()]
            for dep in data | control:
                consumers.setdefault(dep, []).append(name)
        ready = [position[n] for n, entry in pending.items() if entry[0] == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            name = names[heapq.heappop(ready)]
            order.append(name)
            for consumer in consumers.get(name, ()):
                entry = pending[consumer]
                if entry[0] == 0:
                    continue
                if name in entry[1]:
                    entry[1].discard(name)
                    entry[0] -= 1
                if name in entry[2]:
                    entry[2] = set()
                    entry[0] -= 1
                if entry[0] == 0:
                    heapq.heappush(ready, position[consumer])
        if len(order) != len(names):
            done = set(order)
            stuck = [n for n in names if n not in done][:5]
            raise ValueError(f"GraphDef has a cycle that is not a while loop (a cycle must pass "
                             f"through a Merge), through nodes {stuck}.")
        return order

    # -- names -----------------------------------------------------------------------------

    def assign_names(self) -> None:
        for name in self.node_defs:
            self.names[name] = self.graph.unique_name(name)

    # -- ops -------------------------------------------------------------------------------

    def _attrs(self, node, op_def) -> dict:
        checked = self.checked[node.name][1]
        attrs = {}
        for key, proto in node.attr.items():
            spec = op_def.attrs.get(key)
            if spec is None:
                if key.startswith("_"):
                    value = checked[key]
                    if key == "_class":
                        value = self._remap_colocation(node, value)
                    attrs[key] = value
                    continue
                if not self._producer_default(node.op, key, proto):
                    _logger.warning(
                        "Node '%s': NodeDef mentions attr '%s' which is not in the op "
                        "definition of %s (attrs: %s); it is ignored (the graph may come "
                        "from a newer producer).", node.name, key, node.op,
                        ", ".join(op_def.attrs) or "none")
                continue
            attrs[key] = checked[key]
            if spec.kind in ("func", "list(func)"):
                attrs[key] = _resolve_functions(self.graph, node, key, attrs[key])
        return attrs

    def _producer_default(self, op_type, key, proto) -> bool:
        producer = self.producer_ops.get(op_type)
        if producer is None:
            return False
        for attr in producer.attr:
            if attr.name == key and attr.HasField("default_value"):
                return attr.default_value == proto
        return False

    def _remap_colocation(self, node, value):
        groups = []
        for entry in value:
            if entry.startswith("loc:@"):
                target = entry[5:]
                if target in self.names:
                    entry = f"loc:@{self.names[target]}"
                elif target not in self.graph._ops_by_name:
                    raise ValueError(f"Node '{node.name}': specified colocation to an op "
                                     f"'{target}' that does not exist during import.")
            groups.append(entry)
        return tuple(groups)

    def _fill_attrs(self, node, op_def, attrs, inputs) -> None:
        flat = 0
        for arg in op_def.inputs:
            if arg.number_attr and arg.number_attr not in attrs:
                attrs[arg.number_attr] = sum(1 for t in node.input if not t.startswith("^")) \
                    - flat
            count = _arg_count(arg, attrs)
            if arg.type_attr and arg.type_attr not in attrs and count and flat < len(inputs):
                attrs[arg.type_attr] = inputs[flat].dtype.base_dtype
            if arg.type_list_attr and arg.type_list_attr not in attrs:
                attrs[arg.type_list_attr] = tuple(t.dtype.base_dtype for t in inputs[flat:])
                count = len(attrs[arg.type_list_attr])
            flat += count or 0
        for key, spec in op_def.attrs.items():
            if key in attrs:
                continue
            if not spec.has_default:
                raise ValueError(f"Node '{node.name}' ({node.op}): NodeDef is missing attr "
                                 f"'{key}' (which has no default).")
            attrs[key] = spec.default

    def _resolve(self, node, text):
        name, index = _split_input(text)
        key = f"^{name}" if index is None else f"{name}:{index}"
        mapped = self.input_map.get(key)
        if mapped is not None:
            self.used_keys.add(key)
            return mapped, True
        op = self.ops.get(name)
        if op is None:
            return None, False
        if index is None:
            return op, True
        if index >= len(op._outputs):
            raise ValueError(f"Node '{node.name}': input '{text}' names output {index} of "
                             f"'{name}', which has {len(op._outputs)} outputs.")
        return op._outputs[index], True

    def create(self, name) -> None:
        node = self.node_defs[name]
        op_def = self.checked[name][0]
        attrs = self._attrs(node, op_def)
        data, controls, missing = [], [], []
        for text in node.input:
            value, found = self._resolve(node, text)
            if text.startswith("^"):
                if value not in controls:
                    controls.append(value)
            elif found:
                data.append(value)
            else:
                missing.append((len(data), text))
                data.append(None)
        if missing:
            stand_in = next(t for t in data if t is not None)
            data = [stand_in if t is None else t for t in data]
            self.patches.extend((name, k, text) for k, text in missing)
        self._fill_attrs(node, op_def, attrs, data)
        expected = _expected_inputs(op_def, attrs)
        if len(expected) != len(data):
            raise ValueError(f"Node '{node.name}' ({node.op}): NodeDef has {len(data)} data "
                             f"inputs but the op's signature expects {len(expected)}.")
        for k, (tensor, (dtype, is_ref)) in enumerate(zip(data, expected)):
            _check_input(node, k, tensor, dtype, is_ref, self.names[name])
        if not data and not controls:
            controls = list(self.graph._current_control_dependencies())
        output_types = _output_types(op_def, attrs)
        op = Operation(self.graph, op_def, self.names[name], data, output_types, attrs,
                       controls, "", self.location)
        self._set_device(op, node.device, attrs)
        self.graph._add_op(op)
        self.ops[name] = op
        self._set_shapes(op, node)

    def _set_device(self, op, device, attrs) -> None:
        if not device and any(c.startswith("loc:@") for c in attrs.get("_class", ())):
            op._device = ""  # the colocated op's device, set once every op exists
            return
        if device:
            try:
                with self.graph.device(device):
                    self.graph._apply_device(op)
            except ValueError as err:
                raise ValueError(f"Node '{op.name}': malformed device '{device}': {err}") \
                    from None
        else:
            self.graph._apply_device(op)

    def _set_shapes(self, op, node=None) -> bool:
        """(Re)computes op's output shapes; returns True when one of them changed."""
        op_def = op._op_def
        grouped = _group_inputs(op_def, op._attrs, list(op._inputs))
        try:
            shapes = _infer_shapes(op_def, op._name, grouped, op._attrs, len(op._outputs))
        except (TypeError, ValueError) as err:
            raise ValueError(f"Node '{op.name}' ({op.type}): {err}") from None
        recorded = op._attrs.get("_output_shapes")
        changed = False
        for k, (tensor, shape) in enumerate(zip(op._outputs, shapes)):
            if recorded is not None and k < len(recorded):
                given = TensorShape(recorded[k])
                if not shape.is_compatible_with(given):
                    raise ValueError(f"Node '{op.name}' ({op.type}): output {k} has shape "
                                     f"{shape} by its shape function but _output_shapes says "
                                     f"{given}.")
                shape = shape.merge_with(given)
            if not _same_shape(tensor._shape, shape):
                changed = True
            tensor._shape = shape
        return changed

    def patch_back_edges(self) -> None:
        for name, k, text in self.patches:
            op = self.ops[name]
            tensor, found = self._resolve(self.node_defs[name], text)
            if not found:
                raise ValueError(f"Node '{name}': input '{text}' was never created.")
            dtype, is_ref = _expected_inputs(op._op_def, op._attrs)[k]
            _check_input(self.node_defs[name], k, tensor, dtype, is_ref, op.name)
            op._update_input(k, tensor)
        if not self.patches:
            return
        created = [self.ops[name] for name in self.ops]
        for _ in range(8):
            if not any([self._set_shapes(op) for op in created]):
                break


def _resolve_functions(graph, node, key, value):

    try:
        if isinstance(value, tuple):
            return tuple(function.resolve(graph, v) for v in value)
        return function.resolve(graph, value)
    except ValueError as err:
        raise ValueError(f"Node '{node.name}' ({node.op}): attr '{key}': {err}") from None


def _same_shape(a: TensorShape, b: TensorShape) -> bool:
    if a.ndims is None or b.ndims is None:
        return a.ndims == b.ndims
    return a.as_list() == b.as_list()


def _arg_count(arg, attrs):
    if arg.number_attr:
        return attrs.get(arg.number_attr)
    if arg.type_list_attr:
        types = attrs.get(arg.type_list_attr)
        return None if types is None else len(types)
    return 1


def _expected_inputs(op_def, attrs) -> list:
    expected = []
    for arg in op_def.inputs:
        if arg.type_list_attr:
            types = [dtypes.as_dtype(t) for t in attrs[arg.type_list_attr]]
        else:
            one = attrs[arg.type_attr] if arg.type_attr else arg.fixed_type
            types = [one] * (attrs[arg.number_attr] if arg.number_attr else 1)
        expected.extend((t, arg.is_ref) for t in types)
    return expected


def _check_input(node, k, tensor, dtype, is_ref, op_name) -> None:
    if tensor.dtype.base_dtype != dtypes.as_dtype(dtype).base_dtype or (
            is_ref and not tensor.dtype.is_ref_dtype):
        wanted = dtypes.as_dtype(dtype)
        wanted = wanted._as_ref if is_ref else wanted
        raise ValueError(f"Input {k} of node {op_name} was passed {tensor.dtype.name} from "
                         f"{tensor.name} incompatible with expected {wanted.name}.")


def _group_inputs(op_def, attrs, inputs) -> list:
    grouped = []
    position = 0
    for arg in op_def.inputs:
        count = _arg_count(arg, attrs)
        if arg.is_list:
            grouped.append(inputs[position:position + count])
            position += count
        else:
            grouped.append(inputs[position])
            position += 1
    return grouped


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """Imports a `GraphDef` into the default graph (TF1 `tf.import_graph_def`).

    Args:
        graph_def: a `tf.GraphDef`.
        input_map: {tensor name in graph_def ("x:0", "x", or "^x" for a control input):
            Tensor (or Operation for "^x") of the default graph} replacing those inputs.
        return_elements: names in graph_def to return: "op" gives the Operation, "op:0" the
            Tensor.
        name: prefix of the imported names ("import" when None; "" for none).
        op_dict: ignored (TF1 compatibility).
        producer_op_list: an `OpList` of the producer; attrs our ops lack are dropped when
            they hold the producer's default value.

    Returns:
        The list of `return_elements` (Operations and Tensors), or None.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: an invalid GraphDef (unknown input, wrong input count or type, bad
            attr value, cycle), naming the node; or unused input_map keys.
        NotFoundError: a node's op is not registered.

    Example:
        >>> (y,) = tf.import_graph_def(graph_def, input_map={"x:0": x},
        ...                            return_elements=["y:0"])
    """
    del op_dict
    graph_def = _check_arguments(graph_def, input_map, return_elements)
    try:
        checked = validate_graph_def(graph_def)
    except errors.InvalidArgumentError as err:
        raise ValueError(err.message) from None
    graph = graph_mod.get_default_graph()
    if graph_def.library.function:

        function.import_library(graph, graph_def.library)
    producer_ops = {op.name: op for op in producer_op_list.op} if producer_op_list else {}
    with graph.name_scope("import" if name is None else name) as scope:
        mapped = _convert_input_map(graph, input_map, name)
        importer = _Importer(graph, graph_def, mapped, scope[:-1] if scope else "",
                             producer_ops, checked)
        order = importer.order()
        importer.assign_names()
    with graph._lock:
        for node_name in order:
            importer.create(node_name)
        importer.patch_back_edges()
        _colocate_devices(importer)
    unused = sorted(set(mapped) - importer.used_keys)
    if unused:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: "
                         f"[{', '.join(unused)}]")
    if return_elements is None:
        return None
    results = []
    for element in return_elements:
        element = element.decode() if isinstance(element, bytes) else element
        op_name, _, index = element.partition(":")
        op = importer.ops.get(op_name)
        kind = "tensor" if index else "node"
        if op is None or (index and (not index.isdigit() or int(index) >= len(op._outputs))):
            raise ValueError(f"Requested return {kind} '{element}' not found in graph def")
        if not index:
            results.append(op)
            continue
        results.append(op._outputs[int(index)])
    return results


def _colocate_devices(importer) -> None:
    """An op colocated by `_class` takes the device of the first colocated op that has one."""
    graph = importer.graph
    for op in importer.ops.values():
        groups = [c[5:] for c in op._attrs.get("_class", ()) if c.startswith("loc:@")]
        for target in groups:
            other = graph._ops_by_name.get(target)
            if other is not None and other._device and not op._device:
                op._device = other._device
                break
