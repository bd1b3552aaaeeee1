"""The CEL sandbox: a child Python process (`python -m draconform.kube.cel.sandbox`) that evaluates selectors
able to grow values without bound (`cel.bind` doubling, chained `replace`) under a memory cap, for a parent that
kills it at a deadline."""

from __future__ import annotations

import json
import sys
from typing import Any

from draconform.kube.cel.engine import _verdict
from draconform.kube.cel.environments import CelFeatures, environment
from draconform.kube.cel.errors import CelError

SANDBOX_SECONDS = 5.0  # per batch of devices; generous, a sane selector takes microseconds per device
SANDBOX_MEMORY = 1 << 30


class Sandbox:
    """A child Python process (`python -m draconform.kube.cel.sandbox`) that evaluates amplifying expressions
    under a memory cap; killed and replaced when a batch overruns its deadline or the child dies, so a runaway selector
    yields an error, never a hang. Requests and answers are JSON lines over its stdin and stdout."""

    def __init__(self) -> None:
        self._process: Any = None  # a subprocess.Popen[bytes] once started

    def evaluate(self, expression: str, devices: list[dict[str, Any]],
                 features: CelFeatures) -> list[bool | CelError]:
        import select  # only a run that meets an amplifying selector pays for these
        import subprocess

        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "draconform.kube.cel.sandbox", str(SANDBOX_MEMORY)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            request = {"expression": expression, "devices": devices,
                       "features": [features.consumable_capacity, features.includes]}
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], SANDBOX_SECONDS)
            line = process.stdout.readline() if ready else None
        except (BrokenPipeError, OSError):
            line = b""
        if line:
            return [value if ok else CelError(value) for ok, value in json.loads(line)]
        self._stop()
        if line is None:
            why = f"no result within {SANDBOX_SECONDS:g} s"
        else:
            why = f"it needed more than {SANDBOX_MEMORY >> 20} MiB"
        return [CelError(f"CEL evaluation stopped: {why} (runaway expression)")] * len(devices)

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
        self._process = None


_SANDBOX: Sandbox | None = None


def sandbox() -> Sandbox:
    global _SANDBOX
    if _SANDBOX is None:
        _SANDBOX = Sandbox()
    return _SANDBOX


def serve_sandbox(memory: int) -> None:  # pragma: no cover - runs in the child process
    """The child's loop: one JSON request per line in, one JSON answer per line out."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    for line in sys.stdin.buffer:
        request = json.loads(line)
        selector = environment(CelFeatures(*request["features"])).compile(request["expression"])
        answers: list[tuple[bool, Any]] = []
        for device in request["devices"]:
            try:
                verdict = _verdict(selector.program, device)
            except MemoryError:
                verdict = CelError(f"CEL evaluation stopped: it needed more than {memory >> 20} MiB "
                                   "(runaway expression)")
            answers.append((False, str(verdict)) if isinstance(verdict, CelError) else (True, verdict))
        sys.stdout.write(json.dumps(answers) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve_sandbox(int(sys.argv[1]) if len(sys.argv) > 1 else SANDBOX_MEMORY)
