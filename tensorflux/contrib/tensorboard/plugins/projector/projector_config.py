"""The projector's config messages, built from TensorBoard's projector_config.proto schema.

The schema is declared here as a FileDescriptorProto (same field names and numbers as
TensorBoard's, package `tensorflux` so it cannot clash with TensorFlow's in one process) and
turned into message classes by the protobuf runtime; no generated code is checked in.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["ProjectorConfig", "EmbeddingInfo", "SpriteMetadata"]

_F = descriptor_pb2.FieldDescriptorProto

# message -> [(field name, number, type, label, message type name or None)]
_SCHEMA = {
    "SpriteMetadata": [("image_path", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
                       ("single_image_dim", 2, _F.TYPE_UINT32, _F.LABEL_REPEATED, None)],
    "EmbeddingInfo": [("tensor_name", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
                      ("metadata_path", 2, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
                      ("bookmarks_path", 3, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
                      ("tensor_shape", 4, _F.TYPE_UINT32, _F.LABEL_REPEATED, None),
                      ("sprite", 5, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, "SpriteMetadata"),
                      ("tensor_path", 6, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None)],
    "ProjectorConfig": [("model_checkpoint_path", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
                        ("embeddings", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, "EmbeddingInfo"),
                        ("model_checkpoint_dir", 3, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None)],
}

_PACKAGE = "tensorflux"
_FILE = "tensorflux/contrib/tensorboard/plugins/projector/projector_config.proto"


def _file_proto():
    proto = descriptor_pb2.FileDescriptorProto(name=_FILE, package=_PACKAGE, syntax="proto3")
    for message, fields in _SCHEMA.items():
        msg = proto.message_type.add(name=message)
        for name, number, kind, label, type_name in fields:
            field = msg.field.add(name=name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = f".{_PACKAGE}.{type_name}"
    return proto


def _classes():
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_FILE)
    except KeyError:
        pool.Add(_file_proto())
    return {name: message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")) for name in _SCHEMA}


_classes_by_name = _classes()
SpriteMetadata = _classes_by_name["SpriteMetadata"]
EmbeddingInfo = _classes_by_name["EmbeddingInfo"]
ProjectorConfig = _classes_by_name["ProjectorConfig"]
