"""Adding an op to a graph from its OpDef: bind inputs, infer type attrs, check, infer shapes.

Kernels receive list inputs (`N * T`, type lists) flattened into their positional arguments, in
signature order. Shape functions receive one TensorShape per single input and a list of
TensorShapes per list input; inputs named in `value_inputs` arrive as constant ndarrays (or
None when not constant), those in `static_inputs` as `StaticInput`s.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import OpDef, coerce_attr
from tensorflux.framework.static_values import StaticInput
from tensorflux.framework.tensor import Tensor, user_location
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import RankError, TensorShape, as_shape

_MISSING = object()


def _first_dtype(values):
    for value in values:
        if isinstance(value, Tensor):
            return value.dtype.base_dtype
        dtype = getattr(value, "dtype", None)
        if dtype is not None and hasattr(value, "_as_graph_element"):
            return dtypes.as_dtype(dtype).base_dtype
    return None


def _convert(op_def, arg, value, dtype, as_ref, default_dtype=None):
    # Python values become constants named after the input, inside the op's name scope
    # ("Sum/reduction_indices"), as TF's op_def_library names them.
    try:
        if dtype is None and default_dtype is not None and not isinstance(value, Tensor):
            return convert_to_tensor(value, preferred_dtype=default_dtype, as_ref=as_ref,
                                     name=arg.name)
        return convert_to_tensor(value, dtype=dtype, as_ref=as_ref, name=arg.name)
    except (TypeError, ValueError) as err:
        raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op: {err}") from None


def _check_type(op_def, arg, tensor, expected):
    if expected is not None and tensor.dtype.base_dtype != expected:
        raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type "
                        f"{tensor.dtype.base_dtype.name} that does not match expected type "
                        f"{expected.name}.")
    if arg.is_ref and not tensor.dtype.is_ref_dtype:
        raise TypeError(f"'{op_def.name}' Op requires that input '{arg.name}' be a mutable "
                        "tensor (e.g. a tf.Variable)")


def _bind_inputs(op_def: OpDef, args, kwargs):
    n_inputs = len(op_def.inputs)
    if len(args) > n_inputs:
        raise TypeError(f"{op_def.name} takes {n_inputs} inputs, got {len(args)}")
    values = list(args) + [_MISSING] * (n_inputs - len(args))
    given_attrs = {}
    index = {arg.name: i for i, arg in enumerate(op_def.inputs)}
    for key, value in kwargs.items():
        i = index.get(key)
        if i is not None:
            values[i] = value
        elif key in op_def.attrs or key.startswith("_"):
            given_attrs[key] = value
        else:
            raise TypeError(f"{op_def.name} got an unexpected keyword argument '{key}' "
                            f"(inputs: {', '.join(index) or 'none'}; attrs: "
                            f"{', '.join(op_def.attrs) or 'none'})")
    for arg, value in zip(op_def.inputs, values):
        if value is _MISSING:
            raise TypeError(f"{op_def.name} is missing required input '{arg.name}'")
    return values, given_attrs


def create_op_from_def(op_def: OpDef, args, kwargs, name):
    """Creates the op in the default graph; returns its output(s) or the Operation."""
    values, given = _bind_inputs(op_def, args, kwargs)
    graph = graph_mod.get_default_graph()
    bound: dict = {}
    for key, value in given.items():
        spec = op_def.attrs.get(key)
        if spec is not None and spec.kind == "type" and value is not None:
            bound[key] = coerce_attr(spec, value)
    for arg, value in zip(op_def.inputs, values):
        if arg.type_attr and arg.type_attr not in bound:
            found = _first_dtype(value if arg.number_attr else [value])
            if found is not None:
                bound[arg.type_attr] = found

    if name and name.endswith("/"):
        op_name = name[:-1]  # an absolute name from a name scope, already unique
        graph._names_in_use.setdefault(op_name.lower(), 1)
    else:
        op_name = graph.unique_name(name if name else op_def.name)
    with graph.name_scope(op_name + "/"):
        flat_inputs, grouped = _convert_inputs(op_def, values, bound, given)
    return _finish_op(op_def, graph, op_name, flat_inputs, grouped, bound, given)


def _convert_inputs(op_def, values, bound, given):
    flat_inputs: list[Tensor] = []
    grouped: list = []
    for arg, value in zip(op_def.inputs, values):
        if arg.number_attr:
            if isinstance(value, Tensor) or not hasattr(value, "__len__"):
                raise TypeError(f"Expected list for '{arg.name}' argument to '{op_def.name}' "
                                f"Op, not {value!r}.")
            items = list(value)
            count = bound.setdefault(arg.number_attr, len(items))
            if count != len(items):
                raise ValueError(f"List argument '{arg.name}' to '{op_def.name}' Op with "
                                 f"length {len(items)} must match length {count} of argument "
                                 f"'{arg.number_attr}'.")
            expected = bound.get(arg.type_attr) if arg.type_attr else arg.fixed_type
            tensors = []
            for item in items:
                tensor = _convert(op_def, arg, item, expected, arg.is_ref,
                                  _default_type(op_def, arg))
                if expected is None:
                    expected = tensor.dtype.base_dtype
                    bound[arg.type_attr] = expected
                _check_type(op_def, arg, tensor, expected)
                tensors.append(tensor)
            grouped.append(tensors)
            flat_inputs.extend(tensors)
        elif arg.type_list_attr:
            types = bound.get(arg.type_list_attr) or given.get(arg.type_list_attr)
            items = list(value)
            if types is not None and len(types) != len(items):
                raise ValueError(f"'{op_def.name}' input '{arg.name}' has {len(items)} values "
                                 f"but attr '{arg.type_list_attr}' lists {len(types)} types.")
            tensors = [_convert(op_def, arg, item, dtypes.as_dtype(types[i]) if types else None,
                                arg.is_ref) for i, item in enumerate(items)]
            bound[arg.type_list_attr] = tuple(t.dtype.base_dtype for t in tensors)
            grouped.append(tensors)
            flat_inputs.extend(tensors)
        else:
            expected = bound.get(arg.type_attr) if arg.type_attr else arg.fixed_type
            tensor = _convert(op_def, arg, value, expected, arg.is_ref,
                              _default_type(op_def, arg))
            if arg.type_attr and expected is None:
                expected = tensor.dtype.base_dtype
                bound[arg.type_attr] = expected
            _check_type(op_def, arg, tensor, expected)
            grouped.append(tensor)
            flat_inputs.append(tensor)
    return flat_inputs, grouped


def _finish_op(op_def, graph, op_name, flat_inputs, grouped, bound, given):
    if hasattr(graph, "_capture_tensor"):  # a tf.data function graph copies constants in
        flat_inputs = [_captured(graph, t) for t in flat_inputs]
        grouped = [[_captured(graph, t) for t in g] if isinstance(g, list) else
                   _captured(graph, g) for g in grouped]
    for tensor in flat_inputs:
        if tensor.graph is not graph:
            raise ValueError(f"Tensor {tensor.name} must be from the same graph as the "
                             f"'{op_def.name}' op being created.")

    if "container" in op_def.attrs and op_def.is_stateful and not given.get("container") \
            and graph._container:
        given["container"] = graph._container  # tf.container() reaches every stateful op
    try:
        attrs = _resolve_attrs(op_def, given, bound)
    except (TypeError, ValueError) as err:
        if op_def.name in str(err):
            raise
        raise type(err)(f"{op_def.name} op: {err}") from None
    for key, value in graph._attr_scope.items():
        attrs.setdefault(key, value)
    if op_def.name in graph._gradient_override_map:
        attrs["_gradient_op_type"] = graph._gradient_override_map[op_def.name]

    output_types = _output_types(op_def, attrs)
    shapes = _infer_shapes(op_def, op_name, grouped, attrs, len(output_types))
    op = graph_mod.new_operation(graph, op_def, op_name, flat_inputs, output_types, attrs,
                                 user_location())
    for tensor, shape in zip(op._outputs, shapes):
        tensor._shape = shape
    return _package_outputs(op_def, op, attrs)


def _captured(graph, tensor):
    return tensor if tensor.graph is graph else graph._capture_tensor(tensor)


def _default_type(op_def: OpDef, arg):
    if arg.type_attr:
        spec = op_def.attrs[arg.type_attr]
        if spec.has_default:
            return spec.default
    return None


def _check_inferred_type(op_def: OpDef, attr_name: str, spec, dtype) -> None:
    """A type attr taken from an input's dtype: TF names the input whose dtype is refused."""
    if spec.allowed is None or dtype is None:
        return
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype in spec.allowed:
        return
    param = next((a.name for a in op_def.inputs if a.type_attr == attr_name), attr_name)
    names = ", ".join(d.name for d in spec.allowed)
    raise TypeError(f"Value passed to parameter '{param}' has DataType {dtype.name} not in "
                    f"list of allowed values: {names}")


def _resolve_attrs(op_def: OpDef, given: dict, bound: dict) -> dict:
    attrs = {}
    for attr_name, spec in op_def.attrs.items():
        if attr_name in bound:
            value = bound[attr_name]
            if spec.kind == "type" and attr_name not in given:
                _check_inferred_type(op_def, attr_name, spec, value)
            attrs[attr_name] = coerce_attr(spec, value) if spec.kind != "list(type)" else value
        elif attr_name in given:
            attrs[attr_name] = coerce_attr(spec, given[attr_name])
        elif spec.has_default:
            attrs[attr_name] = spec.default
        else:
            raise TypeError(f"'{op_def.name}' Op is missing required attr '{attr_name}'")
        if spec.minimum is not None:
            value = attrs[attr_name]
            size = len(value) if isinstance(value, tuple) else value
            if size < spec.minimum:
                raise ValueError(f"Attr '{attr_name}' of '{op_def.name}' Op passed {size} "
                                 f"less than minimum {spec.minimum}.")
    for key, value in given.items():
        if key.startswith("_"):
            attrs[key] = value
    return attrs


def _output_types(op_def: OpDef, attrs: dict) -> list:
    types = []
    for arg in op_def.outputs:
        if arg.type_list_attr:
            arg_types = [dtypes.as_dtype(t) for t in attrs[arg.type_list_attr]]
        else:
            one = attrs[arg.type_attr] if arg.type_attr else arg.fixed_type
            arg_types = [one] * (attrs[arg.number_attr] if arg.number_attr else 1)
        if arg.is_ref:
            arg_types = [t._as_ref for t in arg_types]
        types.extend(arg_types)
    return types


def _infer_shapes(op_def: OpDef, op_name: str, grouped: list, attrs: dict, n_outputs: int):
    rule = op_def.shape_rule
    if rule is None:
        return [TensorShape(None)] * n_outputs
    shape_args = []
    for i, item in enumerate(grouped):
        if i in op_def.value_inputs:
            if isinstance(item, list):
                shape_args.append([constant_value(t) for t in item])
            else:
                shape_args.append(constant_value(item))
        elif i in op_def.static_inputs:
            shape_args.append([StaticInput(t) for t in item] if isinstance(item, list)
                              else StaticInput(item))
        elif isinstance(item, list):
            shape_args.append([t.shape for t in item])
        else:
            shape_args.append(item.shape)
    kwargs = {k: attrs[k] for k in op_def.shape_attr_names}
    try:
        result = rule(*shape_args, **kwargs)
    except RankError as err:
        raise ValueError(f"{op_def.name} '{op_name}': {err.inference_message()}") from None
    except (ValueError, TypeError) as err:
        raise type(err)(f"{op_def.name} '{op_name}': {err}") from None
    if n_outputs == 1 and not isinstance(result, (list, tuple)):
        return [as_shape(result)]
    flat = []
    for arg, shape in zip(op_def.outputs, result):
        if arg.is_list:
            flat.extend(as_shape(s) for s in shape)
        else:
            flat.append(as_shape(shape))
    if len(flat) != n_outputs:
        raise ValueError(f"{op_def.name} '{op_name}': shape function gave {len(flat)} shapes "
                         f"for {n_outputs} outputs")
    return flat


def _package_outputs(op_def: OpDef, op, attrs):
    outputs = op._outputs
    if not op_def.outputs:
        return op
    if len(op_def.outputs) == 1:
        return list(outputs) if op_def.outputs[0].is_list else outputs[0]
    grouped = []
    position = 0
    for arg in op_def.outputs:
        if arg.is_list:
            if arg.type_list_attr:
                count = len(attrs[arg.type_list_attr])
            else:
                count = attrs[arg.number_attr]
            grouped.append(list(outputs[position:position + count]))
            position += count
        else:
            grouped.append(outputs[position])
            position += 1
    return op_def.output_tuple_type()(*grouped)
