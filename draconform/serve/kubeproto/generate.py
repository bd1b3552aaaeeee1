"""Regenerate kube_pb2.py and openapiv2_pb2.py from their .proto files:
`python -m draconform.serve.kubeproto.generate` (needs grpcio-tools, from the `test` extra). As for
draconform.kubeletplugin, protoc (draconform/protoc.py) runs with the repository root as its include path, and the
generated modules need a protobuf runtime at least as new as the grpcio-tools that made them."""

from __future__ import annotations

from pathlib import Path

from google.protobuf import descriptor_pb2

from draconform.protoc import ROOT, descriptor_set, run_protoc

PACKAGE_DIR = Path(__file__).resolve().parent
PROTOS = [(PACKAGE_DIR / name).relative_to(ROOT).as_posix() for name in ("kube.proto", "openapiv2.proto")]


def generate() -> None:
    # no .pyi: DeviceAttribute's fields `int` and `bool` would shadow the types
    run_protoc(PROTOS, f"--python_out={ROOT}")


def compile_descriptors() -> descriptor_pb2.FileDescriptorSet:
    return descriptor_set(PROTOS)


if __name__ == "__main__":
    generate()
