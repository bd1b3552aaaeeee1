"""Regenerate the protobuf and gRPC modules of this package from its .proto files:
`python -m draconform.kubeletplugin.generate` (needs grpcio-tools, from the `test` extra).

protoc runs as draconform/protoc.py runs it, so each generated module imports its siblings as
`draconform.kubeletplugin.<name>_pb2`, which is where they are installed. The generated code demands grpcio
and protobuf runtimes at least as new as the grpcio-tools that produced it: after regenerating
with a newer grpcio-tools, raise the floors in pyproject.toml to match."""

from __future__ import annotations

from pathlib import Path

from google.protobuf import descriptor_pb2

from draconform.protoc import ROOT, descriptor_set, run_protoc

PACKAGE_DIR = Path(__file__).resolve().parent
PROTOS = ("dra_v1.proto", "dra_v1beta1.proto", "pluginregistration_v1.proto", "classic_v1alpha1.proto")


def proto_paths() -> list[str]:
    """The .proto files as protoc names them: relative to the root, with forward slashes."""
    return [(PACKAGE_DIR / name).relative_to(ROOT).as_posix() for name in PROTOS]


def generate() -> None:
    """Write <name>_pb2.py, <name>_pb2.pyi and <name>_pb2_grpc.py next to each .proto file."""
    run_protoc(proto_paths(), f"--python_out={ROOT}", f"--pyi_out={ROOT}", f"--grpc_python_out={ROOT}")


def compile_descriptors() -> descriptor_pb2.FileDescriptorSet:
    return descriptor_set(proto_paths())


if __name__ == "__main__":
    generate()
