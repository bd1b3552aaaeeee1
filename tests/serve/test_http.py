"""The HTTP layer: a refused or unread body never becomes the next request on a kept-alive connection, the
3 MiB request limit, malformed bodies answered with a Status, and many connections at once answered."""

from __future__ import annotations

import json
import re
import socket
from concurrent.futures import ThreadPoolExecutor

from draconform.serve.server import ApiServer
from tests.serve.conftest import Http


def _raw_requests(server: ApiServer, payload: bytes, answers: int) -> list[bytes]:
    """Send `payload` (several requests) on one connection and read `answers` responses' status lines."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(payload)
        received = b""
        while received.count(b"HTTP/1.1 ") < answers or not received.rstrip().endswith(b"}"):
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    return re.findall(rb"HTTP/1\.1 \d{3}", received)


def test_a_refused_delete_with_a_body_leaves_the_connection_in_step(server: ApiServer) -> None:
    body = json.dumps({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}).encode()
    first = (b"DELETE /api/v1/namespaces/default HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    second = b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n"
    statuses = _raw_requests(server, first + second, 2)
    assert statuses[0].startswith(b"HTTP/1.1 403") and statuses[1].startswith(b"HTTP/1.1 200"), statuses


def test_a_body_over_3_mib_is_refused_with_413_and_the_server_goes_on(http: Http, server: ApiServer) -> None:
    big = {"metadata": {"name": "big"}, "data": {"a": "x" * (3 * 1024 * 1024)}}
    reply = http.request("POST", "/api/v1/namespaces/default/configmaps", big)
    assert reply.status == 413 and reply.json()["reason"] == "RequestEntityTooLarge"
    again = Http(server.url)
    assert again.request("GET", "/api/v1/namespaces/default/configmaps").status == 200
    again.close()


def test_malformed_bodies_are_answered_with_a_status(http: Http) -> None:
    for body in (b"{not json", b"[1, 2]", b"\x00\x01\x02"):
        reply = http.request("POST", "/api/v1/namespaces/default/configmaps", body)
        assert reply.status == 400 and reply.json()["kind"] == "Status", body
    reply = http.request("GET", "/api/v1/namespaces/default/configmaps")
    assert reply.status == 200


def test_two_hundred_concurrent_lists_are_all_answered(server: ApiServer) -> None:
    def one_list(_: int) -> int:
        client = Http(server.url)
        try:
            return client.request("GET", "/api/v1/namespaces").status
        finally:
            client.close()
    with ThreadPoolExecutor(max_workers=200) as pool:
        assert list(pool.map(one_list, range(200))) == [200] * 200


def test_health_lists_each_check_when_verbose(http: Http, server: ApiServer) -> None:
    server.health_checks["kube-scheduler"] = lambda: None
    server.health_checks["kubelet"] = lambda: "exited with status -9; restarting"
    reply = http.request("GET", "/readyz?verbose")
    text = reply.body.decode()
    assert reply.status == 500 and "[+]kube-scheduler ok" in text and "[-]kubelet failed: exited" in text
    assert http.request("GET", "/livez").status == 200
