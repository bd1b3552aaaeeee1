"""Regenerate checked_pb2.py (and its .pyi) from checked.proto: `python -m draconform.kube.cel.generate` (needs
grpcio-tools, from the `test` extra; protoc runs as draconform/protoc.py runs it)."""

from __future__ import annotations

from pathlib import Path

from google.protobuf import descriptor_pb2

from draconform.protoc import ROOT, descriptor_set, run_protoc

PROTO = (Path(__file__).resolve().parent / "checked.proto").relative_to(ROOT).as_posix()


def generate() -> None:
    run_protoc([PROTO], f"--python_out={ROOT}", f"--pyi_out={ROOT}")


def compile_descriptors() -> descriptor_pb2.FileDescriptorSet:
    return descriptor_set([PROTO])


if __name__ == "__main__":
    generate()
