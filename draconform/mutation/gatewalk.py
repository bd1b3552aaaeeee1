"""The walk over the catalogue's gated rules (issue 39), drawn from the feature files so that it cannot drift:
for each rule whose `gates:` name a gate beyond DynamicResourceAllocation and each such gate, a scenario of the
rule with the gate on, one with it off (its own, or the rule named in COVERED_BY that carries the gate-off side,
with the reason), whether a row runs at a release before the gate's default changed (for gates whose default
changed at 1.33 to 1.37), and the gate pairs (`known_bad.defects.gate_pair`) of that gate.

A scenario row's setting of a gate is read from its steps, with the row's values put in: `GATE=on|off` (or
true/false), a quoted list naming the gate followed by on/off (`feature gates "A, B" off`), or KEP-5963's
`is "new, gate off" (GATE)`; a row that does not name the gate runs it at its default for the release it
names (the current one when it names none).
`python -m draconform.mutation.gatewalk` prints the table; tests/harness/test_gate_walk.py keeps
docs/suite-power.md's copy equal to it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from pytest_bdd.parser import Examples

from draconform.catalogue import Catalogue, load_catalogue
from draconform.kube.featuregates import CURRENT_RELEASE, GATE_HISTORY, release_tuple
from draconform.mutation.catalogue import VARIANTS
from draconform.mutation.known_bad.defects import pair_of
from draconform.paths import FEATURES_DIR
from draconform.suite.selection import Selection
from draconform.suite.tracing import RULE_TAG_PREFIX, feature_files, parse_feature, scenario_tags

BASE_GATE = "DynamicResourceAllocation"
RELEASE = re.compile(r'(?:version|as|release|Kubernetes|scheduler|kubelet|apiserver) "?(1\.[0-9]+)\b')
LOW, HIGH = (1, 33), (1, 37)  # default changes the walk asks a row on each side of

# A rule whose own scenarios never set a gate off, and the rule whose scenarios carry that side for it: the
# gate-off behaviour of the first is wholly the second's (the field is dropped, the feature does not start).
# Keyed by catalogue (KEP) and gate, or by rule and gate where one rule's reason is its own (looked up first);
# the reason is printed with it. DRA-API, KEP-4381, KEP-5004, KEP-5075, KEP-5322 and KEP-5963 need no entry: each of
# their gated rules has gate-off rows of its own (features/*/gates-off.feature and beside the rule).
COVERED_BY: dict[tuple[str, str], tuple[str, str]] = {
    # KEP-5007: every rule of the flow has own gate-off rows (features/kep-5007/gates-off.feature and the rules'
    # outlines) but these, whose gate-off side is nothing of their own (docs/suite-power.md says why per rule).
    **{(rule, gate): cover for rule, cover in {
        "KEP-5007/TIMEOUT-CONFIGURABLE": (
            "KEP-5007/GATES-BOTH-REQUIRED", "with the gate off upstream's scheduler refuses a bindingTimeout "
            "argument at start-up, and no wait starts for a timeout to end"),
        "KEP-5007/METRIC-PREBIND-DURATION": (
            "KEP-5007/GATES-BOTH-REQUIRED", "nothing waits, so nothing is observed; upstream has no such histogram "
            "under either setting"),
        "KEP-5007/CONTROLLER-REPORTS-READINESS": (
            "KEP-5007/GATES-BOTH-REQUIRED", "a controller's rule: with the gate off no claim carries conditions "
            "for it to report, and the pod binds without them"),
        "KEP-5007/CONTROLLER-FAILURE-NOT-REPICKED": (
            "KEP-5007/GATES-BOTH-REQUIRED", "a controller's rule: with the gate off no device with conditions is "
            "picked, so none fails to be re-picked"),
        "KEP-5007/SKEW-OLDER-SCHEDULER": (
            "KEP-5007/SKEW-GATE-OFF-SCHEDULER", "an older scheduler has no gate to turn off; the current one with "
            "the gate off is that rule"),
    }.items() for gate in ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")},
    ("KEP-5007", "DRADeviceBindingConditions"): (
        "KEP-5007/GATES-BOTH-REQUIRED", "with either gate off the scheduler never picks a device with binding "
        "conditions, so none of the binding flow runs"),
    ("KEP-5007", "DRAResourceClaimDeviceStatus"): (
        "KEP-5007/GATES-BOTH-REQUIRED", "from 1.35 no component starts with this gate off and the binding gate "
        "on (a gate dependency), so its off side is the binding gate's; a 1.34 scheduler, the last that could, "
        "never picks a device with binding conditions"),
}


@dataclass(frozen=True)
class Row:
    """One expanded scenario row: where it is, the rules it cites and the text of its steps."""

    cite: str  # `folder/file.feature` *Scenario name*
    rules: tuple[str, ...]
    text: str


def _rows(catalogue: Catalogue) -> Iterator[Row]:
    selection = Selection.create(FEATURES_DIR)
    for path in feature_files(selection):
        relative = selection.relative(path)
        for template in parse_feature(path, selection).scenarios.values():
            lead = [template.rule.name.split()[0]] if template.rule is not None else []
            steps = [step.name for step in (*template.all_background_steps, *template.steps)]
            # a row cites the tags of its own Examples table only, as the run traces it
            tables: list[Examples | None] = [*template.examples] or [None]
            for table in tables:
                rules = lead + [tag.removeprefix(RULE_TAG_PREFIX) for tag in sorted(scenario_tags(template, table))
                                if tag.startswith(RULE_TAG_PREFIX)]
                for context in (table.as_contexts() if table is not None else None) or [{}]:
                    text = "\n".join(steps)
                    for key, value in context.items():
                        text = text.replace(f"<{key}>", str(value))
                    yield Row(f"`{relative}` *{template.name}*", tuple(r for r in rules if r in catalogue.rules),
                              text)


def settings(text: str, gate: str) -> set[str]:
    """"on" and/or "off": how a row's steps set `gate`; "default" when they never name it."""
    found: set[str] = set()
    for line in text.splitlines():
        if gate not in line:
            continue
        for value in re.findall(rf"\b{gate}\s*=\s*(on|off|true|false)\b", line, re.IGNORECASE):
            found.add("on" if value.lower() in ("on", "true") else "off")
        for value in re.findall(rf'"[^"]*\b{gate}\b[^"=]*"\s+(on|off)\b', line):
            found.add(value)
        for value in re.findall(rf"\b{gate}\b\s+(on|off|enabled|disabled)\b", line):
            found.add("on" if value in ("on", "enabled") else "off")
        # KEP-5963's skew steps: `kube-scheduler is "new, gate off" (GATE)`; "old" is a release without the gate
        for state in re.findall(rf'"([^"]*)" \({gate}\)', line):
            found.add("on" if state.endswith("gate on") else "off")
    return found or {"default"}


def _releases(text: str) -> set[tuple[int, int]]:
    return {release_tuple(found) for found in RELEASE.findall(text)}


def _on_by_default(gate: str, release: tuple[int, int]) -> bool:
    since, on_from = GATE_HISTORY[gate]
    return release >= release_tuple(since) and on_from is not None and release >= release_tuple(on_from)


def pairs_by_gate() -> dict[str, list[str]]:
    """gate -> the gate pairs (their common name) of every component."""
    found: dict[str, list[str]] = {}
    for variant in VARIANTS:
        pair = pair_of(variant)
        if pair is not None and variant.name.endswith("-as-if-on"):
            found.setdefault(pair[1], []).append(variant.name.removesuffix("-as-if-on"))
    return found


@dataclass(frozen=True)
class Walked:
    rule: str
    gate: str
    on: str  # a citation, or "no"
    off: str  # "own: <citation>", "via RULE: reason", or "no"
    before_change: str  # "yes", "no", or "-" (the default did not change at 1.33 to 1.37)
    pairs: tuple[str, ...]


def walk(catalogue: Catalogue | None = None) -> list[Walked]:
    catalogue = catalogue or load_catalogue()
    rows = list(_rows(catalogue))
    pairs = pairs_by_gate()
    current = release_tuple(CURRENT_RELEASE)
    own_off: dict[tuple[str, str], str] = {}
    walked: list[Walked] = []
    gated = [(rule, gate) for rule in sorted(catalogue.rules.values(), key=lambda rule: rule.id)
             for gate in rule.gates if gate != BASE_GATE]
    for rule, gate in gated:
        mine = [row for row in rows if rule.id in row.rules]
        if not mine:
            continue
        on = off = None
        before = False
        for row in mine:
            set_to = settings(row.text, gate)
            releases = _releases(row.text) or {current}
            if on is None and ("on" in set_to or ("default" in set_to
                                                  and any(_on_by_default(gate, r) for r in releases))):
                on = row.cite
            if off is None and "off" in set_to:
                off = row.cite
            _since, on_from = GATE_HISTORY[gate]
            if on_from is not None and "default" in set_to and any(r < release_tuple(on_from) for r in releases):
                before = True
        if off is not None:
            own_off[(rule.id, gate)] = off
        _since, on_from = GATE_HISTORY[gate]
        changed = on_from is not None and LOW <= release_tuple(on_from) <= HIGH
        walked.append(Walked(rule.id, gate, on or "no", f"own: {off}" if off else "no",
                             ("yes" if before else "no") if changed else "-", tuple(pairs.get(gate, ()))))
    result = []
    for entry in walked:
        if entry.off == "no":
            cover = COVERED_BY.get((entry.rule, entry.gate))
            cover = cover or COVERED_BY.get((entry.rule.split("/")[0], entry.gate))
            if cover is not None and (cover[0], entry.gate) in own_off:
                entry = Walked(entry.rule, entry.gate, entry.on, f"via {cover[0]}: {cover[1]}", entry.before_change,
                               entry.pairs)
        result.append(entry)
    return result


def table(walked: list[Walked] | None = None) -> str:
    """The walk as the Markdown table docs/suite-power.md holds."""
    lines = ["| rule | gate | a row with it on | a row with it off | a row before its default changed | gate pairs |",
             "|---|---|---|---|---|---|"]
    for entry in walked if walked is not None else walk():
        pairs = ", ".join(f"`{name}`" for name in entry.pairs)
        lines.append(f"| {entry.rule} | {entry.gate} | {entry.on} | {entry.off} | {entry.before_change} | {pairs} |")
    return "\n".join(lines)


def summary(walked: list[Walked] | None = None) -> str:
    """Counts per catalogue: (rule, gate) entries, own gate-off rows, covered ones, none."""
    walked = walked if walked is not None else walk()
    counts: dict[str, list[int]] = {}
    for entry in walked:
        kep = entry.rule.split("/")[0]
        count = counts.setdefault(kep, [0, 0, 0, 0])
        count[0] += 1
        count[1 if entry.off.startswith("own") else 2 if entry.off.startswith("via") else 3] += 1
    lines = ["| catalogue | (rule, gate) | off: own row | off: via a named rule | off: none |", "|---|---|---|---|---|"]
    lines += [f"| {kep} | {a} | {b} | {c} | {d} |" for kep, (a, b, c, d) in sorted(counts.items())]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
    print()
    print(table())
