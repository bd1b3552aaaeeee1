from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class NodePrepareResourceRequest(_message.Message):
    __slots__ = ("resource_uid",)
    RESOURCE_UID_FIELD_NUMBER: _ClassVar[int]
    resource_uid: str
    def __init__(self, resource_uid: _Optional[str] = ...) -> None: ...

class NodePrepareResourceResponse(_message.Message):
    __slots__ = ("cdi_device",)
    CDI_DEVICE_FIELD_NUMBER: _ClassVar[int]
    cdi_device: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cdi_device: _Optional[_Iterable[str]] = ...) -> None: ...

class NodeUnprepareResourceRequest(_message.Message):
    __slots__ = ("resource_uid", "cdi_device")
    RESOURCE_UID_FIELD_NUMBER: _ClassVar[int]
    CDI_DEVICE_FIELD_NUMBER: _ClassVar[int]
    resource_uid: str
    cdi_device: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, resource_uid: _Optional[str] = ..., cdi_device: _Optional[_Iterable[str]] = ...) -> None: ...

class NodeUnprepareResourceResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
