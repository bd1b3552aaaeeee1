"""`draconform serve`'s API under load: many clients listing at once, as informers of many controllers do after
a restart. The API runs alone in a child process (`python -m draconform.serve.server`), seeded over HTTP;
the clients are one asyncio process with a connection each, and each list's latency is measured from its
request to its last byte."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import aiohttp

from draconform.bench.registry import BenchOptions, Measurement, workload

CLIENTS = 200
PODS = 100


def _pod(index: int) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{index}", "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app:1", "resources": {"claims": [
                {"name": "gpu"}]}}], "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]}}


async def _run(url: str, pods: int, clients: int) -> list[float]:
    async with aiohttp.ClientSession() as session:
        for index in range(pods):
            async with session.post(f"{url}/api/v1/namespaces/default/pods", json=_pod(index)) as response:
                response.raise_for_status()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as listing:
            async def one() -> float:
                started = time.perf_counter()
                async with listing.get(f"{url}/api/v1/pods") as response:
                    body = await response.read()
                    if response.status != 200 or body.count(b'"kind":"Pod"') + body.count(b'"name":"pod-') < pods:
                        raise RuntimeError(f"a list was answered {response.status}")
                return time.perf_counter() - started
            return list(await asyncio.gather(*(one() for _ in range(clients))))


def concurrent_lists(pods: int = PODS, clients: int = CLIENTS) -> list[Measurement]:
    server = subprocess.Popen([sys.executable, "-m", "draconform.serve.server"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        latencies = sorted(asyncio.run(_run(url, pods, clients)))
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)

    def quantile(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    detail = f"{clients} concurrent lists of {pods} pods"
    return [Measurement("serve-lists", "s p50", quantile(0.5), detail),
            Measurement("serve-lists", "s p99", quantile(0.99), detail),
            Measurement("serve-lists", "s max", latencies[-1], detail)]


@workload("serve-lists", f"{CLIENTS} concurrent lists of {PODS} pods against draconform serve's API: latency "
                         "p50/p99/max (target p99 under 1 s on 2 cores)")
def _serve_lists(options: BenchOptions) -> list[Measurement]:
    return concurrent_lists(pods=max(1, int(PODS * options.scale)))
