"""CEL device selectors as kube-apiserver compiles them and the DRA allocator evaluates them (KEP-4381 "CEL in
selectors", resource.k8s.io/v1 `CELDeviceSelector`), on Google's cel-cpp through cel-expr-python.

One declaration of the DRA CEL environment, in two forms. The *checking* form types the `device` variable as
upstream declares it: `driver` a string, `attributes` a map of domains to maps of attribute values of any type,
`capacity` a map of domains to maps of `kubernetes.Quantity`, `allowMultipleAllocations` a bool (only with
DRAConsumableCapacity), plus the Kubernetes `quantity()` and `semver()` libraries over their own opaque types and
`includes()` (upstream's 1.37 environment has it whatever DRAListTypeAttributes says, 1.36's only with that gate on:
`CelFeatures.includes`). cel-expr-python has no object types, so `device`'s fields are declared as the qualified
variables `device.driver`, `device.attributes`, ...; CEL's name resolution gives `device.driver` its type, and a
misspelt field is an undeclared name. The checker refuses what upstream's does: a result that is not bool (or dyn),
`quantity == string`, `quantity > int`, undeclared names. The *runtime* form declares the same functions over small
tagged maps (Python implementations cannot take opaque values); the checked program is handed to it as it is
(`serialize` / `deserialize`), so the allocator runs exactly the program the checker typed. A domain the device has
nothing in reads as an empty map, an unknown name is an evaluation error; a list-type attribute is a CEL list, and
`includes()` holds when a list attribute contains the value or a scalar one equals it. Each distinct expression is
compiled once per environment; results are cached per (expression, device).

What upstream accepts and cel-expr-python cannot do (ordering across int/uint/double, two-variable
comprehensions, the lists, sets, regex, URL, IP/CIDR and format libraries, `device` used as a value) is reported
as `CelUnsupported`: validation warns that it could not check it, the allocator treats it as a compile error.

The package, one module per job: `environments` (the two forms and the compiler, `check`), `library` (the
Kubernetes quantity and semver libraries, `includes()`, the `device` input), `errors` (compile and evaluation
errors in upstream's words), `engine` (the allocator's cached evaluation) and `sandbox` (the child process for
amplifying expressions)."""

from draconform.kube.cel.engine import SelectorEngine
from draconform.kube.cel.environments import (
    DEVICE_FIELDS,
    MAX_EXPRESSION_LENGTH,
    CelFeatures,
    CompiledSelector,
    check,
    environment,
    has_includes,
)
from draconform.kube.cel.errors import COMPILE_ERROR, CelError, CelUnsupported, abbreviate
from draconform.kube.cel.library import device_input, quantity_value, semver_value

__all__ = [
    "COMPILE_ERROR", "DEVICE_FIELDS", "MAX_EXPRESSION_LENGTH", "CelError", "CelFeatures", "CelUnsupported",
    "CompiledSelector", "SelectorEngine", "abbreviate", "check", "device_input", "environment", "has_includes",
    "quantity_value", "semver_value",
]
