"""``trial --explain``: examples of the values behind each divergence class. Pure.

The trial (spec §10) counts calls per ref and class; a tool author reading "12
tightening-cost" wants to see *which* values the compiled schema would refuse. This
accumulator keeps, per ``(ref, class)``, the first few refused values, taken from the
audits (verbatim arguments) where the ref has any, else from the trace's projected
arguments, exactly as the counts choose. It merges in file order like the counts, so
every engine gives the same examples. Values can be redacted with the pool's rule
(:mod:`pytest_entropy.core.redact`), and long ones are always cut.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.records import (
    AuditCall,
    Trace,
    action_schemas,
    audit_fields,
    operations_of,
)
from pytest_entropy.core.redact import redact_observed_value
from pytest_entropy.core.trial import (
    BOTH_ACCEPT,
    BOTH_REJECT,
    QUARANTINE_COST,
    QUARANTINE_WIN,
    TrialReport,
    _classify,
)
from pytest_entropy.core.validation import accepts

__all__ = ["MAX_EXAMPLES", "TrialExampleTally", "TrialExamples", "explain_trial"]

MAX_EXAMPLES = 3
SHOWN_CHARACTERS = 120

Examples = dict[str, dict[str, list[dict[str, Any]]]]  # ref -> class -> examples


def _shown(key: str, value: Any, redact: bool) -> Any:
    """One refused value as shown: redacted (opt-in), long text cut."""
    primitive = type(value) in (str, int, float, bool) or value is None
    text = value if primitive else js_stringify(value)
    if redact:
        text = redact_observed_value(key, text)
    if type(text) is str and len(text) > SHOWN_CHARACTERS:
        text = f"{text[:SHOWN_CHARACTERS]}... ({len(text)} characters)"
    return text


def _properties(schema: Any) -> dict[str, Any]:
    if type(schema) is dict and type(schema.get("properties")) is dict:
        properties: dict[str, Any] = schema["properties"]
        return properties
    return {}


def _refused(declared: Any, compiled: Any, args: Any, trial_class: str) -> dict[str, Any]:
    """The arguments the compiled schema refuses: every argument of a quarantined tool's
    call, else each top-level argument whose compiled property schema changed and refuses
    it (all of them when no single one can be blamed)."""
    if type(args) is not dict:
        return {"(arguments)": args}
    if trial_class in (QUARANTINE_COST, QUARANTINE_WIN):
        return dict(args)
    before, after = _properties(declared), _properties(compiled)
    refused = {
        key: value
        for key, value in args.items()
        if key in after and after[key] != before.get(key) and not accepts(after[key], value)
    }
    return refused or dict(args)


def _add(
    into: Examples, ref: str, trial_class: str, example: dict[str, Any], cap: int = MAX_EXAMPLES
) -> None:
    per_class = into.setdefault(ref, {}).setdefault(trial_class, [])
    if len(per_class) < cap:
        per_class.append(example)


@dataclass(slots=True)
class TrialExamples:
    """Examples per ref and class, apart for traces and audits (plain data); ``merge`` of
    consecutive pieces equals one pass."""

    traces: Examples = field(default_factory=dict)
    audits: Examples = field(default_factory=dict)

    def merge(self, other: TrialExamples) -> TrialExamples:
        for mine, theirs in ((self.traces, other.traces), (self.audits, other.audits)):
            for ref, classes in theirs.items():
                for trial_class, examples in classes.items():
                    for example in examples:
                        _add(mine, ref, trial_class, example)
        return self

    def chosen(self) -> Examples:
        """Audits for audited refs, traces for the rest (as the trial's counts choose)."""
        out = {ref: classes for ref, classes in self.traces.items() if ref not in self.audits}
        out.update(self.audits)
        return out


class TrialExampleTally:
    """Collects :class:`TrialExamples` beside a :class:`~pytest_entropy.core.trial.TrialTally`."""

    __slots__ = ("_compiled", "_declared", "examples", "redact")

    def __init__(
        self, live: Mapping[str, Any], effective: Mapping[str, Any], *, redact: bool = False
    ) -> None:
        self._declared = action_schemas(live)
        self._compiled = action_schemas(effective)
        self.redact = redact
        self.examples = TrialExamples()

    def _example(self, into: Examples, ref: str, args: Any, ok: bool, source: str) -> None:
        declared, compiled = self._declared[ref], self._compiled.get(ref)
        trial_class = _classify(declared, compiled, ref not in self._compiled, args, ok)
        if trial_class in (BOTH_ACCEPT, BOTH_REJECT):
            return
        if len(into.get(ref, {}).get(trial_class, ())) >= MAX_EXAMPLES:
            return
        refused = _refused(declared, compiled, args, trial_class)
        shown = {key: _shown(key, value, self.redact) for key, value in refused.items()}
        _add(into, ref, trial_class, {"source": source, "refused": shown})

    def add_trace(self, trace: Trace | Mapping[str, Any]) -> None:
        for op in operations_of(trace):
            ref, args, outcome = op[0], op[1], op[2]
            if ref.startswith("fabric.") or ref not in self._declared:
                continue
            self._example(self.examples.traces, ref, args, outcome == "succeeded", "trace")

    def add_audit(self, call: AuditCall | Mapping[str, Any]) -> None:
        ref, args = audit_fields(call)
        if ref in self._declared:
            self._example(self.examples.audits, ref, args, True, "audit")


_CLASS_WORDS = {
    "tightening-cost": "a recorded successful call the compiled schema would refuse",
    "typed-failure-win": "a failed call the compiled schema refuses up front",
    "quarantine-cost": "a successful call of a quarantined tool",
    "quarantine-win": "a failed call of a quarantined tool, now never made",
}


def explain_trial(trial: TrialReport, examples: Examples) -> list[dict[str, Any]]:
    """One explanation per divergence row: the class in words and up to
    :data:`MAX_EXAMPLES` refused values."""
    out = []
    for row in trial.divergences:
        ref, trial_class = row["ref"], row["trialClass"]
        found = examples.get(ref, {}).get(trial_class, [])
        shown = "; ".join(
            ", ".join(f"{key}={js_stringify(value)}" for key, value in example["refused"].items())
            for example in found
        )
        out.append(
            {
                "ref": ref,
                "trialClass": trial_class,
                "count": row["count"],
                "examples": found,
                "text": f"{ref}: {row['count']} x {_CLASS_WORDS.get(trial_class, trial_class)}"
                + (f"; refused: {shown}" if shown else ""),
            }
        )
    return out
