"""The diff of two surface snapshots, decided by what the schemas accept.

Every change gets one class per tool and parameter path:

* ``loosened``: the tool now accepts a call it refused before (``after`` ⊄ ``before``);
* ``tightened``: it refuses a call it accepted before (``before`` ⊄ ``after``);
* ``added`` / ``removed``: a whole tool (path ``""``, rule ``tool``);
* ``neutral``: the schema text changed but not what it accepts (descriptions, titles, key
  or list order), rule ``annotation`` or ``equivalent``;
* ``unknown``: containment could not be decided; the same change is also in ``loosened``
  with rule ``undecided``, so a gate stays pessimistic.

One edit may both loosen and tighten (an enum value swapped for another): it is in both. A
loosening the author accepted (``accepted`` entries ``{ref, path, rule, reason}``) moves
from ``loosened`` to ``accepted`` (an accepted new tool stays in ``added`` and is listed in
``accepted`` too). The v2 static freedom is reported beside, never used to
decide a class (it prices an untyped parameter *below* a free string).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.containment import Finding, containment_findings, strip_annotations
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.fingerprint import static_freedom, surface_freedom_report
from pytest_entropy.core.jscompat import code_unit_key

__all__ = [
    "AcceptedLoosening",
    "SchemaChange",
    "SurfaceDiff",
    "accepted_from_value",
    "diff_snapshots",
]

FREEDOM_TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One classified change: the tool, the parameter path, the deciding rule, fragments;
    an undecided one also says why (``reason``)."""

    ref: str
    path: str
    rule: str
    before: Any = None
    after: Any = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {
            "ref": self.ref,
            "path": self.path,
            "rule": self.rule,
            "before": self.before,
            "after": self.after,
        }
        if self.reason:
            out["reason"] = self.reason
        return out

    def where(self) -> str:
        """``ref`` or ``ref:path``: how ``--entropy-accept`` names it."""
        return f"{self.ref}:{self.path}" if self.path else self.ref

    def text(self) -> str:
        """One line: ``ref:path: rule (before → after)``, or ``ref:path: undecided: reason
        (before → after)``."""
        before = canonical_json(self.before)
        after = canonical_json(self.after)
        if len(before) > 60:
            before = before[:57] + "..."
        if len(after) > 60:
            after = after[:57] + "..."
        rule = f"{self.rule}: {self.reason}" if self.reason else self.rule
        return f"{self.where()}: {rule} ({before} → {after})"


@dataclass(frozen=True, slots=True)
class AcceptedLoosening:
    """A loosening the author accepted, with the reason; ``path``/``rule`` empty: any."""

    ref: str
    path: str = ""
    rule: str = ""
    reason: str = ""

    def covers(self, change: SchemaChange) -> bool:
        return (
            self.ref == change.ref
            and (not self.path or self.path == change.path)
            and (not self.rule or self.rule == change.rule)
        )

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "path": self.path, "rule": self.rule, "reason": self.reason}


def accepted_from_value(value: Any, *, source: str | None = None) -> list[AcceptedLoosening]:
    """The ``accepted`` list of a baseline: ``[{ref, path?, rule?, reason}]``, checked."""
    if value is None:
        return []
    if type(value) is not list:
        raise EntropyInputError(
            "'accepted' must be a list of {ref, path, rule, reason}", source=source
        )
    out = []
    for position, entry in enumerate(value):
        if type(entry) is not dict or type(entry.get("ref")) is not str or not entry["ref"]:
            raise EntropyInputError(f"accepted entry {position} has no ref", source=source)
        fields = {}
        for name in ("path", "rule", "reason"):
            text = entry.get(name, "")
            if type(text) is not str:
                raise EntropyInputError(
                    f"accepted entry {position} ({entry['ref']}): {name!r} must be a string",
                    source=source,
                )
            fields[name] = text
        out.append(AcceptedLoosening(entry["ref"], **fields))
    return out


@dataclass(frozen=True, slots=True)
class SurfaceDiff:
    """The classified changes from one surface to another, and both freedom totals."""

    loosened: tuple[SchemaChange, ...] = ()
    tightened: tuple[SchemaChange, ...] = ()
    added: tuple[SchemaChange, ...] = ()
    removed: tuple[SchemaChange, ...] = ()
    neutral: tuple[SchemaChange, ...] = ()
    unknown: tuple[SchemaChange, ...] = ()
    accepted: tuple[SchemaChange, ...] = ()
    freedom_before: float = 0.0
    freedom_after: float = 0.0
    freedom_rises: tuple[str, ...] = field(default=())

    @property
    def freedom_rose(self) -> bool:
        """The freedom total rose, and not only through accepted loosenings."""
        return bool(self.freedom_rises)

    @property
    def failed(self) -> bool:
        """What a gate fails on: any loosening, or a freedom rise nobody accepted."""
        return bool(self.loosened) or self.freedom_rose

    def to_json(self) -> dict[str, Any]:
        def rows(changes: tuple[SchemaChange, ...]) -> list[dict[str, Any]]:
            return [change.to_json() for change in changes]

        return {
            "loosened": rows(self.loosened),
            "tightened": rows(self.tightened),
            "added": rows(self.added),
            "removed": rows(self.removed),
            "unknown": rows(self.unknown),
            "neutral": rows(self.neutral),
            "accepted": rows(self.accepted),
            "freedom": {"before": self.freedom_before, "after": self.freedom_after},
        }


def _schemas(surface: Mapping[str, Any], side: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for action in surface.get("actions") or []:
        ref = action["ref"]
        if ref in out:
            raise EntropyInputError(f"the {side} surface lists the tool {ref!r} twice")
        out[ref] = action.get("inputSchema")
    return out


def _sorted(changes: Iterable[SchemaChange]) -> tuple[SchemaChange, ...]:
    unique = {(c.ref, c.path, c.rule): c for c in changes}
    keys = sorted(unique, key=lambda key: (code_unit_key(key[0]), code_unit_key(key[1]), key[2]))
    return tuple(unique[key] for key in keys)


def _loosening(ref: str, finding: Finding) -> SchemaChange:
    return SchemaChange(
        ref, finding.path, finding.rule, finding.outer, finding.inner, finding.reason
    )


def diff_snapshots(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    accepted: Iterable[AcceptedLoosening] = (),
) -> SurfaceDiff:
    """Classify every change from ``before`` to ``after`` (two snapshots).

    >>> d = diff_snapshots({"version": 1, "actions": [{"ref": "s", "inputSchema": {
    ...     "type": "object", "properties": {"q": {"type": "string"}}}}]},
    ...     {"version": 1, "actions": [{"ref": "s", "inputSchema": {
    ...     "type": "object", "properties": {"q": {}}}}]})
    >>> [(c.path, c.rule) for c in d.loosened]
    [('q', 'type')]
    """
    old, new = _schemas(before, "before"), _schemas(after, "after")
    accepted = list(accepted)
    loosened: list[SchemaChange] = []
    tightened: list[SchemaChange] = []
    neutral: list[SchemaChange] = []
    unknown: list[SchemaChange] = []
    added = [SchemaChange(ref, "", "tool", None, new[ref]) for ref in new if ref not in old]
    removed = [SchemaChange(ref, "", "tool", old[ref], None) for ref in old if ref not in new]
    for ref in (ref for ref in new if ref in old):
        looser = containment_findings(old[ref], new[ref])
        tighter = containment_findings(new[ref], old[ref])
        for finding in looser:
            change = _loosening(ref, finding)
            loosened.append(change)
            if not finding.decided:
                unknown.append(change)
        for finding in tighter:
            if finding.decided:
                tightened.append(
                    SchemaChange(ref, finding.path, finding.rule, finding.inner, finding.outer)
                )
        if not looser and not tighter and canonical_json(old[ref]) != canonical_json(new[ref]):
            plain = canonical_json(strip_annotations(old[ref])) == canonical_json(
                strip_annotations(new[ref])
            )
            rule = "annotation" if plain else "equivalent"
            neutral.append(SchemaChange(ref, "", rule, old[ref], new[ref]))
    kept = [c for c in loosened if not any(a.covers(c) for a in accepted)]
    # An accepted new tool is listed as accepted too (and its freedom forgiven).
    forgiven = [c for c in (*loosened, *added) if any(a.covers(c) for a in accepted)]
    freedom_before = surface_freedom_report(before)["total"]
    freedom_after = surface_freedom_report(after)["total"]
    rises: list[str] = []
    if freedom_after - freedom_before > FREEDOM_TOLERANCE:
        # A rise is forgiven only where every tool that rose had its loosenings accepted.
        excused = {c.ref for c in forgiven} - {c.ref for c in kept}
        for ref, schema in new.items():
            was = static_freedom(old[ref]) if ref in old else 0.0
            if static_freedom(schema) - was > FREEDOM_TOLERANCE and ref not in excused:
                rises.append(ref)
        if not rises and not excused:
            rises.append("")
    return SurfaceDiff(
        loosened=_sorted(kept),
        tightened=_sorted(tightened),
        added=_sorted(added),
        removed=_sorted(removed),
        neutral=_sorted(neutral),
        unknown=_sorted(unknown),
        accepted=_sorted(forgiven),
        freedom_before=freedom_before,
        freedom_after=freedom_after,
        freedom_rises=tuple(rises),
    )
