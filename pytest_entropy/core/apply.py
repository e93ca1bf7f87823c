"""What applying a compiled artifact to a declared surface changes, tool by tool. Pure.

``pytest-entropy apply`` turns the artifact's overlay into a change of the tool author's
own surface file. The rule is the reference's runtime rule (spec §7.3): an overlay or a
quarantine applies to a declared tool only when its ``baseSchemaDigest`` is the digest of
the tool's declared schema; a stale entry is never applied. Here the stale entries are
also named, so the command can say which tools it skipped.

:func:`json_patch` is the RFC 6902 difference of two JSON values, used for ``--patch``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.canonical import schema_digest, stable_json_hash
from pytest_entropy.core.records import action_schemas

__all__ = ["ApplyPlan", "StaleEntry", "json_patch", "json_pointer", "plan_apply"]


@dataclass(frozen=True, slots=True)
class StaleEntry:
    """An artifact entry that does not apply: ``kind`` is ``overlay`` or ``quarantine``."""

    ref: str
    kind: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"ref": self.ref, "kind": self.kind, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ApplyPlan:
    """Per declared ref: the overlaid schema, or removal (quarantine); and what is stale."""

    overlays: dict[str, Any] = field(default_factory=dict)
    removed: frozenset[str] = frozenset()
    stale: tuple[StaleEntry, ...] = ()


def _by_ref(entries: Any) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for entry in entries or ():
        out[entry["ref"]] = entry  # later duplicates win, as apply_compiled_surface reads
    return out


def plan_apply(surface: Mapping[str, Any], artifact: Mapping[str, Any] | None) -> ApplyPlan:
    """Which declared tools the artifact overlays or quarantines, as
    :func:`~pytest_entropy.core.artifact.apply_compiled_surface` decides, and the entries
    it skips because their base digest does not match (or their tool is not declared)."""
    if artifact is None:
        return ApplyPlan()
    declared = action_schemas(surface)
    digests = {ref: schema_digest(schema) for ref, schema in declared.items()}
    overlays_in = _by_ref(artifact.get("actions"))
    quarantined_in = _by_ref(artifact.get("quarantined"))
    overlays: dict[str, Any] = {}
    removed: set[str] = set()
    for ref in declared:
        overlay, quarantine = overlays_in.get(ref), quarantined_in.get(ref)
        if overlay is not None and overlay["baseSchemaDigest"] == digests[ref]:
            overlays[ref] = overlay["inputSchema"]
        elif quarantine is not None and quarantine["baseSchemaDigest"] == digests[ref]:
            removed.add(ref)
    stale = []
    for kind, entries in (("overlay", overlays_in), ("quarantine", quarantined_in)):
        for ref, entry in entries.items():
            if ref not in declared:
                stale.append(StaleEntry(ref, kind, "the tool is not in the surface"))
            elif entry["baseSchemaDigest"] != digests[ref]:
                stale.append(
                    StaleEntry(
                        ref,
                        kind,
                        "the artifact was compiled against another schema of this tool"
                        " (base schema digest differs)",
                    )
                )
    return ApplyPlan(overlays, frozenset(removed), tuple(stale))


def json_pointer(tokens: tuple[Any, ...] | list[Any]) -> str:
    """The RFC 6901 pointer of a path of keys and indexes."""
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in tokens)


def _same(before: Any, after: Any) -> bool:
    return type(before) is type(after) and stable_json_hash(before) == stable_json_hash(after)


def json_patch(before: Any, after: Any, path: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """RFC 6902 operations turning ``before`` into ``after`` (at ``path`` in a document).

    Objects are compared key by key (``remove``, ``add``, and recursion into keys both
    hold); anything else that differs, arrays included, is one ``replace``.
    """
    if _same(before, after):
        return []
    if type(before) is dict and type(after) is dict:
        ops: list[dict[str, Any]] = []
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": json_pointer((*path, key))})
        for key, value in after.items():
            if key not in before:
                ops.append({"op": "add", "path": json_pointer((*path, key)), "value": value})
            else:
                ops.extend(json_patch(before[key], value, (*path, key)))
        return ops
    return [{"op": "replace", "path": json_pointer(path), "value": after}]
