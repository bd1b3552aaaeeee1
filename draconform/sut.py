"""The seam between the conformance steps and the system under test (SUT).

Steps never import the reference implementation: they talk to a `SystemUnderTest`, which the
reference implementation provides and which a third-party driver, scheduler or controller can
provide in its place (`draconform run --sut module:factory`). Objects cross the seam as plain
JSON-like dicts shaped exactly like Kubernetes API objects.
"""

from __future__ import annotations

import builtins
import importlib
import marshal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

Obj = dict[str, Any]


def copy_object(value: Any) -> Any:
    """Deep copy of a JSON-like value. marshal writes and reads plain dicts, lists and scalars in C, about twice
    as fast as walking them in Python (format 2 shares no sub-object between two places, as a walk would not);
    a value it cannot write (a dict subclass, a datetime) is walked."""
    try:
        return marshal.loads(marshal.dumps(value, 2))
    except ValueError:
        return _walk_copy(value)


def _walk_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _walk_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk_copy(v) for v in value]
    return value

DEFAULT_SUT = "draconform.reference.sut:ReferenceSystem"

# Components whose feature gates and versions a scenario may set.
# "dra-driver" is the DRA driver under test: its feature gates say which API fields it may publish.
COMPONENTS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubelet", "dra-driver")


class Unsupported(Exception):
    """The SUT cannot do what a step asks (e.g. a live cluster cannot advance a fake clock).

    The harness reports the scenario as skipped with this message as the reason."""


class ApiError(Exception):
    """An API request was refused. `reason` mirrors the Kubernetes status reason."""

    def __init__(self, reason: str, message: str, causes: Sequence[FieldCause] = ()) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason  # NotFound, AlreadyExists, Conflict, Invalid, Forbidden
        self.message = message
        self.causes = list(causes)


# kube-apiserver's field error types as a Status cause's `reason`, by the words its message starts with
# (apimachinery's field.ErrorType: the message of a cause is "<type words>: <detail>").
CAUSE_REASONS = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Duplicate value": "FieldValueDuplicate",
    "Too many": "FieldValueTooMany",
    "Too long": "FieldValueTooLong",
    "Forbidden": "FieldValueForbidden",
    "Unsupported value": "FieldValueNotSupported",
    "Not found": "FieldValueNotFound",
    "Internal error": "InternalError",
}


def cause_reason(message: str) -> str | None:
    """The error type a cause's message names by its first words, None when it names none."""
    return next((reason for words, reason in CAUSE_REASONS.items() if message.startswith(words)), None)


@dataclass(frozen=True)
class FieldCause:
    """One reason an object was refused: the field path and what is wrong with it."""

    field: str
    message: str
    rule: str | None = None  # catalogue rule ID, where the check has one
    reason: str | None = None  # the Status cause's reason (FieldValueDuplicate, ...) as the API server gave it

    @property
    def error_type(self) -> str | None:
        """The cause's reason, or the one its message names (causes built in process carry only messages)."""
        return self.reason or cause_reason(self.message)


@dataclass(frozen=True)
class Event:
    """A Kubernetes event as a user would see it in `kubectl get events`."""

    kind: str
    namespace: str | None
    name: str
    type: str  # Normal or Warning
    reason: str
    message: str
    timestamp: datetime


@dataclass(frozen=True)
class PluginCall:
    """One call a driver's kubelet plugin received, as a recording proxy in front of its socket would see it:
    the method (NodePrepareResources or NodeUnprepareResources), the claims asked about ("namespace/name")
    with their UIDs, in request order, and when it arrived (cluster time)."""

    method: str
    claims: tuple[str, ...]
    uids: tuple[str, ...]
    time: datetime


@dataclass(frozen=True)
class PluginFault:
    """A fault a driver's kubelet plugin is told to show, for scenarios about how the kubelet copes.
    kind: "transient" (a per-claim error), "permanent" (a per-claim error marked permanent, KEP-5322: the
    driver found the claim's devices unusable), "hang" (the call does not return before the caller's
    deadline) or "crash" (the plugin dies in the middle of the call), and the answers listed with
    PLUGIN_FAULT_KINDS below. `method` is "prepare" or
    "unprepare"; `times` how many claims (or calls, for hang and crash) it affects, None for every one until
    cleared; `device` limits it to claims with that device allocated. `first_device` (with no `device`) fixes it
    on the devices of the first claim it affects, whichever the scheduler chose: from then on it affects only
    claims with one of those devices allocated, as a device that broke stays broken (KEP-5322's faulty device,
    judged without demanding which device an allocator picks among equals)."""

    kind: str
    method: str = "prepare"
    times: int | None = None
    device: str | None = None
    first_device: bool = False


PLUGIN_FAULT_KINDS: tuple[str, ...] = ("transient", "permanent", "hang", "crash")
# Answers of a plugin that a kubelet must read the KEPs' way (KEP-3063 NodePrepareResource Errors, KEP-5322 API):
# "not-found" fails the whole call with gRPC status NOT_FOUND; "permanent-without-error" answers a claim as
# prepared with permanent_error set and an empty error (a success); "error-with-devices" answers a claim with an
# error next to the devices it would have prepared (a failure: the devices are to be ignored).
PLUGIN_FAULT_KINDS += ("not-found", "permanent-without-error", "error-with-devices")


@dataclass(frozen=True)
class DriverUnderTest:
    """A DRA driver the cluster runs of its own, publishing its own devices rather than any it is handed: the
    cluster's names for the driver, the node whose kubelet plugin the harness calls, and the device class its
    devices are claimed through; and the namespace the cluster keeps the scenario's objects in, which the harness
    names in the claims it sends the plugin (the plugin reads them from the API server)."""

    driver: str
    node: str
    device_class: str
    namespace: str


@dataclass
class ComponentConfig:
    """How a scenario wants a component set up before it starts."""

    feature_gates: dict[str, bool] = field(default_factory=dict)
    version: str | None = None  # e.g. "1.33" for an older component in a skew scenario
    args: dict[str, Any] = field(default_factory=dict)  # e.g. kube-scheduler {"bindingTimeout": 600}


@dataclass(frozen=True)
class Patience:
    """How long a `Then` step keeps looking for what it expects, for one kind of observation."""

    timeout: float = 0.0  # seconds; 0 looks once (the reference: settle() has already made it true)
    interval: float = 0.1  # seconds between looks while the timeout lasts
    # Simulated seconds a SUT on a fake clock may move its clock on while an "eventually" observation does
    # not hold yet, so a component that reacts a few (simulated) seconds later than the reference still
    # conforms. Never used for observations of what has not happened yet or happens at an exact time.
    simulated: float = 0.0


# The kinds of observation a SUT may be given different patience for (keys of a live timeout config).
OBSERVATIONS = ("claim", "pod", "event", "object", "slice", "metric")


@runtime_checkable
class SystemUnderTest(Protocol):
    """Everything a step may do to, or observe of, a cluster."""

    # --- set-up -------------------------------------------------------------------------------
    def configure(self, component: str, config: ComponentConfig) -> None:
        """Set a component's gates, version and arguments; takes effect at its next (re)start."""

    def restart(self, component: str) -> None:
        """Restart a component: it rebuilds its state from the API objects only."""

    def stop(self, component: str) -> None:
        """Stop a component until its next `restart`, so a scenario can observe what another component
        writes on its own, before this one would repair or hide it. A SUT that cannot stop the component
        raises `Unsupported`."""

    def serve_api(self, api: str) -> None:
        """Which DRA API the cluster serves: "structured" (resource.k8s.io, the default) or "classic"
        (KEP-3063's cdi.k8s.io/v1alpha1 control-plane-controller protocol, which upstream removed in
        1.32). Called before any object exists. A SUT that cannot serve `api` raises `Unsupported`."""

    # --- API objects --------------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj: ...

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]: ...

    def update(self, obj: Obj) -> Obj: ...

    def update_status(self, obj: Obj) -> Obj: ...

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None:
        """`grace_period_seconds=0` is a force deletion (`kubectl delete --force --grace-period=0`): a pod bound
        to a node goes at once, without waiting for its kubelet."""
        ...

    def label_namespace(self, namespace: str, labels: Mapping[str, str]) -> None:
        """Add `labels` to `namespace` (the steps' "default", which a live SUT maps to the scenario's own), as a
        cluster administrator labels a namespace; kube-apiserver reads some of them: admin access to devices is
        allowed only in a namespace labelled `resource.kubernetes.io/admin-access: "true"`."""

    # --- the control plane at work ------------------------------------------------------------
    def settle(self) -> None:
        """Let controllers and the scheduler work until nothing more happens without time passing."""

    def finish_pod(self, name: str, namespace: str, phase: str) -> None:
        """The running pod's containers end, as its container runtime would report it: all with exit code 0 for
        "Succeeded", one with another code for "Failed". The pod's kubelet writes the phase (only a kubelet owns
        it); then settle. A SUT that cannot end a pod's containers raises `Unsupported`."""

    def advance_clock(self, seconds: float) -> None:
        """Let `seconds` of cluster time pass (timers fire), then settle."""

    def now(self) -> datetime: ...

    def run_controller(self, name: str, behaviour: Mapping[str, Any]) -> None:
        """Start a named external controller with a programmable behaviour, or give a running one a new
        behaviour. It must act on the cluster only through the API, as a deployed controller does.
        Names and behaviours the harness uses (KEP-5007; all delays in seconds of cluster time):
          "binding-controller": {driver, outcome: ready|fail|never, after, remove_failed_device}
          "dynamic-device-scaler": {pool_driver, node_driver, after, reschedule_condition}
        A SUT that cannot start such a controller (e.g. a vendor's own controller is the one under
        test) raises `Unsupported`, and the scenarios that need it are skipped."""

    def race_next_write(self, component: str, kind: str, name: str, status: Obj) -> None:
        """Another client races `component` for the object `kind`/`name` (in the scenario's namespace): just before
        the component's next write of it, the other client reads it afresh and writes its status with the fields of
        `status` in place of those it had, so the component's write meets a newer resourceVersion than the one it
        read, as when a second scheduler reserves a claim between this scheduler's read and its write. Only a SUT
        that can step in between a component's read and its write can do this; others raise `Unsupported`."""

    # --- a DRA driver -------------------------------------------------------------------------
    def run_driver(self, name: str, inventory: Sequence[Obj]) -> None:
        """Start the DRA driver `name`, or tell the running one that its devices are now `inventory`: the
        ResourceSlices it would publish with every feature it supports enabled. The driver then publishes
        what its configuration (component "dra-driver") and the cluster allow, through the API only. A SUT
        whose driver cannot be given an inventory raises `Unsupported`."""

    def driver_under_test(self, driver: str, node: str, device_class: str) -> DriverUnderTest | None:
        """Whether the cluster runs a DRA driver of its own, which publishes its own devices: then the scenario's
        names `driver`, `node` and `device_class` stand for that driver, a node where it publishes devices and its
        kubelet plugin runs, and a class selecting them, everywhere the scenario uses them from now on (objects
        written and read, plugin endpoints, CDI spec files), and the answer gives the cluster's own names. None
        when the SUT's driver publishes what it is handed (`run_driver`): the steps then create the node and the
        class and hand the driver its devices."""

    def kubelet_plugin_endpoint(self, driver: str, node: str) -> str:
        """Where the kubelet on `node` reaches `driver`'s kubelet plugin: `unix:///path/to/socket`, served
        over the DRAPlugin gRPC protocol (draconform.kubeletplugin speaks it)."""

    def kubelet_plugin_registration_endpoint(self, driver: str, node: str) -> str:
        """Where the kubelet's plugin watcher on `node` finds `driver`'s registration socket:
        `unix:///path/to/socket`, served over the kubelet's plugin registration gRPC protocol
        (pluginregistration v1; upstream's convention is /var/lib/kubelet/plugins_registry/<driver>-reg.sock).
        Through it the plugin says what it is, where its DRAPlugin socket is and which versions it serves."""

    def pool_name(self, driver: str, pool: str) -> str:
        """A pool of `driver` as the scenario names it, given the name the driver's plugin answered with: a SUT that
        gives each scenario's pools names of their own in a shared cluster names them back here, as it does in
        every object it returns; otherwise (and for the pools of a driver the cluster runs itself) the name
        itself."""

    def kubelet_plugin_calls(self, driver: str, node: str) -> builtins.list[PluginCall]:
        """Every call `driver`'s kubelet plugin on `node` has received so far, in arrival order, from the
        kubelet or from the harness. A SUT with no way to see them (no recording proxy) raises `Unsupported`."""

    def inject_plugin_fault(self, driver: str, node: str, fault: PluginFault | None) -> None:
        """Make `driver`'s kubelet plugin on `node` show `fault` from now on, in addition to the faults it
        already shows; None clears them all. Only a driver built for testing can do this; others raise
        `Unsupported`."""

    def node_cdi_spec_files(self, node: str) -> dict[str, str]:
        """The CDI specification files the container runtime on `node` reads (its /etc/cdi and /var/run/cdi),
        by file name, with their text, as they are now. A SUT that cannot read the node's disk raises
        `Unsupported`."""

    # --- observation --------------------------------------------------------------------------
    def events(self) -> builtins.list[Event]: ...

    def object_writes(self, kind: str, name: str, namespace: str | None = None) -> builtins.list[Obj]:
        """Every version of the object `kind`/`name` the API server stored since the scenario began, oldest first:
        the created object, then the result of each write (spec, status or metadata) that stored a new
        resourceVersion, as an audit log or a watch opened before the scenario would show them; a deletion adds
        no version. Versions of an earlier object under the same name are included (metadata.uid tells them
        apart). Steps count with it how often a component wrote an object, e.g. the kubelet a pod's status
        (KEP-5322). A SUT that keeps no such record raises `Unsupported`; a step finding a SUT without the method
        treats it the same way."""

    def metrics_text(self) -> str:
        """The scheduler's and controllers' metrics in Prometheus text exposition format."""

    def patience(self, observation: str) -> Patience:
        """How long a `Then` step reading `observation` (one of OBSERVATIONS) waits for it to hold: an
        eventually consistent cluster gets time, a SUT whose settle() finishes all work needs none."""


def load_factory(spec: str = DEFAULT_SUT) -> Callable[[], SystemUnderTest]:
    """Resolve `module:attribute` to a zero-argument factory of SUT instances."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--sut expects 'module:factory', got {spec!r}")
    factory = getattr(importlib.import_module(module_name), attribute)
    if not callable(factory):
        raise ValueError(f"--sut {spec!r} is not callable")
    return factory  # type: ignore[no-any-return]


# --- a vendor's starting point ------------------------------------------------------------------------------------

SEAM_METHODS: tuple[str, ...] = tuple(
    name for name, value in vars(SystemUnderTest).items() if not name.startswith("_") and callable(value)
)


def _not_implemented(name: str) -> Callable[..., Any]:
    def method(self: object, *args: Any, **kwargs: Any) -> Any:
        raise Unsupported(f"{type(self).__name__} does not implement {name}()")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = getattr(SystemUnderTest, name).__doc__
    return method


class BaseSystem:
    """A system under test that supports nothing yet: every seam method raises `Unsupported`, so each scenario
    is skipped with the name of the method it needs, until a subclass implements it. Subclass it, override the
    methods your implementation can do (their docstrings are those of `SystemUnderTest`), and point `draconform run
    --sut your_module:YourSystem` at the class; `draconform init-sut FILE` writes such a subclass to start from.

    `patience` answers "look once" (the right answer for a system whose `settle()` finishes all work); a live
    cluster should give its observations time instead. A `close()` method, if defined, is called after each
    scenario."""

    def patience(self, observation: str) -> Patience:
        return Patience()

    def driver_under_test(self, driver: str, node: str, device_class: str) -> DriverUnderTest | None:
        return None  # the driver under test is the one `run_driver` hands its devices

    def pool_name(self, driver: str, pool: str) -> str:
        return pool  # no pool is renamed


for _name in SEAM_METHODS:
    if _name not in vars(BaseSystem):
        setattr(BaseSystem, _name, _not_implemented(_name))


def missing_method(exc: BaseException) -> str | None:
    """The seam method a system under test lacks, when `exc` is the AttributeError of calling it (a SUT need not
    subclass `BaseSystem`): that is "unsupported", not a broken harness."""
    if not isinstance(exc, AttributeError) or exc.name not in SEAM_METHODS:
        return None
    owner = getattr(exc, "obj", None)
    if owner is None or type(owner).__module__ == "builtins":
        return None
    return f"{type(owner).__name__} does not implement {exc.name}()"
