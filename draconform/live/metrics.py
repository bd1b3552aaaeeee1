"""kube-scheduler's metrics as a live scenario reads them (`SystemUnderTest.metrics_text`): scraped from the
address the cluster config or `--metrics-url` gives, counters, histograms and summaries as the change since the
scenario began (the cluster's scheduler outlives scenarios), and the wait for an earlier scenario's binding cycles
to end before a scenario that runs alone."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from draconform.live.config import ClusterConfig, LiveOptions, TimeoutConfig

COUNTING_TYPES = ("counter", "histogram", "summary")  # read as the change since the scenario began
_METRICS: dict[str | bool, httpx2.Client] = {}


def metrics_client(verify: str | bool = True) -> httpx2.Client:
    """One client per way of checking the endpoint's certificate, for the whole process."""
    if verify not in _METRICS:
        _METRICS[verify] = httpx2.Client(trust_env=False, verify=verify)
    return _METRICS[verify]


def scrape(url: str, verify: str | bool, timeout: float) -> str:
    """The metrics text at `url`; a failure as ConnectionError, with a hint where the certificate was refused."""
    try:
        response = metrics_client(verify).get(url, timeout=timeout)
        response.raise_for_status()
    except httpx2.HTTPError as error:
        hint = ("; kube-scheduler serves /metrics with a self-signed certificate unless given one: name its CA "
                "with schedulerMetricsCA in the cluster config, or set schedulerMetricsInsecureSkipVerify: true"
                if "CERTIFICATE_VERIFY_FAILED" in str(error) else "")
        raise ConnectionError(f"scraping {url}: {type(error).__name__}: {error}{hint}") from None
    return response.text


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, str]]:
    return {(s.name, tuple(sorted(s.labels.items()))): (s.value, family.type)
            for family in text_string_to_metric_families(text) for s in family.samples}


def metrics_delta(baseline: str, current: str) -> str:
    before = _samples(baseline)
    lines = []
    for (name, labels), (value, kind) in _samples(current).items():
        if kind in COUNTING_TYPES:
            value -= before.get((name, labels), (0.0, kind))[0]
        rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
        lines.append(f"{name}{{{rendered}}} {value!r}" if labels else f"{name} {value!r}")
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return re.sub(r'(["\\])', r"\\\1", value).replace("\n", "\\n")


# kube-scheduler's gauge of its running binding cycles (PreBind included); a cycle waiting for binding conditions
# polls every few seconds and ends, and is counted in the metrics, some seconds after its pod is gone.
_BINDING_CYCLES = re.compile(r'^scheduler_goroutines\{[^}]*operation="binding"[^}]*\}\s+(\S+)', re.MULTILINE)


def wait_for_idle_schedulers(options: LiveOptions) -> None:
    """Before a scenario that runs alone (`draconform.live.isolation`): wait, up to the cleanup timeout, until no
    binding cycle of an earlier scenario's pods is running in any cluster's kube-scheduler, so that what those
    cycles count when they end does not land in this scenario's metrics. A scheduler whose metrics cannot be read
    is not waited for (the scenario reading them says why)."""
    timeouts = TimeoutConfig.load(Path(options.timeout_config)) if options.timeout_config else TimeoutConfig()
    first = ClusterConfig.load(Path(options.cluster_config)) if options.cluster_config else ClusterConfig()
    clusters = [(options.metrics_url or first.metrics_url, first),
                *((c.metrics_url, c) for c in map(ClusterConfig.load, map(Path, options.also_clusters)))]
    deadline = time.monotonic() + timeouts.cleanup_timeout
    for url, cluster in clusters:
        if not url:
            continue
        verify = False if cluster.metrics_insecure else (cluster.metrics_ca or True)
        while True:
            try:
                text = metrics_client(verify).get(url, timeout=timeouts.request_timeout).text
            except httpx2.HTTPError:
                break
            running = sum(float(value) for value in _BINDING_CYCLES.findall(text))
            if running <= 0 or time.monotonic() > deadline:
                break
            time.sleep(timeouts.poll_interval)
