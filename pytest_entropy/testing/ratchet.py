"""The ratchet baseline: tracked entropy numbers that may fall but never rise.

A baseline file (``entropy-baseline.json`` by default) holds named entries. A *surface* entry
tracks the static freedom total and the freedom of every ref; a *report* entry tracks the
score, its static/behavioral split and the invocation rejections per 1k, plus the tools it
saw. Checking a value against its entry fails when any tracked number rises by more than
:data:`TOLERANCE`, or when a tool appears that the baseline does not know (unless new tools
are allowed); a fall passes and says the baseline can be lowered. A missing entry is
created locally and is a failure in CI, where baselines are never written implicitly.

The file is canonical JSON (keys in the stable hash's order, JavaScript number text, two
spaces), so it diffs cleanly and rewriting identical values is a no-op. Writes hold the
state store's lock, so pytest-xdist workers can update different entries at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pytest_entropy.core.canonical import canonical_json, file_text, stable_json_hash
from pytest_entropy.core.errors import EntropyError, EntropyInputError
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.core.inputs import surface_from_value
from pytest_entropy.core.jscompat import code_unit_key, js_string, round_metric
from pytest_entropy.core.records import Report
from pytest_entropy.core.surface_diff import (
    AcceptedLoosening,
    SchemaChange,
    SurfaceDiff,
    accepted_from_value,
    diff_snapshots,
)

__all__ = [
    "BASELINE_KIND",
    "TOLERANCE",
    "BaselineError",
    "Change",
    "RatchetResult",
    "Tracked",
    "accepted_loosenings",
    "check_baseline",
    "compare",
    "read_baseline",
    "tracked_values",
]

BASELINE_KIND: Final = "pytest-entropy.baseline"
BASELINE_VERSION: Final = 1
TOLERANCE: Final = 1e-6
# How far a corpus may differ in size from its baseline's before a comparison of the v2
# corpus score is refused (issue 29: the score divides by successful calls).
SIZE_FACTOR: Final = 2.0
_SIZE_HINT: Final = (
    "the v2 corpus score divides by successful calls, so the same behaviour scores lower as"
    " a corpus grows; compare size-invariant measures instead: the per-session window and"
    " slope (pytest-entropy status) and invocationRejectionsPer1k"
)
_REPORT_NUMBERS: Final = (
    ("score", "score"),
    ("staticScore", "static score"),
    ("behavioralScore", "behavioral score"),
    ("invocationRejectionsPer1k", "invocation rejections per 1k"),
)


class BaselineError(EntropyError):
    """The baseline file cannot be read or is not a baseline."""


@dataclass(frozen=True, slots=True)
class Tracked:
    """What one entry tracks: ``kind`` is ``surface`` or ``report``."""

    kind: str
    numbers: dict[str, float]
    tools: dict[str, float | None] = field(default_factory=dict)
    # A surface's schemas by ref (``None``: a baseline written before schema containment).
    schemas: dict[str, Any] | None = None
    accepted: tuple[AcceptedLoosening, ...] = ()

    def to_json(self) -> dict[str, Any]:
        if self.kind == "surface":
            entry: dict[str, Any] = {
                "kind": "surface",
                "freedomTotal": self.numbers["freedomTotal"],
                "refs": dict(self.tools),
            }
            if self.schemas is not None:
                entry["schemas"] = dict(self.schemas)
                entry["schemasHash"] = stable_json_hash(self.schemas)
            if self.accepted:
                entry["accepted"] = [item.to_json() for item in self.accepted]
            return entry
        return {"kind": "report", **self.numbers, "tools": sorted(self.tools, key=code_unit_key)}

    def snapshot(self) -> dict[str, Any]:
        """The baseline's surface as a snapshot (schemas in ref order)."""
        schemas = self.schemas or {}
        return {
            "version": 1,
            "actions": [{"ref": ref, "inputSchema": schemas[ref]} for ref in schemas],
        }

    @classmethod
    def from_json(cls, value: Any) -> Tracked:
        if not isinstance(value, dict) or value.get("kind") not in ("surface", "report"):
            raise BaselineError("an entry is not a surface or report entry")
        try:
            if value["kind"] == "surface":
                refs = {str(ref): float(freedom) for ref, freedom in value["refs"].items()}
                numbers = {"freedomTotal": float(value["freedomTotal"])}
                schemas = _checked_schemas(value)
                try:
                    accepted = tuple(accepted_from_value(value.get("accepted")))
                except EntropyInputError as error:
                    raise BaselineError(str(error)) from None
                return cls("surface", numbers, dict(refs), schemas, accepted)
            numbers = {key: float(value[key]) for key, _label in _REPORT_NUMBERS}
            return cls("report", numbers, dict.fromkeys(map(str, value["tools"])))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise BaselineError(f"an entry is malformed ({error})") from None


def _checked_schemas(entry: dict[str, Any]) -> dict[str, Any] | None:
    """An entry's schemas, verified against their hash (a hand edit must not go unseen)."""
    if "schemas" not in entry:
        return None
    schemas = entry["schemas"]
    if not isinstance(schemas, dict):
        raise BaselineError("'schemas' is not an object")
    if entry.get("schemasHash") != stable_json_hash(schemas):
        raise BaselineError(
            "'schemas' do not match 'schemasHash' (edited by hand? rewrite the entry with"
            " --entropy-update)"
        )
    return dict(schemas)


def tracked_values(value: Any, *, timeout: float | None = None) -> Tracked:
    """The tracked numbers of a surface snapshot or an entropy report.

    Accepts a :class:`~pytest_entropy.core.records.Report`, a report's JSON object, or any
    surface :func:`pytest_entropy.load_surface` reads (a snapshot, an MCP ``tools/list``
    result, a tool array, a path, SDK tools or an MCP server, listed within ``timeout``
    seconds: default 30).
    """
    if isinstance(value, Mapping) and "metricVersion" in value:
        value = Report.from_json(value)
    if not isinstance(value, Report):
        if isinstance(value, Mapping) and "actions" in value:
            surface = surface_from_value(dict(value))
        else:
            from pytest_entropy.sources.surface import load_surface

            surface = load_surface(value, timeout=timeout)
        freedom = surface_freedom_report(surface)
        refs: dict[str, float | None] = {row["ref"]: row["freedom"] for row in freedom["actions"]}
        schemas: dict[str, Any] = {}
        for action in surface["actions"]:
            if action["ref"] in schemas:
                raise EntropyInputError(f"the surface lists the tool {action['ref']!r} twice")
            schemas[action["ref"]] = json.loads(canonical_json(action.get("inputSchema")))
        return Tracked("surface", {"freedomTotal": freedom["total"]}, refs, schemas)
    numbers = {
        "score": value.score,
        "staticScore": value.static_score,
        "behavioralScore": value.behavioral_score,
        "invocationRejectionsPer1k": value.totals.invocation_rejections_per_1k,
    }
    return Tracked("report", numbers, dict.fromkeys(row.ref for row in value.refs))


@dataclass(frozen=True, slots=True)
class Change:
    """One tracked number that moved (``before``/``after`` is ``None`` for a new/gone tool)."""

    label: str
    before: float | None
    after: float | None

    def text(self) -> str:
        if self.before is None:
            shown = "" if self.after is None else f" (freedom {js_string(self.after)})"
            return f"{self.label}: new tool{shown}"
        if self.after is None:
            return f"{self.label}: no longer present (was {js_string(self.before)})"
        delta = self.after - self.before
        sign = "+" if delta > 0 else ""
        return (
            f"{self.label}: {js_string(self.before)} → {js_string(self.after)}"
            f" ({sign}{js_string(round_metric(delta))})"
        )


def compare(
    baseline: Tracked, current: Tracked, *, allow_new_tools: bool = False
) -> tuple[list[Change], list[Change], list[Change]]:
    """``(rises, falls, allowed new tools)`` from the baseline to the current values."""
    rises: list[Change] = []
    falls: list[Change] = []
    allowed: list[Change] = []

    def number(label: str, before: float, after: float) -> None:
        if after - before > TOLERANCE:
            rises.append(Change(label, before, after))
        elif before - after > TOLERANCE:
            falls.append(Change(label, before, after))

    if current.kind == "surface":
        number("freedom total", baseline.numbers["freedomTotal"], current.numbers["freedomTotal"])
    else:
        for key, label in _REPORT_NUMBERS:
            number(label, baseline.numbers[key], current.numbers[key])
    for ref in sorted(current.tools, key=code_unit_key):
        after = current.tools[ref]
        if ref not in baseline.tools:
            (allowed if allow_new_tools else rises).append(Change(ref, None, after))
            continue
        before = baseline.tools[ref]
        if before is not None and after is not None:
            number(f"{ref} freedom", before, after)
    for ref in sorted(baseline.tools, key=code_unit_key):
        if ref not in current.tools:
            falls.append(Change(ref, baseline.tools[ref] or 0.0, None))
    return rises, falls, allowed


@dataclass(frozen=True, slots=True)
class RatchetResult:
    """The outcome of one check against the baseline.

    ``status``: ``unchanged``, ``lowered`` (fell: the baseline can be lowered), ``rose``,
    ``created``, ``updated``, ``missing`` (absent in CI), ``damaged``, ``kind-mismatch``,
    ``size-mismatch`` (the corpus is more than the size factor off the baseline's: refused,
    failing only in CI).
    """

    name: str
    path: Path
    status: str
    passed: bool
    rises: tuple[Change, ...] = ()
    falls: tuple[Change, ...] = ()
    new_tools: tuple[Change, ...] = ()
    detail: str = ""
    update_hint: str = "--entropy-update"
    loosened: tuple[SchemaChange, ...] = ()
    accepted: tuple[SchemaChange, ...] = ()
    # The entry predates schema containment: only the freedom numbers were compared.
    without_schemas: bool = False

    @property
    def can_lower(self) -> bool:
        return self.status == "lowered"

    def lines(self, limit: int = 20) -> list[str]:
        """A short header and the changes (capped), for a failure message or a note."""
        where = f"{self.name!r} in {self.path}"
        headers = {
            "unchanged": f"entropy ratchet holds for {where}",
            "lowered": f"entropy fell below the baseline {where}; the baseline can be lowered"
            f" (run with {self.update_hint})",
            "rose": f"entropy rose above the baseline {where}",
            "created": f"entropy baseline created: {where}",
            "updated": f"entropy baseline updated: {where}",
            "missing": f"no entropy baseline {where}; CI never creates one: run once locally"
            f" (or with {self.update_hint}) and commit {self.path.name}",
            "damaged": f"the entropy baseline {self.path} is unusable: {self.detail}"
            " (fix or delete it; it is never overwritten)",
            "kind-mismatch": f"the entropy baseline {where} {self.detail}",
            "size-mismatch": f"not comparing the corpus score with the baseline {where}:"
            f" {self.detail}",
            "loosened": f"the surface loosened against the baseline {where}: a tool now accepts"
            " calls it refused",
            "emptied": f"the surface lists no tool, where the baseline {where} has"
            f" {self.detail}: a surface of nothing is no tightening (if it is meant, run with"
            f" {self.update_hint} and commit {self.path.name})",
        }
        lines = [headers[self.status]]
        if self.status == "size-mismatch" and self.passed:
            lines[0] = f"warning: {lines[0]}"  # locally a warning; CI fails on it
        for loosening in self.loosened[:limit]:
            lines.append(f"  loosened: {loosening.text()}")
        if len(self.loosened) > limit:
            lines.append(f"  ... and {len(self.loosened) - limit} more loosenings")
        changes = [
            *(("rose", change) for change in self.rises),
            *(("fell", change) for change in self.falls),
            *(("new (allowed)", change) for change in self.new_tools),
        ]
        for verb, change in changes[:limit]:
            lines.append(f"  {verb}: {change.text()}")
        if len(changes) > limit:
            lines.append(f"  ... and {len(changes) - limit} more")
        for acceptance in self.accepted[:limit]:
            lines.append(f"  accepted: {acceptance.text()}")
        if self.status == "loosened":
            lines.append(
                "  if a loosening is intended, accept it with a reason (--entropy-accept"
                " REF[:PATH]=REASON, or an 'accepted' item in the entry), or rewrite the"
                f" baseline with {self.update_hint}; commit {self.path.name}"
            )
        if self.status == "rose":
            lines.append(
                f"  if the rise is intended, run with {self.update_hint} and commit"
                f" {self.path.name}"
            )
        if self.status == "size-mismatch":
            lines.append(
                f"  {_SIZE_HINT}; if the corpus grew on purpose, run with"
                f" {self.update_hint} and commit {self.path.name}"
            )
        if self.without_schemas:
            lines.append(
                "  note: this entry holds no schemas, so loosenings that lower the freedom"
                f" went unchecked; run with {self.update_hint} once to record them"
            )
        return lines

    def message(self) -> str:
        return "\n".join(self.lines())


def read_baseline(path: Path) -> dict[str, Any] | None:
    """The entries of a baseline file, or ``None`` when there is no file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"cannot read it ({error})") from None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise BaselineError(f"not valid JSON ({error})") from None
    if (
        not isinstance(value, dict)
        or value.get("kind") != BASELINE_KIND
        or value.get("version") != BASELINE_VERSION
        or not isinstance(value.get("entries"), dict)
    ):
        raise BaselineError(f"not a {BASELINE_KIND} version {BASELINE_VERSION} file")
    return dict(value["entries"])


def baseline_text(entries: Mapping[str, Any]) -> str:
    """The canonical file text of a set of entries."""
    value = {"kind": BASELINE_KIND, "version": BASELINE_VERSION, "entries": dict(entries)}
    # Canonical key order (the stable hash's), laid out as a file: stable diffs.
    return file_text(json.loads(canonical_json(value)))


def _write_entry(path: Path, name: str, entry: Mapping[str, Any]) -> None:
    from pytest_entropy.state.store import (
        ensure_directory,
        lock_name,
        state_lock,
        write_file_atomic,
    )

    ensure_directory(path.parent)
    # Many pytest-xdist workers may update one file: wait up to 10 s, not the store's 250 ms.
    with state_lock(
        path.parent, lock_name(path), "Timed out waiting for the baseline lock", attempts=2000
    ):
        entries = read_baseline(path) or {}  # re-read under the lock: no lost updates
        entries[name] = dict(entry)
        write_file_atomic(path, baseline_text(entries), mode=0o644)


def _unexplained_rises(
    rises: list[Change], baseline: Tracked, current: Tracked, diff: SurfaceDiff
) -> list[Change]:
    """The rises containment does not explain away.

    A tool whose new schema accepts nothing the old one refused cannot have loosened, even
    when the v2 freedom prices it higher (a typed parameter where an untyped one was); nor
    can one whose loosenings (or whose addition) were all accepted. Their rises pass, and so
    does the total when every tool that rose is such a tool.
    """
    loosened = {change.ref for change in diff.loosened}
    contained = {ref for ref in current.tools if ref in baseline.tools} - loosened
    forgiven = contained | ({change.ref for change in diff.accepted} - loosened)
    rose = {
        ref
        for ref, after in current.tools.items()
        if ref not in baseline.tools or (after or 0.0) - (baseline.tools[ref] or 0.0) > TOLERANCE
    }
    kept = []
    for change in rises:
        if change.label == "freedom total":
            if rose <= forgiven:
                continue
        elif change.label in forgiven or change.label.removesuffix(" freedom") in forgiven:
            continue
        kept.append(change)
    return kept


def parse_accept(spec: str) -> AcceptedLoosening:
    """``REF[:PATH][=REASON]`` (``--entropy-accept``) as an acceptance without a rule yet."""
    where, _, reason = spec.partition("=")
    ref, _, path = where.partition(":")
    if not ref:
        raise EntropyInputError(f"--entropy-accept needs REF[:PATH][=REASON], got {spec!r}")
    return AcceptedLoosening(ref, path, "", reason or "accepted with --entropy-accept")


def _surface_verdict(
    path: Path,
    name: str,
    stored: dict[str, Any],
    baseline: Tracked,
    current: Tracked,
    accept: Sequence[str],
) -> SurfaceDiff:
    """The containment diff from the baseline's schemas; ``accept`` specs that match a
    loosening (or a new tool) are written into the entry, each with its rule."""
    before, after = baseline.snapshot(), current.snapshot()
    accepted = baseline.accepted
    diff = diff_snapshots(before, after, accepted=accepted)
    specs = [parse_accept(spec) for spec in accept]
    fresh: list[AcceptedLoosening] = []
    for change in (*diff.loosened, *diff.added):
        for spec in specs:
            if spec.ref == change.ref and (not spec.path or spec.path == change.path):
                fresh.append(AcceptedLoosening(change.ref, change.path, change.rule, spec.reason))
                break
    if fresh:
        accepted = (*accepted, *fresh)
        entry = {**stored, "accepted": [item.to_json() for item in accepted]}
        _write_entry(path, name, entry)
        diff = diff_snapshots(before, after, accepted=accepted)
    return diff


def check_baseline(
    path: Path,
    name: str,
    value: Any,
    *,
    update: bool = False,
    ci: bool = False,
    allow_new_tools: bool = False,
    update_hint: str = "--entropy-update",
    accept: Sequence[str] = (),
    timeout: float | None = None,
    size_factor: float | None = None,
) -> RatchetResult:
    """Compare ``value`` (a surface or a report) with the entry ``name`` in ``path``.

    ``update`` rewrites the entry (its schemas too; accepted loosenings are dropped, being
    in the schemas now); otherwise a missing entry is created unless ``ci``. A surface fails
    on any loosening against the entry's schemas (the tool, the parameter path and the rule
    are named) unless accepted, and on any tracked number that rose; ``accept``
    (``REF[:PATH][=REASON]``) accepts the matching loosenings in the file. ``timeout`` is
    the seconds a live server has to list its tools (default 30). A report entry also
    records the corpus size (``corpusSize``: action operations and traces); a report whose
    corpus is more than ``size_factor`` (default :data:`SIZE_FACTOR`) times larger or
    smaller is not compared (``size-mismatch``: a failure under ``ci``, a warning otherwise).
    """
    path = Path(path)
    current = tracked_values(value, timeout=timeout)
    size = corpus_size(value)

    def result(status: str, passed: bool, **extra: Any) -> RatchetResult:
        return RatchetResult(name, path, status, passed, update_hint=update_hint, **extra)

    try:
        entries = read_baseline(path)
    except BaselineError as error:
        return result("damaged", False, detail=str(error))
    stored = (entries or {}).get(name)
    written = {**current.to_json(), **({"corpusSize": size} if size is not None else {})}
    generation = _generation_of(value)
    if generation == 3:  # a v2 entry stays as it always was: no key of its own
        written["metricVersion"] = generation
    if update:
        _write_entry(path, name, written)
        return result("updated", True)
    if stored is None:
        if ci:
            return result("missing", False)
        _write_entry(path, name, written)
        return result("created", True)
    try:
        baseline = Tracked.from_json(stored)
    except BaselineError as error:
        return result("damaged", False, detail=f"entry {name!r}: {error}")
    if baseline.kind != current.kind:
        return result(
            "kind-mismatch", False, detail=f"tracks a {baseline.kind}, not a {current.kind}"
        )
    stored_generation = stored.get("metricVersion", 2)
    if generation is not None and stored_generation != generation:
        # A metric v2 score and a metric v3 rate are different numbers: never compared.
        return result(
            "kind-mismatch",
            False,
            detail=f"tracks a metric v{stored_generation} report, not a metric v{generation}"
            f" one (start a baseline of its own, or rewrite it with {update_hint})",
        )
    if current.kind == "surface" and not current.tools and baseline.tools:
        # Nothing passes on nothing: a server that lists no tool is no tightening.
        return result("emptied", False, detail=f"{len(baseline.tools)} tools")
    off = _size_mismatch(stored.get("corpusSize"), size, size_factor or SIZE_FACTOR)
    if off is not None:
        return result("size-mismatch", not ci, detail=off)
    rises, falls, allowed = compare(baseline, current, allow_new_tools=allow_new_tools)
    extra: dict[str, Any] = {}
    if current.kind == "surface" and baseline.schemas is None:
        extra["without_schemas"] = True
    elif current.kind == "surface":
        diff = _surface_verdict(path, name, stored, baseline, current, accept)
        rises = _unexplained_rises(rises, baseline, current, diff)
        extra.update(loosened=diff.loosened, accepted=diff.accepted)
    changes = {"rises": tuple(rises), "falls": tuple(falls), "new_tools": tuple(allowed)}
    if rises:
        return result("rose", False, **changes, **extra)
    if extra.get("loosened"):
        return result("loosened", False, **changes, **extra)
    if falls:
        return result("lowered", True, **changes, **extra)
    return result("unchanged", True, **changes, **extra)


def _generation_of(value: Any) -> int | None:
    """The metric generation of a report (or its JSON), else ``None`` (a surface)."""
    if isinstance(value, Report):
        return value.metric_version
    if isinstance(value, Mapping) and "metricVersion" in value:
        return int(value["metricVersion"])
    return None


def corpus_size(value: Any) -> dict[str, int] | None:
    """``{actionOperations, traces}`` of a report (or its JSON), else ``None``."""
    if isinstance(value, Mapping) and "metricVersion" in value:
        value = Report.from_json(value)
    if not isinstance(value, Report):
        return None
    return {"actionOperations": value.totals.action_operations, "traces": value.totals.traces}


def _size_mismatch(stored: Any, size: dict[str, int] | None, factor: float) -> str | None:
    """Why a corpus of ``size`` is not comparable with the baseline's ``stored`` size."""
    if size is None or not isinstance(stored, Mapping):
        return None  # a surface, or an entry written before sizes were recorded
    for key, label in (("actionOperations", "action operations"), ("traces", "sessions")):
        before, after = stored.get(key), size[key]
        if type(before) is not int or before <= 0 or after <= 0:
            continue
        ratio = max(before / after, after / before)
        if ratio > factor:
            return (
                f"the corpus has {after} {label}, the baseline's {before}"
                f" ({js_string(round_metric(ratio))}x, more than the size factor"
                f" {js_string(factor)})"
            )
    return None


def accepted_loosenings(path: str | Path) -> list[AcceptedLoosening]:
    """Every loosening a baseline file accepts (its entries' ``accepted`` lists)."""
    source = str(path)
    try:
        entries = read_baseline(Path(path))
    except BaselineError as error:
        raise EntropyInputError(f"not a usable baseline: {error}", source=source) from None
    if entries is None:
        raise EntropyInputError("baseline file not found", source=source)
    found: list[AcceptedLoosening] = []
    for name in sorted(entries, key=code_unit_key):
        entry = entries[name]
        if isinstance(entry, dict):
            found.extend(accepted_from_value(entry.get("accepted"), source=f"{source} ({name})"))
    return found
