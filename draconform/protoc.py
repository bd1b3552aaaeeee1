"""protoc, the one way this project compiles its .proto files (draconform.kubeletplugin's, draconform.serve's and
CEL's checked form in draconform.kube.cel): the repository root is the only include path, so a generated module
imports its siblings by their installed names. Needs grpcio-tools (the `test` extra), imported only when run; the
generated modules demand a protobuf runtime at least as new as the grpcio-tools that made them."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent


def run_protoc(protos: Sequence[str], *options: str) -> None:
    """protoc over `protos` (paths relative to the repository root, its one include path)."""
    from grpc_tools import protoc

    if protoc.main(["protoc", f"-I{ROOT}", *options, *protos]) != 0:
        raise RuntimeError(f"protoc failed on {', '.join(protos)}")


def descriptor_set(protos: Sequence[str]) -> descriptor_pb2.FileDescriptorSet:
    """What protoc makes of `protos` now, to compare with the committed modules."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "protos.pb"
        run_protoc(protos, f"--descriptor_set_out={out}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
