"""What goes wrong with a CEL selector, worded as kube-apiserver words it: compile errors (upstream's reason for a
checker error, or `CelUnsupported` where only draconform's CEL library lacks what upstream's environment has) and
evaluation errors (a runtime error, the iteration budget)."""

from __future__ import annotations

import re
from collections.abc import Sequence


class CelError(Exception):
    """A selector failed to compile, evaluated to something other than a bool, or hit an evaluation error
    (unknown attribute, overflow, runaway comprehension). The allocator turns it into an AllocationError."""

    @property
    def reason(self) -> str:
        """The reason as kube-apiserver words it, without the "CEL compile error" this module adds."""
        return str(self).removeprefix(COMPILE_ERROR)


COMPILE_ERROR = "CEL compile error: "


class CelUnsupported(CelError):
    """A selector upstream's environment accepts but cel-expr-python cannot check or run (see the
    package docstring). Validation reports it as a warning; for the allocator it is a compile error like any other."""

    def __init__(self, reason: str) -> None:
        super().__init__(COMPILE_ERROR + reason)


UPSTREAM_ONLY_FUNCTIONS = frozenset({
    # Kubernetes' lists library (not cel-go's ext.Lists, which upstream does not load: slice() and the like are
    # refused there too), the sets extension (cel-cpp reports `sets` and the member as two undeclared names), the
    # regex, URL, IP, CIDR, format and image libraries
    "sum", "min", "max", "isSorted", "indexOf", "lastIndexOf",
    "sets", "sets.contains", "sets.equivalent", "sets.intersects", "contains", "equivalent", "intersects",
    "find", "findAll", "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
    "getQuery", "ip", "isIP", "cidr", "isCIDR", "family", "isCanonical", "isLoopback", "isGlobalUnicast",
    "isLinkLocalMulticast", "isLinkLocalUnicast", "isUnspecified", "containsIP", "containsCIDR", "masked",
    "prefixLength", "format", "format.named", "named", "validate", "image", "isImage", "containsDigest",
    "registry", "repository", "identifier", "tag", "digest",
})
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)'")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']*)' applied to '\((.*)\)'")
_NUMBERS = {"int", "uint", "double"}
_ORDERING = {"_<_", "_<=_", "_>_", "_>=_"}


def compile_error(message: str, fields: Sequence[str]) -> CelError:
    """Upstream's reason for a checker error; CelUnsupported where every issue is one upstream would have
    accepted (an expression with a real error as well is refused for that error)."""
    issues = [line.strip() for line in message.replace("[INVALID_ARGUMENT]", "").splitlines()
              if line.strip().startswith(("ERROR:", "INVALID_ARGUMENT: ERROR:"))]
    reasons: list[str] = []
    unsupported: list[str] = []
    for issue in issues or [message]:
        issue = issue.removeprefix("INVALID_ARGUMENT: ").removeprefix("ERROR: ")
        undeclared = _UNDECLARED.search(issue)
        overload = _NO_OVERLOAD.search(issue)
        if undeclared:
            name = undeclared.group(1)
            if name in UPSTREAM_ONLY_FUNCTIONS:
                unsupported.append(f"uses `{'sets' if name in ('contains', 'equivalent', 'intersects') else name}`, "
                                   "which upstream's environment has and draconform's CEL library (cel-expr-python) "
                                   "lacks")
                continue
            if name == "device":
                unsupported.append("uses `device` as a value; draconform's CEL library declares only its fields "
                                   f"({', '.join(f'device.{f}' for f in fields)})")
                continue
            if name.startswith("device."):
                field = name.split(".")[1]
                issue = issue.replace(undeclared.group(0), f"undefined field '{field}'")
            else:  # cel-cpp names the whole qualified name where cel-go names its first identifier
                issue = issue.replace(undeclared.group(0), f"undeclared reference to '{name.split('.')[0]}'")
            issue = issue.replace(" (in container '')", "")
        elif overload:
            function, arguments = overload.group(1), {a.strip() for a in overload.group(2).split(", ")}
            if function in UPSTREAM_ONLY_FUNCTIONS:
                unsupported.append(f"uses `{function}` as upstream's lists library declares it, which "
                                   "draconform's CEL library (cel-expr-python) lacks")
                continue
            if function in _ORDERING and len(arguments) > 1 and arguments <= _NUMBERS:
                unsupported.append(f"compares {' and '.join(sorted(arguments))} with {function.strip('_')}, which "
                                   "upstream allows and draconform's CEL library (cel-expr-python) cannot")
                continue
        reasons.append(issue)
    if unsupported and not reasons:
        return CelUnsupported("; ".join(dict.fromkeys(unsupported)))
    return CelError(f"{COMPILE_ERROR}compilation failed: " + "; ".join(f"ERROR: {reason}" for reason in reasons))


def runtime_error(message: str) -> CelError:
    """An evaluation error, its message on one line; the iteration budget said as such."""
    message = " ".join(message.split())
    if "budget" in message.lower():
        return CelError(f"CEL evaluation stopped: the expression exceeded its iteration budget ({message})")
    return CelError(f"CEL runtime error: {message}")


def abbreviate(expression: str, limit: int = 80) -> str:
    """An expression short enough for an error message."""
    flat = " ".join(expression.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")
