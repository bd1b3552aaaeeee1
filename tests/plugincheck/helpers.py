"""What the plugin-check tests share: a kubelet plugin as a process of its own (the reference plugin, as
it is or as a known-bad variant, or another plugin's command), the driver's slices, and a `draconform
plugin-check` run whose report.json is read back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from draconform.cli import main
from draconform.mutation.catalogue import variant_named
from draconform.mutation.runner import variant_environment

DRIVER, NODE = "gpu.example.com", "node-1"
# Two GPUs held whole and one shared in capacity on node-1, and the same names in node-2's pool.
SLICES = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
     "spec": {"driver": DRIVER, "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
              "nodeName": NODE,
              "devices": [{"name": "gpu-0"}, {"name": "gpu-1"},
                          {"name": "gpu-2", "allowMultipleAllocations": True,
                           "capacity": {"memory": {"value": "80Gi"}}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-2-gpus"},
     "spec": {"driver": DRIVER, "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 1},
              "nodeName": "node-2", "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
]


class Plugin:
    """A kubelet plugin as a process of its own: started, and stopped at the end of the test whatever happened.
    By default the reference plugin (`standalone`); `command` names another, such as the helper-shaped one."""

    def __init__(self, directory: Path, *args: str, faults: Sequence[str] = (), variant: str | None = None,
                 command: Sequence[str] | None = None) -> None:
        """`faults` are injected failures of calls; `variant` names a known-bad variant of the reference
        (draconform.mutation.catalogue) the plugin runs as, its overrides installed."""
        base = command or [sys.executable, "-m", "draconform.reference.standalone_driver"]
        argv = [*base, "--driver", DRIVER, "--node", NODE, "--socket", str(directory / "dra.sock"),
                "--registration", str(directory / "reg.sock"), "--slices", str(directory / "slices.yaml"),
                "--cdi-dir", str(directory / "cdi"), *args]
        for fault in faults:
            argv += ["--fault", fault]
        env = dict(os.environ) if variant is None else variant_environment(variant_named(variant))
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                        cwd=directory)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # blocks until the sockets serve, or the process ends
        stderr = self.process.stderr.read() if line.strip() != "ready" and self.process.stderr else ""
        assert line.strip() == "ready", f"the plugin did not start: {stderr}"

    @property
    def restart_command(self) -> str:
        return f"kill -{signal.SIGHUP.name.removeprefix('SIG')} {self.process.pid}"

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def plugin_check(directory: Path, *extra: str, registration: bool = True) -> tuple[int, dict[str, Any]]:
    """`draconform plugin-check` against the plugin in `directory`; its exit status and report.json."""
    status = main(["plugin-check", "--endpoint", f"unix://{directory}/dra.sock", "--driver", DRIVER, "--node", NODE,
                   *(["--registration", f"unix://{directory}/reg.sock"] if registration else []),
                   "--report-dir", str(directory / "reports"), "--name", "run", *extra])
    report = json.loads((directory / "reports" / "run" / "report.json").read_text())
    return status, report


def outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {scenario["rules"][0]: scenario["status"] for scenario in report["scenarios"]}


def failed(report: dict[str, Any]) -> dict[str, str]:
    """The failed checks, with their messages."""
    return {s["rules"][0]: s["message"] for s in report["scenarios"] if s["status"] in ("failed", "error")}
