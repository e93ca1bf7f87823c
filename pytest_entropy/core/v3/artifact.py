"""The compiled artifact of metric v3: ``compiled.json`` version 2 (notes §1.8, §6.6, §8.2).

Metric v3 compiles *normal-form plans* (statically proven, capability-preserving rewrites of
mis-spelled arguments), never schema restrictions. A version-2 file therefore carries empty
``actions`` and ``quarantined`` lists beside its ``normalizations``::

    {version: 2, metricVersion: 3, actions: [], quarantined: [], normalizations: [plan...],
     applied: [{kind, ref, detail}], gate: {passed, beforeScore, afterScore, reasons},
     evidenceDigest}

A version-1 file (what metric v2 writes) stays readable under v3, but only as migration
data: its overlays and quarantines are inert (nothing here applies them), a merge drops and
counts them, and the next compile replaces the file with a version-2 one. Every plan is
re-proved against the live schema wherever it is used, so a stale or forged plan is refused
rather than trusted because it sits in the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pytest_entropy.core.artifact import (
    MAX_COMPILED_SURFACE_PROPOSALS,
)
from pytest_entropy.core.artifact import (
    parse_compiled_surface_artifact as parse_version_1_artifact,
)
from pytest_entropy.core.canonical import EMPTY_ARRAY_DIGEST, stable_json_hash
from pytest_entropy.core.jscompat import code_unit_key, is_finite_number
from pytest_entropy.core.records import action_schemas
from pytest_entropy.core.v3.normal_form import (
    MAX_NORMAL_FORM_PLANS,
    is_normal_form_plan,
    proves_normal_form_plan,
)

__all__ = [
    "COMPILED_SURFACE_VERSION_2",
    "METRIC_VERSION_3",
    "applied_entries",
    "apply_compiled_surface",
    "comparable_compiled_surface_score",
    "compiled_surface_effect_changed",
    "effective_schema_for",
    "empty_compiled_surface",
    "is_quarantined_ref",
    "merge_compiled_surfaces",
    "parse_compiled_surface_artifact",
    "plans_of",
    "quarantined_ref_names",
]

COMPILED_SURFACE_VERSION_2: Final = 2
METRIC_VERSION_3: Final = 3

Artifact = dict[str, Any]


def _default_gate(score: float = 0) -> dict[str, Any]:
    return {"passed": True, "beforeScore": score, "afterScore": score, "reasons": []}


def empty_compiled_surface() -> Artifact:
    """A version-2 artifact with nothing in it, in the key order a compile writes."""
    return {
        "version": COMPILED_SURFACE_VERSION_2,
        "metricVersion": METRIC_VERSION_3,
        "actions": [],
        "quarantined": [],
        "normalizations": [],
        "applied": [],
        "gate": _default_gate(),
        "evidenceDigest": EMPTY_ARRAY_DIGEST,
    }


def applied_entries(plans: list[Any]) -> list[dict[str, str]]:
    """The ledger of a version-2 artifact: one ``normal-form`` entry per plan (first 256)."""
    return [
        {"kind": "normal-form", "ref": plan["ref"], "detail": f"{len(plan['rules'])} proven rules"}
        for plan in plans[:MAX_COMPILED_SURFACE_PROPOSALS]
    ]


def _valid_plans(value: Any) -> bool:
    if type(value) is not list or len(value) > MAX_NORMAL_FORM_PLANS:
        return False
    if not all(is_normal_form_plan(plan) for plan in value):
        return False
    return len({plan["ref"] for plan in value}) == len(value)


def parse_compiled_surface_artifact(value: Any) -> Artifact | None:
    """Validate and normalise a version-1 or version-2 artifact; ``None`` means "invalid".

    A version-2 file must carry at most 1000 guard-valid plans with distinct refs and empty
    legacy lists. The common fields follow the version-1 rules (trimmed strings, no duplicate
    overlay ref), and the gate's scores must be finite. A loaded version-2 file keeps its
    plans as they are and orders its keys ``version, normalizations, metricVersion, ...``
    (the upstream loader's order); a version-1 file loses any ``normalizations`` key.
    """
    if type(value) is not dict:
        return None
    version = value.get("version")
    if type(version) not in (int, float) or version not in (1, COMPILED_SURFACE_VERSION_2):
        return None
    if version == COMPILED_SURFACE_VERSION_2:
        if not _valid_plans(value.get("normalizations")):
            return None
        actions, quarantined = value.get("actions"), value.get("quarantined")
        if type(actions) is not list or actions or type(quarantined) is not list or quarantined:
            return None
    common = parse_version_1_artifact({**value, "version": 1})
    if common is None:
        return None
    gate = common["gate"]
    if not is_finite_number(gate["beforeScore"]) or not is_finite_number(gate["afterScore"]):
        return None
    if version == 1:
        return common
    out: Artifact = {
        "version": COMPILED_SURFACE_VERSION_2,
        "normalizations": value["normalizations"],
    }
    out.update((key, item) for key, item in common.items() if key != "version")
    return out


def plans_of(artifact: Mapping[str, Any] | None) -> list[Any]:
    """The plans of a version-2 artifact; a version-1 file (or none) has none."""
    if artifact is None or artifact.get("version") != COMPILED_SURFACE_VERSION_2:
        return []
    return list(artifact.get("normalizations") or ())


# The compatibility helpers of metric v3 are inert by design: neither a legacy artifact nor
# an imported one may take a capability away from the declared surface.


def apply_compiled_surface(
    live: Mapping[str, Any], artifact: Mapping[str, Any] | None = None
) -> Mapping[str, Any]:
    """The effective surface under v3: the live surface itself, whatever the artifact."""
    return live


def effective_schema_for(
    ref: str, live_schema: Any, artifact: Mapping[str, Any] | None = None
) -> Any:
    """The schema a ref is enforced with under v3: always its live declared schema."""
    return live_schema


def quarantined_ref_names(artifact: Mapping[str, Any] | None = None) -> set[str]:
    """Refs hidden from a catalogue under v3: none."""
    return set()


def is_quarantined_ref(
    ref: str, live_schema: Any, artifact: Mapping[str, Any] | None = None
) -> bool:
    """Whether resolution denies a ref under v3: never."""
    return False


def compiled_surface_effect_changed(
    before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> bool:
    """Whether the plans in force differ (a version-1 file counts as having none)."""
    return stable_json_hash(plans_of(before)) != stable_json_hash(plans_of(after))


def comparable_compiled_surface_score(
    artifact: Mapping[str, Any] | None, metric_version: int
) -> float | None:
    """The artifact's ``gate.afterScore`` when it is a version-2 file of ``metric_version``."""
    if artifact is None or artifact.get("version") != COMPILED_SURFACE_VERSION_2:
        return None
    if artifact.get("metricVersion") != metric_version:
        return None
    score: float = artifact["gate"]["afterScore"]
    return score


def merge_compiled_surfaces(
    local: Mapping[str, Any] | None, incoming: Mapping[str, Any], live: Mapping[str, Any]
) -> dict[str, Any]:
    """v3 federation: keep the plans that re-derive exactly from the live schemas.

    Plans of ``local`` come first, so a local plan wins a ref both files prove; a plan that
    does not prove (unknown ref, drifted schema, forged rules or digest) is dropped and
    counted, and does not block a proven one for the same ref. Every legacy overlay and
    quarantine of either file is dropped and counted. The result is a fresh version-2 file
    whose ledger and evidence digest come from the kept plans alone. Returns ``{file,
    droppedOverlays, droppedQuarantines, droppedNormalizations}``.
    """
    schemas = action_schemas(live)
    kept: dict[str, Any] = {}
    dropped_plans = 0
    for source in (local, incoming):
        if source is None or source.get("version") != COMPILED_SURFACE_VERSION_2:
            continue
        for plan in source.get("normalizations") or ():
            ref = plan.get("ref") if type(plan) is dict else None
            if type(ref) is not str or not proves_normal_form_plan(plan, schemas.get(ref)):
                dropped_plans += 1
                continue
            if len(kept) >= MAX_NORMAL_FORM_PLANS or ref in kept:
                continue
            kept[ref] = plan
    plans = sorted(kept.values(), key=lambda plan: code_unit_key(plan["ref"]))
    merged = empty_compiled_surface()
    merged["normalizations"] = plans
    merged["applied"] = applied_entries(plans)
    merged["evidenceDigest"] = stable_json_hash(plans)
    legacy = [source for source in (local, incoming) if source is not None]
    return {
        "file": merged,
        "droppedOverlays": sum(len(source.get("actions") or ()) for source in legacy),
        "droppedQuarantines": sum(len(source.get("quarantined") or ()) for source in legacy),
        "droppedNormalizations": dropped_plans,
    }
