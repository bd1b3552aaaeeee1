"""The reference API store behind the Kubernetes REST protocol, for the objects DRA uses: discovery, list,
get, create, update, the status subresource, JSON merge patch, delete, pods/binding, and watch from a
resourceVersion, with the label and field selectors draconform uses. It is the reference store, not a
kube-apiserver: no authentication, no admission webhooks, no server-side apply, no pagination, and a
namespace's objects go at once when the namespace is deleted.

Python's standard `http.server` serves it (one thread per connection, HTTP/1.1 keep-alive, chunked watch
streams); one lock serialises every call into the store, which is not thread-safe."""

from __future__ import annotations

import bisect
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from draconform.live.kube import KINDS as API_KINDS
from draconform.reference.apiserver.store import Store, WatchEvent
from draconform.sut import ApiError, Obj

HTTP_STATUS = {"NotFound": 404, "AlreadyExists": 409, "Conflict": 409, "Invalid": 422, "Forbidden": 403,
               "BadRequest": 400, "MethodNotAllowed": 405, "UnsupportedMediaType": 415}
# kind by (group, plural)
_BY_PLURAL = {(info.group, info.plural): kind for kind, info in API_KINDS.items()}
DEFAULT_WATCH_SECONDS = 1800


class ApiServer:
    """The store, its history of changes (for watches from a resourceVersion) and the HTTP server."""

    def __init__(self, store: Store, host: str = "127.0.0.1", port: int = 0, version: str = "1.37") -> None:
        self.store = store
        self.version = version
        self.changed = threading.Condition()  # held around every store call; notified on every write
        self._feed = store.watch()
        self._revisions: list[int] = []
        self._history: list[WatchEvent] = []
        self.host = host
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.httpd.server_port}"

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.httpd.serve_forever, name="api-server", daemon=True)
        thread.start()
        return thread

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- the store, serialised ---------------------------------------------------------------------
    def call(self, operation: Callable[[], Any]) -> Any:
        with self.changed:
            try:
                return operation()
            finally:
                for event in self._feed.drain():
                    self._revisions.append(int(event.object["metadata"]["resourceVersion"]))
                    self._history.append(event)
                self.changed.notify_all()

    def revision(self) -> int:
        return self._revisions[-1] if self._revisions else 0

    def events_after(self, revision: int) -> list[WatchEvent]:
        """Changes after `revision`; call with `changed` held."""
        return self._history[bisect.bisect_right(self._revisions, revision):]

    def delete_namespace(self, name: str) -> None:
        """What the namespace controller does, at once: every object in it goes, finalizers or not."""
        def delete_all() -> None:
            if self.store.get("Namespace", name) is None:
                raise ApiError("NotFound", f'namespaces "{name}" not found')
            for kind, info in API_KINDS.items():
                if not info.namespaced:
                    continue
                for obj in self.store.list(kind, name):
                    if obj["metadata"].get("finalizers"):
                        obj["metadata"]["finalizers"] = []
                        obj["metadata"].pop("resourceVersion", None)
                        self.store.update(obj)
                    if self.store.get(kind, obj["metadata"]["name"], name) is not None:
                        self.store.delete(kind, obj["metadata"]["name"], name, grace_period_seconds=0)
            self.store.delete("Namespace", name)
        self.call(delete_all)


def _grace_period(params: dict[str, str], body: Any) -> int | None:
    """DeleteOptions' gracePeriodSeconds, from the query or the request body (clients send either)."""
    value = params.get("gracePeriodSeconds")
    if value is None and isinstance(body, dict):
        value = body.get("gracePeriodSeconds")
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ApiError("BadRequest", f"gracePeriodSeconds: expected a whole number of seconds, got {value!r}") from None


# --- selectors ------------------------------------------------------------------------------------------
_REQUIREMENT = re.compile(r"\s*(?P<not>!)?(?P<key>[^\s!=,()]+)\s*(?:(?P<op>==|!=|=|\s+in\s+|\s+notin\s+)\s*"
                          r"(?P<value>\([^)]*\)|[^,]*))?\s*(?:,|$)")


def parse_selector(text: str) -> list[tuple[str, str, set[str]]]:
    """`a=b,c!=d,e,!f,g in (x,y)` as (key, operator, values); a malformed selector is a BadRequest."""
    requirements: list[tuple[str, str, set[str]]] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _REQUIREMENT.match(text, position)
        if match is None or match.end() == position:
            raise ApiError("BadRequest", f"unable to parse requirement in selector {text!r}")
        position = match.end()
        op = (match["op"] or "").strip()
        value = (match["value"] or "").strip()
        values = {v.strip() for v in value.strip("()").split(",")} if value.startswith("(") else {value}
        if match["not"]:
            requirements.append((match["key"], "!exists", set()))
        elif not op:
            requirements.append((match["key"], "exists", set()))
        else:
            requirements.append((match["key"], {"=": "in", "==": "in", "!=": "notin"}.get(op, op), values))
    return requirements


def _matches(values: dict[str, str], requirements: list[tuple[str, str, set[str]]]) -> bool:
    for key, op, wanted in requirements:
        present = key in values
        if (op == "exists" and not present) or (op == "!exists" and present):
            return False
        if op == "in" and values.get(key) not in wanted:
            return False
        if op == "notin" and present and values[key] in wanted:
            return False
    return True


def _field_values(obj: Obj, requirements: list[tuple[str, str, set[str]]]) -> dict[str, str]:
    """The value of each dotted path a field selector names, as a string ('' when absent)."""
    values = {}
    for key, _, _ in requirements:
        value: Any = obj
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        values[key] = "" if value is None else str(value)
    return values


class Query:
    """What a list or watch asks for: a kind, a namespace (None: all) and selectors."""

    def __init__(self, kind: str, namespace: str | None, params: dict[str, str]) -> None:
        self.kind, self.namespace = kind, namespace
        self.labels = parse_selector(params.get("labelSelector", ""))
        self.fields = parse_selector(params.get("fieldSelector", ""))

    def wants(self, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        return (obj.get("kind") == self.kind
                and (self.namespace is None or meta.get("namespace") == self.namespace)
                and _matches(meta.get("labels") or {}, self.labels)
                and _matches(_field_values(obj, self.fields), self.fields))


def _bookmark(kind: str, revision: int) -> Obj:
    """A BOOKMARK's object: the kind, and only the resourceVersion in its metadata."""
    return {"kind": kind, "apiVersion": API_KINDS[kind].api_version, "metadata": {"resourceVersion": str(revision)}}


# --- JSON merge patch (RFC 7386) ------------------------------------------------------------------------
def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- HTTP -----------------------------------------------------------------------------------------------
def _discovery(server: ApiServer, path: str) -> Obj | None:
    groups = sorted({info.group for info in API_KINDS.values() if info.group})
    if path == "/version":
        major, minor = server.version.split(".")[:2]
        return {"major": major, "minor": minor, "gitVersion": f"v{server.version}.0-draconform-reference"}
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"]}
    if path == "/apis":
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": group, "versions": [{"groupVersion": f"{group}/v1", "version": "v1"}],
             "preferredVersion": {"groupVersion": f"{group}/v1", "version": "v1"}} for group in groups]}
    for group_version in ["v1", *(f"{group}/v1" for group in groups)]:
        if path == ("/api/v1" if group_version == "v1" else f"/apis/{group_version}"):
            resources = []
            for kind, info in API_KINDS.items():
                if info.api_version != group_version:
                    continue
                resources.append({"name": info.plural, "singularName": kind.lower(), "namespaced": info.namespaced,
                                  "kind": kind, "verbs": ["create", "delete", "get", "list", "patch", "update",
                                                          "watch"]})
                if kind in ("ResourceClaim", "Pod", "Node"):
                    resources.append({"name": f"{info.plural}/status", "namespaced": info.namespaced, "kind": kind,
                                      "verbs": ["get", "patch", "update"]})
            return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
                    "resources": resources}
    return None


def _route(path: str) -> tuple[str, str | None, str | None, str | None]:
    """`/api/v1/namespaces/ns/pods/name/status` -> ("Pod", "ns", "name", "status")."""
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        group, rest = "", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis" and parts[2] == "v1":
        group, rest = parts[1], parts[3:]
    else:
        raise ApiError("NotFound", f"the server could not find the requested resource {path}")
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3 or (group, rest[0]) not in _BY_PLURAL:
        raise ApiError("NotFound", f"the server could not find the requested resource {path}")
    kind = _BY_PLURAL[(group, rest[0])]
    if API_KINDS[kind].namespaced and namespace is None and len(rest) > 1:
        raise ApiError("NotFound", f"{kind} is namespaced: {path}")
    return kind, namespace, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None


def _status(error: ApiError) -> tuple[int, Obj]:
    code = HTTP_STATUS.get(error.reason, 500)
    causes = [{"field": cause.field, "message": cause.message, "reason": "FieldValueInvalid"}
              for cause in error.causes]
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": error.message, "reason": error.reason, "code": code,
                  "details": {"causes": causes} if causes else {}}


def _handler(server: ApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # a response is written in pieces: without this each waits ~40ms

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per request would drown a run's output

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

        def _send(self, code: int, body: Obj | str) -> None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json" if isinstance(body, dict) else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                return json.loads(self.rfile.read(length) or b"null")
            except json.JSONDecodeError as error:
                raise ApiError("BadRequest", f"the request body is not JSON: {error}") from None

        def _serve(self, method: str) -> None:
            url = urlsplit(self.path)
            params = {key: values[-1] for key, values in parse_qs(url.query).items()}
            try:
                if method == "GET" and url.path in ("/healthz", "/readyz", "/livez"):
                    self._send(200, "ok")
                    return
                found = _discovery(server, url.path.rstrip("/")) if method == "GET" else None
                if found is not None:
                    self._send(200, found)
                    return
                kind, namespace, name, sub = _route(url.path)
                if method == "GET" and name is None and params.get("watch") in ("true", "1"):
                    self._watch(Query(kind, namespace, params), params)
                    return
                code, result = self._dispatch(method, kind, namespace, name, sub, params)
                self._send(code, result)
            except ApiError as error:
                self._send(*_status(error))
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _dispatch(self, method: str, kind: str, namespace: str | None, name: str | None, sub: str | None,
                      params: dict[str, str]) -> tuple[int, Obj]:
            store = server.store
            if sub not in (None, "status", "binding") or (sub == "binding" and kind != "Pod"):
                raise ApiError("NotFound", f"{kind} has no subresource {sub!r}")
            if method == "GET" and name is None:
                query = Query(kind, namespace, params)
                items, revision = server.call(lambda: ([o for o in store.list(kind, namespace) if query.wants(o)],
                                                       server.revision()))
                info = API_KINDS[kind]
                return 200, {"kind": f"{kind}List", "apiVersion": info.api_version,
                             "metadata": {"resourceVersion": str(revision)}, "items": items}
            if method == "GET":
                wanted = name or ""  # not None: a GET without a name is a list, above
                obj = server.call(lambda: store.get(kind, wanted, namespace))
                if obj is None:
                    raise ApiError("NotFound", f'{API_KINDS[kind].plural} "{name}" not found')
                return 200, obj
            if method == "DELETE" and name is not None:
                if kind == "Namespace":
                    server.delete_namespace(name)
                else:
                    grace = _grace_period(params, self._body())
                    server.call(lambda: store.delete(kind, name, namespace, grace_period_seconds=grace))
                return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}}
            body = self._body()
            if method == "POST" and sub == "binding" and name is not None and namespace is not None:
                target = ((body or {}).get("target") or {}).get("name")
                if not target:
                    raise ApiError("Invalid", "target.name: Required value")
                server.call(lambda: store.bind(namespace, name, target))
                return 201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}}
            if not isinstance(body, dict):
                raise ApiError("BadRequest", "the request body must be a JSON object")
            body.setdefault("kind", kind)
            body.setdefault("apiVersion", API_KINDS[kind].api_version)
            meta = body.setdefault("metadata", {})
            if namespace is not None:
                if meta.get("namespace", namespace) != namespace:
                    raise ApiError("BadRequest", "the namespace of the object does not match the namespace of the URL")
                meta["namespace"] = namespace
            if method == "POST" and name is None:
                return 201, server.call(lambda: self._create(body, namespace))
            if name is None or (method in ("PUT", "PATCH") and meta.setdefault("name", name) != name):
                raise ApiError("BadRequest", "the name of the object does not match the name in the URL")
            write = store.update_status if sub == "status" else store.update
            if method == "PUT":
                return 200, server.call(lambda: write(body))
            if method == "PATCH":
                if self.headers.get("Content-Type", "").split(";")[0] not in (
                        "application/merge-patch+json", "application/strategic-merge-patch+json"):
                    raise ApiError("UnsupportedMediaType", "only JSON merge patches are served")

                def patch() -> Obj:
                    stored = store.get(kind, name, namespace)
                    if stored is None:
                        raise ApiError("NotFound", f'{API_KINDS[kind].plural} "{name}" not found')
                    return write(merge_patch(stored, body))
                return 200, server.call(patch)
            raise ApiError("MethodNotAllowed", f"{method} is not served here")

        @staticmethod
        def _create(obj: Obj, namespace: str | None) -> Obj:
            store = server.store
            if namespace not in (None, "default") and store.get("Namespace", namespace) is None:
                raise ApiError("NotFound", f'namespaces "{namespace}" not found')
            return store.create(obj)

        def _chunk(self, payload: Obj) -> None:
            data = json.dumps(payload).encode() + b"\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _watch(self, query: Query, params: dict[str, str]) -> None:
            """A watch stream: ADDED for what exists (without a resourceVersion), then every change. With
            allowWatchBookmarks, a BOOKMARK carrying the current resourceVersion follows every batch of changes
            that did not end with one the watch sent: it tells a client that its stream has passed that
            version even when no object it watches changed (a client may rely on that, not on its timing)."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            deadline = time.monotonic() + float(params.get("timeoutSeconds") or DEFAULT_WATCH_SECONDS)
            since = params.get("resourceVersion") or "0"
            bookmarks = params.get("allowWatchBookmarks") in ("true", "1")
            try:
                with server.changed:
                    cursor = server.revision()
                    initial = server.store.list(query.kind, query.namespace) if since == "0" else []
                if since != "0":
                    cursor = int(since)
                for obj in initial:
                    if query.wants(obj):
                        self._chunk({"type": "ADDED", "object": obj})
                while (remaining := deadline - time.monotonic()) > 0:
                    with server.changed:
                        if server.revision() <= cursor:
                            server.changed.wait(timeout=min(remaining, 1.0))
                        events = server.events_after(cursor)
                        cursor = server.revision()
                    sent = None
                    for event in events:
                        if query.wants(event.object):
                            self._chunk({"type": event.type, "object": event.object})
                            sent = event
                    if bookmarks and events and sent is not events[-1]:
                        self._chunk({"type": "BOOKMARK", "object": _bookmark(query.kind, cursor)})
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler
