"""The one comparison of a committed generated protobuf module with what protoc compiles from its .proto."""

from __future__ import annotations

from types import ModuleType

from google.protobuf import descriptor_pb2


def without_json_names(file: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """protoc fills in json_name in a descriptor set, but the Python generator leaves it out of the descriptor it
    embeds; it is derived from the field name, so dropping it hides no difference."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(file)
    messages = list(copy.message_type)
    while messages:
        message = messages.pop()
        for field in message.field:
            field.ClearField("json_name")
        messages.extend(message.nested_type)
    return copy


def committed_descriptor(module: ModuleType) -> descriptor_pb2.FileDescriptorProto:
    """The file descriptor a generated `_pb2` module embeds."""
    committed = descriptor_pb2.FileDescriptorProto()
    module.DESCRIPTOR.CopyToProto(committed)
    return committed
