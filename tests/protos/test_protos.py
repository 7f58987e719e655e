"""Wire facts of tensorflux.protos: bytes must match what TensorFlow writes and reads."""

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format
from google.protobuf.unknown_fields import UnknownFieldSet

from tensorflux.protos import (
    attr_value_pb2,
    checkpoint_state_pb2,
    config_pb2,
    event_pb2,
    example_pb2,
    feature_pb2,
    graph_pb2,
    master_service_pb2,
    master_service_pb2_grpc,
    node_def_pb2,
    saver_pb2,
    step_stats_pb2,
    summary_pb2,
    tensor_bundle_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    types_pb2,
    worker_pb2,
    worker_service_pb2,
    worker_service_pb2_grpc,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _tfrecords(data: bytes) -> list[bytes]:
    """Splits TFRecord framing (u64 length, u32 crc, data, u32 crc); crcs are not checked."""
    records, offset = [], 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        offset += 12
        records.append(data[offset : offset + length])
        offset += length + 4
    assert offset == len(data)
    return records


# ---- hand-computed encodings ----------------------------------------------------------


def test_node_def_bytes():
    node = node_def_pb2.NodeDef(name="a", op="Const")
    assert node.SerializeToString() == b"\x0a\x01a\x12\x05Const"


def test_node_def_attr_map_bytes():
    node = node_def_pb2.NodeDef(name="a")
    node.attr["dtype"].type = types_pb2.DT_FLOAT
    entry = b"\x0a\x05dtype" + b"\x12\x02" + b"\x30\x01"  # key=1, value=2 {type=6: 1}
    assert node.SerializeToString() == b"\x0a\x01a" + b"\x2a" + bytes([len(entry)]) + entry


def test_node_def_input_and_device_bytes():
    node = node_def_pb2.NodeDef(input=["x:1", "^y"], device="/cpu:0")
    assert node.SerializeToString() == b"\x1a\x03x:1\x1a\x02^y\x22\x06/cpu:0"


def test_attr_value_scalar_encodings():
    assert attr_value_pb2.AttrValue(i=3).SerializeToString() == b"\x18\x03"
    assert attr_value_pb2.AttrValue(s=b"hi").SerializeToString() == b"\x12\x02hi"
    assert attr_value_pb2.AttrValue(b=True).SerializeToString() == b"\x28\x01"
    assert attr_value_pb2.AttrValue(f=1.0).SerializeToString() == b"\x25\x00\x00\x80\x3f"
    assert attr_value_pb2.AttrValue(placeholder="T").SerializeToString() == b"\x4a\x01T"


def test_attr_value_list_is_packed():
    value = attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(i=[1, 2]))
    # list=1 { i=3 packed: tag 0x1a, length 2, varints 1 2 }
    assert value.SerializeToString() == b"\x0a\x04\x1a\x02\x01\x02"
    types = attr_value_pb2.AttrValue.ListValue(type=[types_pb2.DT_INT32, types_pb2.DT_INT64])
    assert types.SerializeToString() == b"\x32\x02\x03\x09"


def test_attr_value_oneof():
    value = attr_value_pb2.AttrValue(i=3)
    value.type = types_pb2.DT_STRING
    assert value.WhichOneof("value") == "type"
    assert value.SerializeToString() == b"\x30\x07"


def test_data_type_values():
    assert types_pb2.DT_INVALID == 0
    assert types_pb2.DT_FLOAT == 1
    assert types_pb2.DT_STRING == 7
    assert types_pb2.DT_INT64 == 9
    assert types_pb2.DT_BOOL == 10
    assert types_pb2.DT_BFLOAT16 == 14
    assert types_pb2.DT_HALF == 19
    assert types_pb2.DT_RESOURCE == 20
    assert types_pb2.DT_UINT64 == 23
    assert types_pb2.DT_FLOAT_REF == 101
    assert types_pb2.DT_UINT64_REF == 123
    for name, number in types_pb2.DataType.items():
        if number and not name.endswith("_REF"):
            assert types_pb2.DataType.Value(name + "_REF") == number + 100


def test_tensor_shape_bytes():
    shape = tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=2), {"size": -1}]
    )
    minus_one = b"\xff" * 9 + b"\x01"  # int64 varint of -1
    assert shape.SerializeToString() == b"\x12\x02\x08\x02" + b"\x12\x0b\x08" + minus_one
    assert tensor_shape_pb2.TensorShapeProto(unknown_rank=True).SerializeToString() == b"\x18\x01"


def test_tensor_content_round_trip():
    values = np.array([[1.5, -2.0, 3.25]], dtype=np.float32)
    tensor = tensor_pb2.TensorProto(
        dtype=types_pb2.DT_FLOAT,
        tensor_shape={"dim": [{"size": 1}, {"size": 3}]},
        tensor_content=values.tobytes(),
    )
    data = tensor.SerializeToString()
    assert data.startswith(b"\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x03\x22\x0c")
    parsed = tensor_pb2.TensorProto.FromString(data)
    assert parsed.dtype == types_pb2.DT_FLOAT
    assert [d.size for d in parsed.tensor_shape.dim] == [1, 3]
    decoded = np.frombuffer(parsed.tensor_content, dtype="<f4").reshape(1, 3)
    np.testing.assert_array_equal(decoded, values)


def test_tensor_typed_values_are_packed():
    assert tensor_pb2.TensorProto(float_val=[1.0]).SerializeToString() == (
        b"\x2a\x04\x00\x00\x80\x3f"
    )
    assert tensor_pb2.TensorProto(int_val=[1, 2]).SerializeToString() == b"\x3a\x02\x01\x02"
    assert tensor_pb2.TensorProto(half_val=[0x3C00]).SerializeToString() == b"\x6a\x02\x80\x78"
    assert tensor_pb2.TensorProto(uint64_val=[5]).SerializeToString() == b"\x8a\x01\x01\x05"
    assert tensor_pb2.TensorProto(string_val=[b"a", b"b"]).SerializeToString() == (
        b"\x42\x01a\x42\x01b"
    )


def test_feature_lists_are_packed():
    assert feature_pb2.FloatList(value=[1.0]).SerializeToString() == b"\x0a\x04\x00\x00\x80\x3f"
    assert feature_pb2.Int64List(value=[1, 300]).SerializeToString() == b"\x0a\x03\x01\xac\x02"
    feature = feature_pb2.Feature(int64_list={"value": [7]})
    assert feature.SerializeToString() == b"\x1a\x03\x0a\x01\x07"


def test_config_proto_device_count_map():
    config = config_pb2.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
    data = config.SerializeToString()
    assert data == b"\x0a\x07\x0a\x03CPU\x10\x02" + b"\x38\x01"
    parsed = config_pb2.ConfigProto.FromString(data)
    assert dict(parsed.device_count) == {"CPU": 2}
    assert parsed.allow_soft_placement


def test_config_field_numbers():
    gpu = config_pb2.GPUOptions(allow_growth=True, visible_device_list="0")
    assert gpu.SerializeToString() == b"\x20\x01\x2a\x010"
    opts = config_pb2.OptimizerOptions(opt_level=config_pb2.OptimizerOptions.L0)
    assert opts.SerializeToString() == b"\x18" + b"\xff" * 9 + b"\x01"
    assert config_pb2.OptimizerOptions.L1 == 0
    graph_options = config_pb2.GraphOptions(build_cost_model_after=1, timeline_step=2)
    assert graph_options.SerializeToString() == b"\x40\x02\x48\x01"
    run = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE, timeout_in_ms=5)
    assert run.SerializeToString() == b"\x08\x03\x10\x05"
    meta = config_pb2.RunMetadata(partition_graphs=[graph_pb2.GraphDef()])
    assert meta.SerializeToString() == b"\x1a\x00"
    assert config_pb2.ConfigProto(operation_timeout_in_ms=1).SerializeToString() == b"\x58\x01"


def test_saver_def_version():
    saver = saver_pb2.SaverDef(version=saver_pb2.SaverDef.V2, max_to_keep=5)
    assert saver.SerializeToString() == b"\x20\x05\x38\x02"


def test_checkpoint_state_text_format():
    text = (
        'model_checkpoint_path: "model.ckpt-200"\n'
        'all_model_checkpoint_paths: "model.ckpt-100"\n'
        'all_model_checkpoint_paths: "model.ckpt-200"\n'
        "all_model_checkpoint_timestamps: 1700000000.5\n"
        "last_preserved_timestamp: 1699999999.0\n"
    )
    state = text_format.Parse(text, checkpoint_state_pb2.CheckpointState())
    assert state.model_checkpoint_path == "model.ckpt-200"
    assert list(state.all_model_checkpoint_paths) == ["model.ckpt-100", "model.ckpt-200"]
    assert list(state.all_model_checkpoint_timestamps) == [1700000000.5]
    reparsed = text_format.Parse(
        text_format.MessageToString(state), checkpoint_state_pb2.CheckpointState()
    )
    assert reparsed == state


def test_event_file_version_round_trip():
    event = event_pb2.Event(wall_time=1.5, file_version="brain.Event:2")
    data = event.SerializeToString()
    assert data == b"\x09" + struct.pack("<d", 1.5) + b"\x1a\x0dbrain.Event:2"
    parsed = event_pb2.Event.FromString(data)
    assert parsed.WhichOneof("what") == "file_version"
    assert parsed.file_version == "brain.Event:2"


def test_event_summary_and_session_log():
    event = event_pb2.Event(step=3)
    event.summary.value.add(tag="loss", simple_value=0.5)
    assert event.SerializeToString() == (
        b"\x10\x03" + b"\x2a\x0d" + b"\x0a\x0b" + b"\x0a\x04loss" + b"\x15\x00\x00\x00\x3f"
    )
    log = event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path="c")
    assert log.SerializeToString() == b"\x08\x03\x12\x01c"
    histo = summary_pb2.HistogramProto(bucket=[1.0])
    assert histo.SerializeToString() == b"\x3a\x08" + struct.pack("<d", 1.0)


def test_step_stats_field_numbers():
    stats = step_stats_pb2.NodeExecStats(node_name="n", all_start_nanos=1, thread_id=2)
    assert stats.SerializeToString() == b"\x0a\x01n\x50\x02\x68\x01"
    device = step_stats_pb2.DeviceStepStats(device="d", thread_names={1: "t"})
    assert device.SerializeToString() == b"\x0a\x01d\x1a\x05\x08\x01\x12\x01t"


def test_bundle_entry_crc_is_fixed32():
    entry = tensor_bundle_pb2.BundleEntry(name="v", crc32c=0x01020304)
    assert entry.SerializeToString() == b"\x0a\x01v\x3d\x04\x03\x02\x01"
    header = tensor_bundle_pb2.BundleHeader(endianness=tensor_bundle_pb2.BundleHeader.BIG)
    assert header.SerializeToString() == b"\x10\x01"


# ---- fixtures written by TensorFlow ---------------------------------------------------


def _assert_no_unknown_fields(message, path="graph"):
    assert len(UnknownFieldSet(message)) == 0, f"unknown fields at {path}"
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].message_type is not None:
                for key in value:
                    _assert_no_unknown_fields(value[key], f"{path}.{field.name}[{key}]")
        elif field.is_repeated:
            for i, item in enumerate(value):
                _assert_no_unknown_fields(item, f"{path}.{field.name}[{i}]")
        else:
            _assert_no_unknown_fields(value, f"{path}.{field.name}")


def test_while_cond_graph_fixture_parses():
    data = (FIXTURES / "while_cond_graph.pb").read_bytes()
    expected = json.loads((FIXTURES / "while_cond_graph.json").read_text())
    graph = graph_pb2.GraphDef.FromString(data)
    assert sorted({node.op for node in graph.node}) == sorted(expected["ops"])
    assert graph.versions.producer > 0
    _assert_no_unknown_fields(graph)
    by_name = {node.name: node for node in graph.node}
    assert by_name["x"].op == "Placeholder"
    assert by_name["x"].attr["dtype"].type == types_pb2.DT_FLOAT
    assert by_name["n"].attr["dtype"].type == types_pb2.DT_INT32
    assert graph_pb2.GraphDef.FromString(graph.SerializeToString()) == graph


def test_examples_tfrecord_fixture_parses():
    expected = json.loads((FIXTURES / "examples.json").read_text())
    records = _tfrecords((FIXTURES / "examples.tfrecord").read_bytes())
    assert len(records) == len(expected) == 5
    for record, want in zip(records, expected):
        features = example_pb2.Example.FromString(record).features.feature
        assert list(features["id"].int64_list.value) == want["id"]
        np.testing.assert_array_equal(
            np.array(features["weights"].float_list.value, dtype=np.float32),
            np.array(want["weights"], dtype=np.float32),
        )
        assert [v.hex() for v in features["name"].bytes_list.value] == want["name_hex"]


# ---- our own messages and services ----------------------------------------------------


def test_descriptors_live_in_tensorflux_package():
    assert node_def_pb2.NodeDef.DESCRIPTOR.full_name == "tensorflux.NodeDef"
    assert types_pb2.DESCRIPTOR.package == "tensorflux"


@pytest.mark.parametrize(
    ("module", "service", "methods"),
    [
        (
            worker_service_pb2,
            "WorkerService",
            {
                "GetStatus", "CreateWorkerSession", "DeleteWorkerSession", "RegisterGraph",
                "DeregisterGraph", "RunGraph", "RecvTensor", "RecvTensors", "CleanupGraph",
                "CleanupAll", "Logging", "Tracing", "Abort", "Shutdown",
            },
        ),
        (
            master_service_pb2,
            "MasterService",
            {
                "CreateSession", "ExtendSession", "PartialRunSetup", "RunStep",
                "CloseSession", "ListDevices", "Reset",
            },
        ),
    ],
)  # fmt: skip
def test_service_methods(module, service, methods):
    descriptor = module.DESCRIPTOR.services_by_name[service]
    assert {m.name for m in descriptor.methods} == methods
    streaming = {m.name for m in descriptor.methods if m.server_streaming}
    assert streaming == ({"RecvTensor", "RecvTensors"} if service == "WorkerService"
                         else set())


def test_grpc_stubs_exist():
    assert hasattr(worker_service_pb2_grpc, "WorkerServiceStub")
    assert hasattr(worker_service_pb2_grpc, "add_WorkerServiceServicer_to_server")
    assert hasattr(master_service_pb2_grpc, "MasterServiceStub")
    assert hasattr(master_service_pb2_grpc, "add_MasterServiceServicer_to_server")


def test_run_graph_round_trip():
    request = worker_pb2.RunGraphRequest(
        session_handle="s", graph_handle="g", step_id=7, recv_key=["k"], is_partial=True
    )
    request.send.add(name="x", tensor={"dtype": types_pb2.DT_INT32, "tensor_content": b"\1\0\0\0"})
    parsed = worker_pb2.RunGraphRequest.FromString(request.SerializeToString())
    assert parsed == request
    assert parsed.send[0].tensor.tensor_content == b"\1\0\0\0"
