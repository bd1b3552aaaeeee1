"""kube-scheduler serves /metrics over HTTPS only, by default with a self-signed certificate it makes itself:
a live run reads it with the cluster config's CA bundle or, asked to, without checking, and otherwise fails
with an error that names the options (issue 37: every scenario of a run against a real control plane errored
on the first scrape)."""

from __future__ import annotations

import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from draconform.live.config import ClusterConfig
from draconform.live.metrics import metrics_client
from tests.live.helpers import metrics_server

METRICS = "# TYPE scheduler_schedule_attempts_total counter\nscheduler_schedule_attempts_total 3\n"


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An HTTPS metrics endpoint on loopback with a throw-away self-signed certificate, as kube-scheduler's."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "serving.crt", folder / "serving.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    server = metrics_server(lambda: METRICS)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/metrics", cert
    finally:
        server.shutdown()
        server.server_close()


def test_the_cluster_config_names_the_ca_relative_to_itself_or_skips_verification(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("schedulerMetricsURL: https://127.0.0.1:10259/metrics\nschedulerMetricsCA: pki/ca.crt\n")
    assert ClusterConfig.load(config).metrics_ca == str(tmp_path / "pki" / "ca.crt")
    assert not ClusterConfig.load(config).metrics_insecure
    config.write_text("schedulerMetricsURL: https://127.0.0.1:10259/metrics\n"
                      "schedulerMetricsInsecureSkipVerify: true\n")
    loaded = ClusterConfig.load(config)
    assert loaded.metrics_insecure and "schedulerMetricsInsecureSkipVerify: true" in loaded.dump()


def test_a_self_signed_endpoint_is_read_with_its_ca_or_without_checking(self_signed: tuple[str, Path]) -> None:
    url, cert = self_signed
    assert metrics_client(str(cert)).get(url, timeout=30).text == METRICS
    assert metrics_client(False).get(url, timeout=30).text == METRICS
    with pytest.raises(httpx2.HTTPError, match="CERTIFICATE_VERIFY_FAILED"):
        metrics_client(True).get(url, timeout=30)
