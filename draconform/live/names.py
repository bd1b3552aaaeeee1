"""A live scenario's names, the steps' view <-> the cluster's (see `draconform.live.sut`): the scenario's own
namespace for the steps' "default", cluster-scoped objects named `<id>-<name>` in every field that names one
(metadata.name, deviceClassName, nodeName, the hostname label and metadata.name node selectors, the extended
resource named after a class, a pool), the cluster's own driver under test, node and class standing for the
scenario's, the labels that mark what the scenario wrote, and its pods kept to its own nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draconform.live.kube import KINDS
from draconform.sut import Obj, copy_object

SCENARIO_LABEL = "draconform.io/scenario"
RUN_LABEL = "draconform.io/run"  # the run a scenario's objects belong to: what the run's final check looks for
STEPS_NAMESPACE = "default"  # the namespace the steps write; each scenario's own namespace in the cluster
# Cluster-scoped kinds a scenario may create (all but Namespace): named and cleaned up per scenario.
CLUSTER_KINDS = frozenset(kind for kind, info in KINDS.items() if not info.namespaced and kind != "Namespace")
HOSTNAME_LABEL = "kubernetes.io/hostname"
CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"  # + a class name: the class as a resource
MAX_NAME = 253


class ScenarioNames:
    """How one scenario's objects are named in the cluster and read back under the scenario's names; the driver
    under test adopted by the scenario (`aliases`, `driver_aliases`, `own_node`) is noted here by `LiveSystem`."""

    def __init__(self, scenario: str, run: str, namespace: str) -> None:
        self.scenario, self.run, self.namespace = scenario, run, namespace
        self.prefix = f"{scenario}-"
        # The scenario's names for the cluster's own driver under test, its node and class -> the cluster's names.
        self.aliases: dict[str, str] = {}
        self.own_node: str | None = None  # the driver under test's node, which the scenario's pods are kept to
        self.driver_aliases: dict[str, str] = {}

    def out(self, name: str) -> str:
        if name in self.aliases:
            return self.aliases[name]
        return self.prefix + name if name and len(self.prefix + name) <= MAX_NAME else name

    def back(self, name: str) -> str:
        for alias, real in self.aliases.items():
            if name == real:
                return alias
        return name.removeprefix(self.prefix)

    def driver_out(self, driver: str) -> str:
        return self.driver_aliases.get(driver, driver)

    def driver_back(self, driver: str) -> str:
        return next((alias for alias, real in self.driver_aliases.items() if real == driver), driver)

    def map(self, obj: Obj, rename: Callable[[str], str], namespace: str,
             rename_driver: Callable[[str], str]) -> Obj:
        """Every field naming a cluster-scoped object or the driver under test renamed, and the namespace set."""
        obj = copy_object(obj)
        meta = obj.setdefault("metadata", {})
        kind = obj.get("kind", "")
        if kind in CLUSTER_KINDS and meta.get("name"):
            meta["name"] = rename(meta["name"])
        if KINDS.get(kind) is not None and KINDS[kind].namespaced:
            meta["namespace"] = namespace
        own_drivers = frozenset(self.driver_aliases) | frozenset(self.driver_aliases.values())
        rename_references(obj, rename, rename_driver if self.driver_aliases else None, own_drivers)
        return obj

    def to_cluster(self, obj: Obj) -> Obj:
        mapped = self.map(obj, self.out, self.namespace, self.driver_out)
        mapped["metadata"].setdefault("labels", {}).update(self.labels())
        if mapped.get("kind") == "Pod" and not self.aliases and isinstance(mapped.get("spec"), dict):
            # Scheduled only onto the scenario's own nodes (they carry its label), never onto a node of a
            # scenario running beside it; a scenario on the cluster's own driver's node runs alone instead.
            selector = mapped["spec"].get("nodeSelector")
            if selector is None or isinstance(selector, dict):
                mapped["spec"]["nodeSelector"] = {**(selector or {}), SCENARIO_LABEL: self.scenario}
        elif (mapped.get("kind") == "Pod" and self.own_node is not None and isinstance(mapped.get("spec"), dict)
              and not mapped["spec"].get("nodeName") and "affinity" not in mapped["spec"]):
            # A real driver publishes on every node (a DaemonSet): the scenario's pods stay on the node under
            # test, whose devices and plugin the scenario reads, as its own nodes would (issue 42)
            mapped["spec"]["affinity"] = pinned(self.own_node)
        return mapped

    def labels(self) -> dict[str, str]:
        return {SCENARIO_LABEL: self.scenario, RUN_LABEL: self.run}

    def from_cluster(self, obj: Obj) -> Obj:
        namespace = (obj.get("metadata") or {}).get("namespace")
        mapped = self.map(obj, self.back, STEPS_NAMESPACE if namespace == self.namespace else namespace or "",
                           self.driver_back)
        unprefix_messages(mapped, self.prefix)
        labels = mapped["metadata"].get("labels")
        if labels is not None:
            labels.pop(SCENARIO_LABEL, None)
            labels.pop(RUN_LABEL, None)
            if not labels:
                del mapped["metadata"]["labels"]
        if (mapped.get("kind") == "Pod" and self.own_node is not None
                and (obj.get("spec") or {}).get("affinity") == pinned(self.own_node)):  # as stored, unrenamed
            del mapped["spec"]["affinity"]
        selector = (mapped.get("spec") or {}).get("nodeSelector") if mapped.get("kind") == "Pod" else None
        if isinstance(selector, dict) and selector.get(SCENARIO_LABEL) == self.scenario:
            del selector[SCENARIO_LABEL]
            if not selector:
                del mapped["spec"]["nodeSelector"]
        return mapped


def rename_references(value: Any, rename: Callable[[str], str],
                       rename_driver: Callable[[str], str] | None = None,
                       own_drivers: frozenset[str] = frozenset()) -> None:
    """Rename, in place, every field below `value` that names a node, a device class or a pool (and, with
    `rename_driver`, a driver: of a slice, an allocation result, a device status, a configuration). The pools
    of `own_drivers` (the cluster's driver under test, by either name) are the cluster's own: kept."""
    if isinstance(value, list):
        for item in value:
            rename_references(item, rename, rename_driver, own_drivers)
        return
    if not isinstance(value, dict):
        return
    if rename_driver is not None and isinstance(value.get("driver"), str):
        value["driver"] = rename_driver(value["driver"])
    _rename_own_fields(value, rename)
    # A device's attributes are a map of the driver's own names: one may be called "driver" (a GPU's kernel
    # driver), whose value is an attribute, not a driver's name.
    driver = value.get("driver")
    if not isinstance(driver, str) or driver not in own_drivers:
        _rename_pool(value, rename)
    for key, item in value.items():
        if key != "metadata":
            rename_references(item, rename, rename_driver, own_drivers)
    if isinstance(value.get("metadata"), dict):
        rename_references({k: v for k, v in value["metadata"].items() if k == "labels"}, rename)


def _rename_pool(value: dict[str, Any], rename: Callable[[str], str]) -> None:
    """A pool is cluster-wide (a driver's pool of one name gathers the slices of every scenario): its name in a
    slice (`spec.pool.name`) and where a device is named by driver, pool and device (allocation results, device
    statuses, a DeviceTaintRule's selector) is the scenario's own."""
    pool = value.get("pool")
    if isinstance(pool, str):
        value["pool"] = rename(pool)
    elif isinstance(pool, dict) and isinstance(pool.get("name"), str):
        pool["name"] = rename(pool["name"])


def _rename_own_fields(value: dict[str, Any], rename: Callable[[str], str]) -> None:
    """Rename the fields of this one object (not those below it) that name a node or a device class: class and
    node names, extended resources named after a class, hostname labels and selector terms on node names."""
    for key in ("deviceClassName", "nodeName"):
        if isinstance(value.get(key), str):
            value[key] = rename(value[key])
    for key in ("requests", "limits"):  # a container's resources may name a class (KEP-5004)
        amounts = value.get(key)
        if isinstance(amounts, dict):
            value[key] = {_rename_resource(name, rename): amount for name, amount in amounts.items()}
    if isinstance(value.get("resourceName"), str):
        value["resourceName"] = _rename_resource(value["resourceName"], rename)
    for key in ("labels", "nodeSelector", "matchLabels"):
        labels = value.get(key)
        if isinstance(labels, dict) and isinstance(labels.get(HOSTNAME_LABEL), str):
            labels[HOSTNAME_LABEL] = rename(labels[HOSTNAME_LABEL])
    if value.get("key") in ("metadata.name", HOSTNAME_LABEL) and isinstance(value.get("values"), list):
        value["values"] = [rename(v) if isinstance(v, str) else v for v in value["values"]]


def _rename_resource(name: str, rename: Callable[[str], str]) -> str:
    """The extended resource a device class stands for implicitly is named after the class."""
    if name.startswith(CLASS_RESOURCE_PREFIX):
        return CLASS_RESOURCE_PREFIX + rename(name.removeprefix(CLASS_RESOURCE_PREFIX))
    return name


def unprefix_messages(value: Any, prefix: str) -> None:
    """Messages (of conditions, say) name cluster-scoped objects as the cluster calls them; show the
    scenario's names instead."""
    if isinstance(value, list):
        for item in value:
            unprefix_messages(item, prefix)
    elif isinstance(value, dict):
        if isinstance(value.get("message"), str):
            value["message"] = value["message"].replace(prefix, "")
        for item in value.values():
            unprefix_messages(item, prefix)


def pinned(node: str) -> Obj:
    """A pod's affinity to one node by name (nodes need no label for it)."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
