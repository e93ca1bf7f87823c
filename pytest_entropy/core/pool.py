"""The machine-wide observation pool (spec §1.9, §6).

The pool accumulates audit value counts across every session window the compiler reads,
with exact per-session deltas: unchanged files are skipped by digest, growing files add
only their delta, rewritten files retract old counts, evicted sessions are remembered by
digest ("baked") and never merge again. It is derived evidence: it moves thresholds and
never gates enforcement.

The pool file is a plain JSON object ``{version, entries, tracked, baked}`` in the
reference's key orders, so the files interoperate byte for byte. One named exception
(docs/decisions.md): a string value longer than 64 KiB is counted, not stored.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.jscompat import (
    MAX_SAFE_INTEGER,
    code_unit_key,
    is_finite_number,
    is_safe_integer_at_least,
    js_trim,
    value_key,
)
from pytest_entropy.core.pool_window import (
    POOL_MAX_VALUE_BYTES,
    Tally,
    identities_digest,
    loadable_text,
    unwritable_number,
    window_tally,
)
from pytest_entropy.core.records import ValueObservation, observation_fields

__all__ = [
    "OBSERVATION_POOL_VERSION",
    "PoolMerge",
    "PoolMerger",
    "WindowSummary",
    "counts_dict",
    "loadable_observation",
    "merge_observation_window",
    "native_tally_summary",
    "native_window_summary",
    "observation_identity",
    "observation_window_digest",
    "parse_observation_pool",
    "pool_to_value_observations",
    "summarize_window",
    "tally_summary",
]

OBSERVATION_POOL_VERSION = 1
POOL_TRACKED_VALUES = 16
POOL_TRACKED_SESSIONS = 16
POOL_BAKED_DIGESTS = 512
MAX_POOL_ENTRIES = 8192
MAX_POOL_VALUES = 64
MAX_POOL_TRACKED = 64
MAX_POOL_BAKED = 2048

Pool = dict[str, Any]
_NUL = "\u0000"


def observation_identity(observation: ValueObservation | Mapping[str, Any]) -> str:
    """``ref + NUL + key + NUL + typeof(value) + ":" + String(value)`` (spec §2.7.4)."""
    ref, key, value, _ = observation_fields(observation)
    return ref + _NUL + key + _NUL + value_key(value)


def observation_window_digest(observations: Iterable[ValueObservation | Mapping[str, Any]]) -> str:
    """Stable hash of the sorted identities, one per record (counts are ignored)."""
    identities = [observation_identity(o) for o in observations]
    identities.sort(key=code_unit_key)
    return stable_json_hash(identities)


def loadable_observation(observation: ValueObservation | Mapping[str, Any]) -> bool:
    """Whether a merged pool holding this observation would load back unchanged.

    The reference writes pools its own loader rejects when a ref or key is blank or holds
    U+0000, and silently renames keys with surrounding spaces on load; a non-finite
    number cannot be written at all. Such observations are dropped before merging
    (spec §14 #22, docs/decisions.md).
    """
    ref, key, value, _ = observation_fields(observation)
    return loadable_text(ref) and loadable_text(key) and not unwritable_number(value)


# ---------------------------------------------------------------------- parsing


def _text(value: Any) -> str | None:
    if type(value) is not str:
        return None
    trimmed = js_trim(value)
    return trimmed or None


def _primitive(value: Any) -> bool:
    t = type(value)
    if t is float or t is int:
        return is_finite_number(value)
    return t is str or t is bool


def _safe_counts(counts: dict[Any, Any]) -> bool:
    """Whether every count is a safe integer of at least 1. A dict of exact ints (what a
    loaded pool holds: a tracked session has thousands) is answered by its bounds at once;
    a float, a bool or anything else is judged count by count."""
    values = counts.values()
    if values and set(map(type, values)) == {int}:
        return bool(min(values) >= 1 and max(values) <= MAX_SAFE_INTEGER)
    return all(is_safe_integer_at_least(count, 1) for count in values)


def parse_observation_pool(value: Any) -> Pool | None:
    """Validate and normalise a pool file (spec §1.9 bounds); ``None`` means "invalid"."""
    if type(value) is not dict:
        return None
    version = value.get("version")
    if type(version) not in (int, float) or version != OBSERVATION_POOL_VERSION:
        return None
    raw_entries, raw_tracked, raw_baked = (
        value.get("entries"),
        value.get("tracked"),
        value.get("baked"),
    )
    if type(raw_entries) is not list or len(raw_entries) > MAX_POOL_ENTRIES:
        return None
    if type(raw_tracked) is not list or len(raw_tracked) > MAX_POOL_TRACKED:
        return None
    if type(raw_baked) is not list or len(raw_baked) > MAX_POOL_BAKED:
        return None
    entries = []
    seen_entries: set[tuple[str, str]] = set()
    for entry in raw_entries:
        if type(entry) is not dict:
            return None
        ref, key, total, values = (
            _text(entry.get("ref")),
            _text(entry.get("key")),
            entry.get("total"),
            entry.get("values"),
        )
        if ref is None or key is None or (ref, key) in seen_entries:
            return None
        seen_entries.add((ref, key))
        if not is_safe_integer_at_least(total, 0):
            return None
        if type(values) is not list or len(values) > MAX_POOL_VALUES:
            return None
        kept = []
        seen_values: set[str] = set()
        for item in values:
            if type(item) is not dict or not _primitive(item.get("value")):
                return None
            count = item.get("count")
            if not is_safe_integer_at_least(count, 1):
                return None
            identity = value_key(item["value"])
            if identity in seen_values:
                return None
            seen_values.add(identity)
            kept.append({"value": item["value"], "count": count})
        entries.append({"ref": ref, "key": key, "total": total, "values": kept})
    tracked = []
    seen_files: set[str] = set()
    for session in raw_tracked:
        if type(session) is not dict:
            return None
        file, digest, counts = (
            _text(session.get("file")),
            _text(session.get("digest")),
            session.get("counts"),
        )
        if file is None or digest is None or file in seen_files or type(counts) is not dict:
            return None
        seen_files.add(file)
        if not _safe_counts(counts):
            return None
        tracked.append({"file": file, "digest": digest, "counts": dict(counts)})
    baked = []
    for digest in raw_baked:
        text = _text(digest)
        if text is None:
            return None
        baked.append(text)
    return {
        "version": OBSERVATION_POOL_VERSION,
        "entries": entries,
        "tracked": tracked,
        "baked": baked,
    }


# ----------------------------------------------------------------------- merging


def _reconstruct(identity_value: str) -> Any:
    kind, _, rest = identity_value.partition(":")
    if kind == "number":
        return _js_number(rest)
    if kind == "boolean":
        return rest == "true"
    return rest


def _js_number(text: str) -> float | int:
    """JavaScript ``Number(text)`` for the texts ``String(number)`` produces."""
    if text == "Infinity":
        return math.inf
    if text == "-Infinity":
        return -math.inf
    if text == "NaN":
        return math.nan
    number = float(text)
    if number.is_integer() and abs(number) <= 2**53:
        return int(number)
    return number


@dataclass(frozen=True, slots=True)
class PoolMerge:
    """``{file, mergedSessions, skippedSessions}`` plus the observations dropped as unloadable."""

    file: Pool
    merged_sessions: int
    skipped_sessions: int
    dropped_observations: int = 0
    oversized_values: int = 0
    clamped_totals: int = 0  # entries whose total fell below zero, written as 0

    def to_json(self) -> dict[str, Any]:
        out = {
            "file": self.file,
            "mergedSessions": self.merged_sessions,
            "skippedSessions": self.skipped_sessions,
            "droppedObservations": self.dropped_observations,
        }
        if self.oversized_values:
            out["oversizedValues"] = self.oversized_values  # added, only when there are some
        if self.clamped_totals:
            out["clampedTotals"] = self.clamped_totals  # added, only when there are some
        return out


@dataclass(frozen=True, slots=True)
class WindowSummary:
    """What the pool needs of one session window: per-identity counts, the window's digest
    and the observations dropped as unloadable. Small, so windows can be summarised where
    the file is read and merged elsewhere."""

    file: str
    counts: dict[str, int]
    digest: str
    dropped: int = 0
    oversized: int = 0


def summarize_window(
    file: str,
    observations: Iterable[ValueObservation | Mapping[str, Any]],
    *,
    drop_unloadable: bool = True,
    max_value_bytes: int | None = POOL_MAX_VALUE_BYTES,
) -> WindowSummary:
    """The summary of the window ``{file, observations}`` (spec §6.2), heard by one
    :class:`~pytest_entropy.core.pool_window.WindowTally`.

    With ``drop_unloadable``, an observation :func:`loadable_observation` refuses is counted
    in ``dropped`` and left out. A string value longer than ``max_value_bytes`` (``None``: no
    bound, the reference) still identifies the window (it is part of the digest) but is not
    counted into the pool: the summary only counts it in ``oversized``.
    """
    tally = window_tally(drop_unloadable, max_value_bytes)
    tally.add_records(observations)
    return tally_summary(file, tally)


def tally_summary(file: str, tally: Tally) -> WindowSummary:
    """The :class:`WindowSummary` of a window whose observations ``tally`` heard."""
    counts, identities, dropped, oversized = tally.summary()
    return WindowSummary(file, counts, identities_digest(identities), dropped, oversized)


def native_window_summary(file: str, found: tuple[Any, ...]) -> WindowSummary:
    """The :class:`WindowSummary` of a window the Rust core tallied: ``found`` is its
    ``(counts, identities, dropped, oversized)`` where the identities (in code-unit order)
    come already digested (the core hashes the JSON text orjson writes of them, as
    :func:`~pytest_entropy.core.pool_window.identities_digest` hashes the list), or as the
    list itself when one holds a lone surrogate."""
    counts, identities, dropped, oversized = found
    digest = identities if type(identities) is str else identities_digest(identities)
    return WindowSummary(file, counts, digest, dropped, oversized)


def native_tally_summary(file: str, tally: Any) -> WindowSummary:
    """:func:`native_window_summary` of the Rust core's ``WindowTally``."""
    return native_window_summary(file, tally.digest_summary())


def merge_observation_window(
    pool: Mapping[str, Any] | None,
    windows: Iterable[Mapping[str, Any]],
    *,
    drop_unloadable: bool = True,
) -> PoolMerge:
    """Merge session windows ``{file, observations}`` into a pool (spec §6.2).

    ``drop_unloadable=False`` reproduces the reference exactly, including pools its own
    loader would reject and values longer than 64 KiB; the default drops unloadable
    observations first, and counts instead of storing the long values.
    """
    merger = PoolMerger(pool, loadable=drop_unloadable)
    for window in windows:
        merger.add(
            summarize_window(
                window["file"],
                window.get("observations") or (),
                drop_unloadable=drop_unloadable,
                max_value_bytes=POOL_MAX_VALUE_BYTES if drop_unloadable else None,
            )
        )
    return merger.result()


def counts_dict(counts: Any) -> dict[str, int]:
    """A window's counts as a dict: the Rust core keeps a scanned window's counts as its
    ``WindowCounts`` (``to_dict`` gives them), a plain one holds the dict itself."""
    return counts if type(counts) is dict else counts.to_dict()


class PoolMerger:
    """Merges window summaries into a pool one at a time, in window order.

    The entries live in :meth:`_load`, :meth:`_apply` and :meth:`_rows`; the Rust core's
    merger (``ingest/native_pool.NativePoolMerger``) keeps them in the core instead.

    ``loadable`` (the default) writes an entry whose total fell below zero with a total of 0:
    a total drifts below the retained counts when a value the cap evicted is retracted later
    (spec §14 #10), and below zero the pool's own loader rejects the file. ``loadable=False``
    keeps the reference's negative total.
    """

    def __init__(self, pool: Mapping[str, Any] | None, *, loadable: bool = True) -> None:
        self.loadable = loadable
        self._load((pool or {}).get("entries") or ())
        self.tracked = [dict(session) for session in (pool or {}).get("tracked") or ()]
        self.baked = list((pool or {}).get("baked") or ())
        self.baked_set = set(self.baked)
        self.tracked_digests = {session["digest"] for session in self.tracked}
        self.merged = self.skipped = self.dropped = self.oversized = 0

    def _load(self, entries: Iterable[Mapping[str, Any]]) -> None:
        self.entries: dict[tuple[str, str], dict[str, Any]] = {}
        for entry in entries:
            self.entries[(entry["ref"], entry["key"])] = {
                "total": entry["total"],
                "values": {
                    value_key(v["value"]): [v["value"], v["count"]] for v in entry["values"]
                },
            }

    def result(self) -> PoolMerge:
        rows = self._rows()
        clamped = 0
        if self.loadable:
            for row in rows:
                if row["total"] < 0:
                    row["total"] = 0
                    clamped += 1
        return PoolMerge(
            _serialise(rows, self.tracked, self.baked),
            self.merged,
            self.skipped,
            self.dropped,
            self.oversized,
            clamped,
        )

    def add(self, summary: WindowSummary) -> PoolMerger:
        """Merge one window (the one after every window merged so far); returns ``self``."""
        tracked, baked, baked_set = self.tracked, self.baked, self.baked_set
        self.dropped += summary.dropped
        self.oversized += summary.oversized
        fresh, digest = summary.counts, summary.digest
        if digest in baked_set or digest in self.tracked_digests:
            self.skipped += 1
            return self
        existing_index = next(
            (i for i, session in enumerate(tracked) if session["file"] == summary.file), None
        )
        existing = tracked[existing_index]["counts"] if existing_index is not None else None
        self._apply(fresh, existing)
        record = {"file": summary.file, "digest": digest, "counts": fresh}
        if existing_index is not None:
            tracked[existing_index] = record
        else:
            tracked.append(record)
            if len(tracked) > POOL_TRACKED_SESSIONS:
                oldest = tracked.pop(0)
                if oldest["digest"] not in baked_set:
                    baked.append(oldest["digest"])
                    baked_set.add(oldest["digest"])
                    while len(baked) > POOL_BAKED_DIGESTS:
                        baked.pop(0)
        self.tracked_digests.add(digest)
        self.merged += 1
        return self

    def _apply(self, fresh_counts: Any, existing_counts: Any) -> None:
        """Each identity's difference between the window's counts and the ones its file
        had (``None``: a file new to the pool) changes its entry; every entry changed
        then keeps its top values (:func:`_evict`)."""
        entries = self.entries
        fresh = counts_dict(fresh_counts)
        existing = counts_dict(existing_counts) if existing_counts is not None else {}
        deltas = [
            (identity, count - existing.get(identity, 0)) for identity, count in fresh.items()
        ]
        deltas.extend(
            (identity, -count) for identity, count in existing.items() if identity not in fresh
        )
        touched: dict[int, dict[str, Any]] = {}  # by identity: a list scan would be quadratic
        for identity, delta in deltas:
            if delta == 0:
                continue
            ref, _, rest = identity.partition(_NUL)
            key, _, value_identity = rest.partition(_NUL)
            entry = entries.get((ref, key))
            if entry is None:
                entry = {"total": 0, "values": {}}
                entries[(ref, key)] = entry
            values = entry["values"]
            slot = values.get(value_identity)
            new = (slot[1] if slot is not None else 0) + delta
            entry["total"] += delta
            if new > 0:
                if slot is None:
                    values[value_identity] = [_reconstruct(value_identity), new]
                else:
                    slot[1] = new
            elif slot is not None:
                del values[value_identity]
            if not values and entry["total"] <= 0:
                del entries[(ref, key)]
            else:
                touched.setdefault(id(entry), entry)
        for entry in touched.values():
            _evict(entry)

    def _rows(self) -> list[dict[str, Any]]:
        """The entries as the pool file lists them: in code-unit order of ``ref NUL key``,
        each one's values most counted first (ties in code-unit order)."""
        rows = []
        for (ref, key), entry in self.entries.items():
            values = sorted(entry["values"].items(), key=lambda item: code_unit_key(item[0]))
            values.sort(key=lambda item: -item[1][1])
            rows.append(
                {
                    "ref": ref,
                    "key": key,
                    "total": entry["total"],
                    "values": [{"value": slot[0], "count": slot[1]} for _, slot in values],
                }
            )
        rows.sort(key=lambda row: code_unit_key(row["ref"] + _NUL + row["key"]))
        return rows


def _evict(entry: dict[str, Any]) -> None:
    """Keep an entry's :data:`POOL_TRACKED_VALUES` values, as the reference does.

    The reference removes, while too many remain, the value with the smallest count (ties:
    the largest value key in code units). Counts do not change meanwhile, so that removes
    exactly the values outside the top ones in the opposite order (largest count first,
    ties: smallest key): one pass that picks those, instead of a search per removal, which
    made 5,000 distinct values of one key take seconds and 200,000 minutes.
    """
    values = entry["values"]
    if len(values) <= POOL_TRACKED_VALUES:
        return
    kept = set(
        heapq.nsmallest(
            POOL_TRACKED_VALUES,
            values,
            key=lambda identity: (-values[identity][1], code_unit_key(identity)),
        )
    )
    for identity in [identity for identity in values if identity not in kept]:
        entry["total"] -= values[identity][1]
        del values[identity]


def _counts_copy(counts: Any) -> dict[str, int]:
    return dict(counts) if type(counts) is dict else counts.to_dict()


def _serialise(rows: list[dict[str, Any]], tracked: list[dict[str, Any]], baked: list[str]) -> Pool:
    return {
        "version": OBSERVATION_POOL_VERSION,
        "entries": rows,
        "tracked": [
            {"file": s["file"], "digest": s["digest"], "counts": _counts_copy(s["counts"])}
            for s in tracked
        ],
        "baked": list(baked),
    }


def pool_to_value_observations(pool: Mapping[str, Any] | None) -> list[ValueObservation]:
    """One observation ``{ref, key, value, count}`` per stored value, in file order."""
    if pool is None:
        return []
    return [
        ValueObservation(entry["ref"], entry["key"], item["value"], item["count"])
        for entry in pool.get("entries") or ()
        for item in entry["values"]
    ]
