"""The compiled artifact, version 1 (spec §1.8, §7.3, §11.2).

An artifact is a plain JSON object with the reference's key order::

    {version, metricVersion, actions: [{ref, inputSchema, baseSchemaDigest}],
     quarantined: [{ref, baseSchemaDigest}], applied: [{kind, ref, detail}],
     gate: {passed, beforeScore, afterScore, reasons}, evidenceDigest}

Every entry is pinned to the digest of the declared schema it was compiled against and is
re-proved against the live schema at every consult, so a stale entry never mis-enforces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_entropy.core.canonical import file_text, schema_digest, stable_json_hash
from pytest_entropy.core.jscompat import code_unit_key, is_safe_integer_at_least, js_trim
from pytest_entropy.core.records import action_schemas

__all__ = [
    "COMPILED_SURFACE_VERSION",
    "MAX_COMPILED_SURFACE_PROPOSALS",
    "apply_compiled_surface",
    "compiled_surface_effect_changed",
    "effective_schema_for",
    "is_quarantined_ref",
    "is_tightening_overlay",
    "merge_compiled_surfaces",
    "parse_compiled_surface_artifact",
    "quarantined_ref_names",
    "serialize_artifact",
    "without_widening_overlays",
]

COMPILED_SURFACE_VERSION = 1
MAX_COMPILED_SURFACE_PROPOSALS = 256

Artifact = dict[str, Any]


def _trimmed(value: Any) -> str | None:
    """A non-blank string, trimmed as JavaScript trims; ``None`` otherwise."""
    if type(value) is not str:
        return None
    text = js_trim(value)
    return text or None


def parse_compiled_surface_artifact(value: Any) -> Artifact | None:
    """Validate and normalise an artifact (spec §1.8); ``None`` means "invalid".

    The result is rebuilt with the canonical key orders, string fields trimmed (not
    ``gate.reasons`` or schemas) and unknown keys dropped, so it re-serialises to the bytes
    the store writes.
    """
    if type(value) is not dict:
        return None
    version = value.get("version")
    if type(version) not in (int, float) or version != COMPILED_SURFACE_VERSION:
        return None
    metric_version = value.get("metricVersion")
    if not is_safe_integer_at_least(metric_version, 1):
        return None
    raw_actions = value.get("actions")
    raw_quarantined = value.get("quarantined")
    raw_applied = value.get("applied")
    gate = value.get("gate")
    if type(raw_actions) is not list or type(raw_quarantined) is not list:
        return None
    if type(raw_applied) is not list or len(raw_applied) > MAX_COMPILED_SURFACE_PROPOSALS:
        return None
    actions = []
    seen: set[str] = set()
    for entry in raw_actions:
        if type(entry) is not dict or type(entry.get("inputSchema")) is not dict:
            return None
        ref = _trimmed(entry.get("ref"))
        digest = _trimmed(entry.get("baseSchemaDigest"))
        if ref is None or digest is None or ref in seen:
            return None
        seen.add(ref)
        actions.append(
            {"ref": ref, "inputSchema": entry["inputSchema"], "baseSchemaDigest": digest}
        )
    quarantined = []
    for entry in raw_quarantined:
        if type(entry) is not dict:
            return None
        ref = _trimmed(entry.get("ref"))
        digest = _trimmed(entry.get("baseSchemaDigest"))
        if ref is None or digest is None:
            return None
        quarantined.append({"ref": ref, "baseSchemaDigest": digest})
    applied = []
    for entry in raw_applied:
        if type(entry) is not dict:
            return None
        kind = _trimmed(entry.get("kind"))
        ref = _trimmed(entry.get("ref"))
        detail = _trimmed(entry.get("detail"))
        if kind is None or ref is None or detail is None:
            return None
        applied.append({"kind": kind, "ref": ref, "detail": detail})
    if type(gate) is not dict or type(gate.get("passed")) is not bool:
        return None
    before, after, reasons = gate.get("beforeScore"), gate.get("afterScore"), gate.get("reasons")
    if type(before) not in (int, float) or type(after) not in (int, float):
        return None
    if type(reasons) is not list or any(type(reason) is not str for reason in reasons):
        return None
    evidence = _trimmed(value.get("evidenceDigest"))
    if evidence is None:
        return None
    return {
        "version": COMPILED_SURFACE_VERSION,
        "metricVersion": metric_version,
        "actions": actions,
        "quarantined": quarantined,
        "applied": applied,
        "gate": {
            "passed": gate["passed"],
            "beforeScore": before,
            "afterScore": after,
            "reasons": list(reasons),
        },
        "evidenceDigest": evidence,
    }


def serialize_artifact(artifact: Mapping[str, Any]) -> str:
    """The exact file text the store writes (spec §2.8)."""
    return file_text(artifact)


def apply_compiled_surface(
    live: Mapping[str, Any], artifact: Mapping[str, Any] | None
) -> Mapping[str, Any]:
    """The effective surface: proven overlays replace schemas, proven quarantines hide refs.

    Returns ``live`` itself when there is nothing to overlay (spec §7.3).
    """
    if artifact is None or (not artifact.get("actions") and not artifact.get("quarantined")):
        return live
    declared = action_schemas(live)
    overlays = {entry["ref"]: entry for entry in artifact.get("actions") or ()}
    quarantines = {entry["ref"]: entry for entry in artifact.get("quarantined") or ()}
    actions = []
    for action in live.get("actions") or ():
        ref = action["ref"]
        overlay = overlays.get(ref)
        if overlay is not None and schema_digest(declared[ref]) == overlay["baseSchemaDigest"]:
            actions.append({"ref": ref, "inputSchema": overlay["inputSchema"]})
            continue
        quarantine = quarantines.get(ref)
        if (
            quarantine is not None
            and schema_digest(declared[ref]) == quarantine["baseSchemaDigest"]
        ):
            continue
        actions.append(action)
    return {"version": 1, "actions": actions}


def _first(entries: Any, ref: str) -> Mapping[str, Any] | None:
    for entry in entries or ():
        if entry["ref"] == ref:
            return entry  # type: ignore[no-any-return]
    return None


def effective_schema_for(ref: str, live_schema: Any, artifact: Mapping[str, Any] | None) -> Any:
    """The schema a ref is enforced with: its first overlay when proven, else the live one."""
    if artifact is None:
        return live_schema
    entry = _first(artifact.get("actions"), ref)
    if entry is None or schema_digest(live_schema) != entry["baseSchemaDigest"]:
        return live_schema
    return entry["inputSchema"]


def is_quarantined_ref(ref: str, live_schema: Any, artifact: Mapping[str, Any] | None) -> bool:
    """Whether resolution must deny ``ref``: its first quarantine entry is proven."""
    if artifact is None:
        return False
    entry = _first(artifact.get("quarantined"), ref)
    return entry is not None and schema_digest(live_schema) == entry["baseSchemaDigest"]


def quarantined_ref_names(artifact: Mapping[str, Any] | None) -> set[str]:
    """Refs to hide from a model-facing catalogue (advisory: no digest proof)."""
    if artifact is None:
        return set()
    return {entry["ref"] for entry in artifact.get("quarantined") or ()}


def compiled_surface_effect_changed(
    before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> bool:
    """Whether the overlays or quarantines differ (ledger, gate and evidence do not count)."""
    old = {
        "actions": (before or {}).get("actions") or [],
        "quarantined": (before or {}).get("quarantined") or [],
    }
    new = {"actions": after["actions"], "quarantined": after["quarantined"]}
    return stable_json_hash(old) != stable_json_hash(new)


def is_tightening_overlay(live_schema: Any, overlay_schema: Any) -> bool:
    """Whether an overlay only narrows enums the live schema already declares.

    That is the only shape the compiler produces (spec §5.3: closed domains only), so an
    imported overlay of any other shape - looser types, new keys, a widened enum - is
    refused even when its base digest is proven. The check is structural and exact: every
    keyword equals the live schema's except top-level ``properties[k].enum``, which must
    be a non-empty subset of the live property's own ``enum``.
    """
    if type(live_schema) is not dict or type(overlay_schema) is not dict:
        return False
    if live_schema.keys() != overlay_schema.keys():
        return False
    for keyword, value in live_schema.items():
        if keyword != "properties" and stable_json_hash(value) != stable_json_hash(
            overlay_schema[keyword]
        ):
            return False
    live_properties = live_schema.get("properties")
    overlay_properties = overlay_schema.get("properties")
    if type(live_properties) is not dict or type(overlay_properties) is not dict:
        return stable_json_hash(live_properties) == stable_json_hash(overlay_properties)
    if live_properties.keys() != overlay_properties.keys():
        return False
    for name, live_property in live_properties.items():
        overlay_property = overlay_properties[name]
        if stable_json_hash(live_property) == stable_json_hash(overlay_property):
            continue
        if type(live_property) is not dict or type(overlay_property) is not dict:
            return False
        if live_property.keys() != overlay_property.keys():
            return False
        live_enum, overlay_enum = live_property.get("enum"), overlay_property.get("enum")
        if type(live_enum) is not list or type(overlay_enum) is not list or not overlay_enum:
            return False
        declared = {stable_json_hash(member) for member in live_enum}
        if any(stable_json_hash(member) not in declared for member in overlay_enum):
            return False
        for keyword, value in live_property.items():
            if keyword != "enum" and stable_json_hash(value) != stable_json_hash(
                overlay_property[keyword]
            ):
                return False
    return True


def without_widening_overlays(
    incoming: Mapping[str, Any], live: Mapping[str, Any]
) -> tuple[dict[str, Any], int]:
    """``incoming`` minus overlays that are not a proven tightening of the live schema.

    Returns the filtered artifact and how many overlays were refused. Entries whose base
    digest does not prove are left for :func:`merge_compiled_surfaces` to drop and count.
    """
    declared = action_schemas(live)
    kept = []
    refused = 0
    for entry in incoming.get("actions") or ():
        ref = entry["ref"]
        if (
            ref in declared
            and schema_digest(declared[ref]) == entry["baseSchemaDigest"]
            and not is_tightening_overlay(declared[ref], entry["inputSchema"])
        ):
            refused += 1
            continue
        kept.append(entry)
    return {**incoming, "actions": kept}, refused


def merge_compiled_surfaces(
    local: Mapping[str, Any] | None, incoming: Mapping[str, Any], live: Mapping[str, Any]
) -> dict[str, Any]:
    """Federation (spec §11.2): adopt only incoming entries proven against the live schema.

    Returns ``{"file", "droppedOverlays", "droppedQuarantines"}``. Local entries always win a
    conflict; an import can tighten the local surface but never widen it.
    """
    declared = action_schemas(live)

    def live_digest(ref: str) -> str | None:
        return schema_digest(declared[ref]) if ref in declared else None

    overlays = [dict(entry) for entry in (local or {}).get("actions") or ()]
    quarantined = [dict(entry) for entry in (local or {}).get("quarantined") or ()]
    overlay_refs = {entry["ref"] for entry in overlays}
    quarantine_refs = {entry["ref"] for entry in quarantined}
    dropped_overlays = dropped_quarantines = 0
    for entry in incoming.get("actions") or ():
        ref = entry["ref"]
        if ref in overlay_refs or ref in quarantine_refs:
            continue
        if live_digest(ref) != entry["baseSchemaDigest"]:
            dropped_overlays += 1
            continue
        overlays.append(dict(entry))
        overlay_refs.add(ref)
    for entry in incoming.get("quarantined") or ():
        ref = entry["ref"]
        if ref in overlay_refs or ref in quarantine_refs:
            continue
        if live_digest(ref) != entry["baseSchemaDigest"]:
            dropped_quarantines += 1
            continue
        quarantined.append(dict(entry))
        quarantine_refs.add(ref)
    overlays.sort(key=lambda entry: code_unit_key(entry["ref"]))
    quarantined.sort(key=lambda entry: code_unit_key(entry["ref"]))
    applied: list[dict[str, Any]] = []
    identities: set[str] = set()
    for entry in [*((local or {}).get("applied") or ()), *(incoming.get("applied") or ())]:
        if len(applied) >= MAX_COMPILED_SURFACE_PROPOSALS:
            break
        identity = f"{entry['kind']}:{entry['ref']}:{entry['detail']}"
        if identity in identities:
            continue
        identities.add(identity)
        applied.append(dict(entry))
    sources = [local["evidenceDigest"]] if local is not None else []
    sources.append(incoming["evidenceDigest"])
    basis = local if local is not None else incoming
    merged = {
        "version": COMPILED_SURFACE_VERSION,
        "metricVersion": basis["metricVersion"],
        "actions": overlays,
        "quarantined": quarantined,
        "applied": applied,
        "gate": basis["gate"],
        "evidenceDigest": stable_json_hash(
            {
                "actions": overlays,
                "quarantined": quarantined,
                "applied": applied,
                "sources": sources,
            }
        ),
    }
    return {
        "file": merged,
        "droppedOverlays": dropped_overlays,
        "droppedQuarantines": dropped_quarantines,
    }
