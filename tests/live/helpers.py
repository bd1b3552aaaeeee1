"""Shared by the live tests: bounded waiting, the served reference as a child process, and `draconform run`
as a child process (a run binds its scenarios once per process)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
FAST_TIMEOUTS = HERE / "fast-timeouts.yaml"


class FakeTime:
    """What a module reads of `time` to wait: a monotonic clock that only sleeping moves, so no verdict of a
    test depends on how fast a loaded machine looks."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds instead of waiting for ever. The callers
    give minutes: the wait costs only what the condition takes, and a loaded machine may take long."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g}s")
        time.sleep(0.05)


@contextmanager
def served_reference(directory: Path, *extra: str) -> Iterator[Path]:
    """`draconform serve` in a child process; yields its directory once cluster.yaml says it is ready."""
    with served_references([(directory, extra)]) as (served,):
        yield served


@contextmanager
def served_references(servers: Sequence[tuple[Path, Sequence[str]]]) -> Iterator[list[Path]]:
    """Several `draconform serve` (directory, extra arguments) in child processes, started together; yields their
    directories once each cluster.yaml says it is ready, and stops them all."""
    logs, processes = [], []
    try:
        for directory, extra in servers:
            logs.append((directory / "serve.log").open("w"))
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "draconform.cli", "serve", "--dir", str(directory), *extra],
                stdout=logs[-1], stderr=subprocess.STDOUT))
        for (directory, _), process in zip(servers, processes, strict=True):
            wait_until(lambda: (directory / "cluster.yaml").exists() or process.poll() is not None,  # noqa: B023
                       360, "draconform serve becoming ready")  # beyond serve's own bound for its components
            assert process.poll() is None, f"draconform serve exited: {(directory / 'serve.log').read_text()}"
        yield [directory for directory, _ in servers]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for log in logs:
            log.close()


def draconform_run(report_dir: Path, name: str, *args: str, timeout: float = 1800) -> dict[str, Any]:
    """Run `draconform run ARGS` and return its report.json; `timeout` guards against a hang, with room for a
    live run of a few hundred scenarios on a loaded machine."""
    done = subprocess.run([sys.executable, "-m", "draconform.cli", "run", *args, "--report-dir", str(report_dir),
                           "--name", name], capture_output=True, text=True, timeout=timeout, check=False)
    report = report_dir / name / "report.json"
    assert report.exists(), f"draconform run wrote no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    loaded: dict[str, Any] = json.loads(report.read_text())
    return loaded


def assert_passed_or_skipped_with_reason(report: dict[str, Any]) -> None:
    """Every scenario of a live run's report passed, or was skipped with the SUT's own reason (Unsupported)."""
    wrong = [(s["name"], s["status"], s.get("message")) for s in report["scenarios"]
             if s["status"] not in ("passed", "skipped")]
    assert not wrong, f"scenarios that did not pass live: {wrong}"
    unexplained = [s["name"] for s in report["scenarios"]
                   if s["status"] == "skipped" and not (s.get("skip_reason") or "").startswith("Unsupported: ")]
    assert not unexplained, f"skipped live without the SUT's reason: {unexplained}"


def left_on(cluster: Path) -> list[str]:
    """Every object a served cluster still holds but the namespaces every cluster has (events aside)."""
    from draconform.live.kube import KINDS, KubeClient, load_config
    from draconform.serve.handlers import STANDARD_NAMESPACES

    client = KubeClient(load_config(cluster / "kubeconfig"))
    try:
        return [f"{cluster.name}: {kind}/{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
                for kind in KINDS if kind != "Event" for obj in client.list(kind)[0]
                if not (kind == "Namespace" and obj["metadata"]["name"] in STANDARD_NAMESPACES)]
    finally:
        client.close()


def metrics_server(body: Callable[[], str]) -> Any:
    """A threading HTTP server on loopback (not yet serving) whose every GET answers `body()` as a /metrics page,
    as kube-scheduler's endpoint does; the caller may wrap its socket in TLS, starts it and shuts it down."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Metrics(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            page = body().encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Metrics)
