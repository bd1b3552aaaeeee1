"""Regenerate kube_pb2.py and openapiv2_pb2.py from their .proto files:
`python -m draconform.serve.kubeproto.generate` (needs grpcio-tools, from the `test` extra). As for
draconform.kubeletplugin, protoc runs with the repository root as its include path, and the generated modules
need a protobuf runtime at least as new as the grpcio-tools that made them."""

from __future__ import annotations

import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2

PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parent.parent.parent
PROTOS = [(PACKAGE_DIR / name).relative_to(ROOT).as_posix() for name in ("kube.proto", "openapiv2.proto")]


def _protoc(*options: str) -> None:
    from grpc_tools import protoc  # only the generator needs the compiler

    if protoc.main(["protoc", f"-I{ROOT}", *options, *PROTOS]) != 0:
        raise RuntimeError(f"protoc failed on {', '.join(PROTOS)}")


def generate() -> None:
    _protoc(f"--python_out={ROOT}")  # no .pyi: DeviceAttribute's fields `int` and `bool` would shadow the types


def compile_descriptors() -> descriptor_pb2.FileDescriptorSet:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "protos.pb"
        _protoc(f"--descriptor_set_out={out}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


if __name__ == "__main__":
    generate()
