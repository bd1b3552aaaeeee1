"""The Kubernetes API as draconform uses it, through lightkube: the kinds DRA involves as generic resources
(plain dicts, so alpha fields no generated model knows survive the round trip), and the API server's
refusals as the seam's `ApiError`. The live system under test and the served reference's components both
talk to a cluster through this one client."""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from lightkube import ApiError as LightkubeApiError
from lightkube import Client, KubeConfig
from lightkube.core import decoders
from lightkube.core import resource as lk_resource
from lightkube.core.generic_client import WatchDriver
from lightkube.core.internal_models import meta_v1
from lightkube.generic_resource import Generic, create_global_resource, create_namespaced_resource

from draconform.kube import kinds
from draconform.sut import ApiError, FieldCause, Obj, copy_object


@dataclass(frozen=True)
class KindInfo:
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _served(kind: str, info: kinds.KindInfo) -> KindInfo:
    group, _, version = info.api_version.rpartition("/")
    plural = kind.lower() + ("es" if kind.endswith("s") else "s")  # deviceclasses, pods, ...
    return KindInfo(group, version, plural, info.namespaced)


# Every kind draconform reads or writes (the one table of kinds), with where the API serves it.
KINDS: dict[str, KindInfo] = {kind: _served(kind, info) for kind, info in kinds.SERVED_KINDS.items()}


# lightkube's generic resource classes, built once here (building them is not thread-safe).
_RESOURCES: dict[str, Any] = {
    kind: (create_namespaced_resource if info.namespaced else create_global_resource)(
        info.group, info.version, kind, info.plural)
    for kind, info in KINDS.items()
}
# The older served versions of the DRA kinds, for an object a scenario writes in one of them: it goes to that
# version's endpoint, as kubectl sends it, never to v1's with a mismatched apiVersion.
OLDER_DRA_VERSIONS = ("v1beta1", "v1beta2")
_OLDER: dict[tuple[str, str], Any] = {
    (kind, f"{info.group}/{version}"): (create_namespaced_resource if info.namespaced else create_global_resource)(
        info.group, version, kind, info.plural)
    for kind, info in KINDS.items() if info.group == "resource.k8s.io" for version in OLDER_DRA_VERSIONS
}


def _prepare_decoders() -> None:
    """lightkube decodes through msgspec, which builds a type's decoder the first time it meets the type, without
    a lock: two threads meeting a type first at once can crash the process (a served component's watch threads
    did, on their first bookmarks). So every type a response is decoded into is met once here, on import."""
    meta_v1.ObjectMeta.from_dict({
        "name": "n", "namespace": "ns", "resourceVersion": "1", "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {"a": "b"}, "finalizers": ["f"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}],
        "managedFields": [{"manager": "m", "time": "2026-01-01T00:00:00Z"}]})
    decoders.decode_watch_event(b'{"type": "BOOKMARK", "object": {}}')
    decoders.decode_status(b'{"kind": "Status", "code": 409, "details": {"causes": [{"field": "f"}]}}')
    for resource in (*_RESOURCES.values(), *_OLDER.values()):
        decoders.decode_list(b'{"items": [], "metadata": {"resourceVersion": "1"}}', resource)


_prepare_decoders()


def _resource(kind: str, api_version: str | None = None) -> Any:
    if kind not in _RESOURCES:
        raise ApiError("NotFound", f"draconform does not know the kind {kind!r}")
    return _OLDER.get((kind, api_version or ""), _RESOURCES[kind])


def is_older_version(obj: Obj) -> bool:
    """Whether `obj` is written in an older served version of its kind (v1beta1 or v1beta2)."""
    return (str(obj.get("kind")), str(obj.get("apiVersion"))) in _OLDER


class _PodBinding(lk_resource.NamespacedSubResource, Generic):  # type: ignore[misc]  # as lightkube's own
    """pods/binding, the subresource a scheduler binds a pod to a node with (lightkube's generic resources
    only build status and scale subresources)."""

    _api_info = lk_resource.ApiInfo(
        resource=lk_resource.ResourceDef("", "v1", "Binding"),
        parent=lk_resource.ResourceDef("", "v1", "Pod"),
        plural="pods",
        verbs=["post"],
        action="binding",
    )


def load_config(kubeconfig: Path, context: str | None = None) -> KubeConfig:
    """The kubeconfig, checked now so a wrong path or context is one clear error before any scenario runs."""
    config = KubeConfig.from_file(kubeconfig)
    config.get(context)  # raises ConfigError for an unknown context
    return config


def api_error(error: LightkubeApiError) -> ApiError:
    """The API server's Status as the seam's error: its reason, message and field causes. A body refused while
    decoding (a 400) carries no causes; they are read from its message (`decoding_causes`)."""
    status = error.status
    details = status.details
    causes = [
        FieldCause(cause.field or "", cause.message or "", None, cause.reason or None)
        for cause in ((details.causes if details else None) or [])
    ]
    message = status.message or ""
    return ApiError(status.reason or str(status.code), message, causes or decoding_causes(message))


# What kube-apiserver's decoder says of a body it cannot decode into the kind ("<Kind> in version "<v>" cannot
# be handled as a <Kind>: ..."): under fieldValidation=Strict, every unknown or duplicate field at its path
# (list indices included); for a value of the wrong JSON type, Go's unmarshal error, whose field is the
# innermost struct's type name, a dot, and the path from the object's root (without list indices).
_STRICT_FIELD = re.compile(r'(unknown|duplicate) field "([^"]+)"')
_UNMARSHAL = re.compile(r"json: cannot unmarshal (\S+) into Go struct field \w+\.(\S+) of type (\S+)")


def decoding_causes(message: str) -> builtins.list[FieldCause]:
    """The fields a decoding refusal's message names, one cause each; none for any other message."""
    if "strict decoding error:" in message:
        strict = message.split("strict decoding error:", 1)[1]
        return [FieldCause(field, f"{what} field") for what, field in _STRICT_FIELD.findall(strict)]
    return [FieldCause(field, f"Invalid value: {value}: must be of type {go_type}")
            for value, field, go_type in _UNMARSHAL.findall(message)]


class Unanswered(ConnectionError):
    """The API server did not answer a request in time, or could not be reached."""


class KubeClient:
    """Synchronous API calls on the kinds above; objects cross as plain dicts. A request the server does not
    answer within `request_timeout` raises `Unanswered`, so nothing waits on a silent server for ever."""

    def __init__(self, config: KubeConfig, context: str | None = None, request_timeout: float = 10.0,
                 field_manager: str = "draconform", field_validation: str | None = None) -> None:
        """`field_validation` (Strict, Warn or Ignore) is sent with every create and update; None sends none,
        as client-go does (the API server then applies Warn)."""
        single = config.get(context)
        self.server = single.cluster.server if single is not None else "?"
        self.request_timeout = request_timeout
        self.field_validation = field_validation
        # Any: lightkube's overloads type generic resources by class, which the kind table cannot name statically
        self._client: Any = Client(single, timeout=httpx2.Timeout(request_timeout),
                              field_manager=field_manager, trust_env=False)

    def close(self) -> None:
        self._client.close()

    def get(self, kind: str, name: str, namespace: str | None = None, api_version: str | None = None) -> Obj | None:
        """`api_version`: another served version of a DRA kind to read it through (an older release's)."""
        try:
            return self._call(lambda: self._client.get(_resource(kind, api_version), name, **_ns(kind, namespace)),
                              f"get {kind}")
        except ApiError as error:
            if error.reason == "NotFound":
                return None
            raise

    def list(self, kind: str, namespace: str | None = None, labels: dict[str, str] | None = None,
             fields: dict[str, str] | None = None, api_version: str | None = None) -> tuple[builtins.list[Obj], str]:
        """The objects (all namespaces when `namespace` is None) and the list's resourceVersion."""
        scope = {"namespace": namespace or "*"} if KINDS[kind].namespaced else {}
        found = self._client.list(_resource(kind, api_version), labels=labels, fields=fields,  # type: ignore[arg-type]
                                  **scope)
        items = self._call(lambda: [_plain(obj) for obj in found], f"list {kind}")
        for item in items:  # list items carry no kind on the wire
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", api_version or KINDS[kind].api_version)
        return items, found.resourceVersion or ""

    def create(self, obj: Obj, field_validation: str | None = None) -> Obj:
        """`field_validation` overrides the client's for this write."""
        resource = _resource(obj["kind"], obj.get("apiVersion"))
        return self._call(lambda: self._write("post", resource(obj), validation=field_validation),
                          f"create {obj['kind']}")

    def update(self, obj: Obj, field_validation: str | None = None) -> Obj:
        resource = _resource(obj["kind"], obj.get("apiVersion"))
        return self._call(lambda: self._write("put", resource(obj), validation=field_validation),
                          f"update {obj['kind']}")

    def update_status(self, obj: Obj, field_validation: str | None = None) -> Obj:
        res = _resource(obj["kind"], obj.get("apiVersion")).Status
        meta = obj["metadata"]
        scope = _ns(obj["kind"], meta.get("namespace"))
        return self._call(lambda: self._write("put", res(obj), meta["name"], validation=field_validation, **scope),
                          f"update the status of {obj['kind']}")

    def bind(self, namespace: str, name: str, node: str) -> None:
        body: Obj = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": namespace},
                     "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        binding = _PodBinding(body)  # type: ignore[call-overload]
        self._call(lambda: self._client.create(binding, name, namespace=namespace), "bind Pod")

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None, api_version: str | None = None) -> None:
        self._call(lambda: self._client.delete(_resource(kind, api_version), name, grace_period=grace_period_seconds,
                                               **_ns(kind, namespace)), f"delete {kind}")

    def revision(self) -> int:
        """The API server's current resourceVersion: that of a list (a consistent read) that matches nothing.
        Kubernetes calls resourceVersions opaque; this, like the watch caches that compare them, reads them as
        the storage's revision numbers (etcd's, or the reference store's)."""
        _, version = self.list("Namespace", fields={"metadata.name": "draconform-revision-probe"})
        return int(version) if version.isdigit() else 0

    def watch(self, kind: str, resource_version: str, namespace: str | None = None, bookmarks: bool = False
              ) -> Iterator[tuple[str, Obj]]:
        """(type, object) from `resource_version` on; reconnects when the server closes the stream. With
        `bookmarks`, the stream also yields ("BOOKMARK", object with only a resourceVersion)."""
        scope = {"namespace": namespace or "*"} if KINDS[kind].namespaced else {}
        # lightkube's watch() has no allowWatchBookmarks; its generic client sends whatever parameters it is
        # given, and follows a bookmark's resourceVersion when it reconnects.
        generic = self._client._client
        request = generic.prepare_request(
            "list", res=_resource(kind), watch=True, **scope,
            params={"timeoutSeconds": 30, "resourceVersion": resource_version,
                    "allowWatchBookmarks": "true" if bookmarks else None})
        for event_type, obj in generic.watch(request):
            plain = _plain(obj)
            plain.setdefault("kind", kind)
            plain.setdefault("apiVersion", KINDS[kind].api_version)
            yield event_type, plain

    def history(self, kind: str, name: str, namespace: str | None, since: str, until: str | None,
                api_version: str | None = None, wait: float = 5.0) -> builtins.list[tuple[str, Obj]]:
        """Every stored version of one object after resourceVersion `since`, oldest first, as (event type, object):
        one watch from `since` (the API server's watch cache replays each change since then), read until the
        version `until` (the object's current resourceVersion; None: deleted, read to its DELETED event) or until
        the server closes the stream after `wait` seconds. A `since` the server no longer remembers raises
        ApiError Expired (410)."""
        generic = self._client._client
        scope = {"namespace": namespace} if KINDS[kind].namespaced else {}
        request = generic.prepare_request(
            "list", res=_resource(kind, api_version), watch=True, **scope,
            params={"resourceVersion": since, "timeoutSeconds": max(1, round(wait)),
                    "fieldSelector": f"metadata.name={name}"})
        driver = WatchDriver(request, generic._client.build_request)
        events: builtins.list[tuple[str, Obj]] = []
        response = generic.send(driver.get_request(timeout=httpx2.Timeout(self.request_timeout + wait)), stream=True)
        try:
            response.raise_for_status()
            for line in response.iter_lines():
                try:
                    event_type, obj = driver.process_one_line(line)
                except LightkubeApiError as error:
                    raise api_error(error) from None
                plain = _plain(obj)
                plain.setdefault("kind", kind)
                plain.setdefault("apiVersion", api_version or KINDS[kind].api_version)
                events.append((event_type, plain))
                version = plain["metadata"].get("resourceVersion")
                if (until is not None and version == until) or (until is None and event_type == "DELETED"):
                    break
        except LightkubeApiError as error:
            raise api_error(error) from None
        finally:
            response.close()
        return events

    def _write(self, method: str, obj: Any, name: str | None = None, namespace: str | None = None,
               validation: str | None = None) -> Any:
        """A create (post) or replace (put) as lightkube's Client sends it, with `fieldValidation`: lightkube's
        create and replace take no such argument, its generic client sends any query parameter given."""
        return self._client._client.request(method, obj=obj, name=name, namespace=namespace,
                                            params={"fieldValidation": validation or self.field_validation})

    def _call(self, request: Any, what: str) -> Any:
        try:
            result = request()
        except LightkubeApiError as error:
            raise api_error(error) from None
        except httpx2.TransportError as error:
            raise Unanswered(f"the API server at {self.server} did not answer ({what}) within "
                             f"{self.request_timeout:g}s: {type(error).__name__}: {error}") from None
        if isinstance(result, list):
            return result
        return _plain(result) if result is not None else None


def _ns(kind: str, namespace: str | None) -> dict[str, str]:
    return {"namespace": namespace or "default"} if KINDS[kind].namespaced else {}


def _plain(obj: Any) -> Obj:
    """A decoded generic resource as a plain JSON-like dict."""
    return copy_object(obj.to_dict() if hasattr(obj, "to_dict") else dict(obj))  # type: ignore[no-any-return]


# One client per cluster for the whole process (a run's scenarios follow one another in it): building one costs
# tens of milliseconds of CPU (its TLS context reads the CA bundle), once per scenario a sizeable part of a run's
# CPU on a loaded machine; sharing also keeps its connections open from one scenario to the next.
_CLIENTS: dict[tuple[str, str | None, float], KubeClient] = {}


def shared_client(kubeconfig: str, context: str | None, request_timeout: float) -> KubeClient:
    key = (kubeconfig, context, request_timeout)
    if key not in _CLIENTS:
        # kubectl's default: a field the API server does not know refuses the write (DRA-API/OBJECT-SCHEMA)
        _CLIENTS[key] = KubeClient(load_config(Path(kubeconfig), context), context, request_timeout,
                                   field_validation="Strict")
    return _CLIENTS[key]
