"""Live enforcement of a compiled surface for tool hosts (spec §7.4).

A Python tool host (an MCP server, an agent loop) calls :func:`validate_call` before it
executes a call::

    verdict = validate_call("mcp.report.render", {"format": "docx"}, live_surface, artifact)
    if not verdict.accepted:
        return error(verdict.stage, verdict.message)   # "resolve" or "validate"

Every call re-proves the artifact's base digest against the live declared schema, so a tool
whose schema changed underneath a compile falls back to its declared schema and is never
mis-enforced. Quarantined and unknown refs are rejected at ``resolve``. The decision is
TypeBox 1.3.8's (the reference's, :mod:`~pytest_entropy.core.typebox`); the rejection's path
and message come from python-jsonschema where it finds an error too. A ``$ref`` outside
the schema is never fetched: what it guards is not enforced, and the verdict names it in
``external_refs``.

Under metric v3 (a version-2 artifact, or ``metric_version=3``) nothing is restricted or
hidden: the call is first rewritten into its normal form, as the upstream runtime does at
its validation boundary (:func:`normalize_arguments`), and the rewritten arguments are
checked against the live declared schema. The verdict then carries them (``args``) with the
witness of the rules that applied, and the host executes ``verdict.args``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pytest_entropy.core.artifact import effective_schema_for, is_quarantined_ref
from pytest_entropy.core.v3.normal_form import apply_normal_form_plan, derive_normal_form_plan
from pytest_entropy.core.validation import (
    collect_external_refs,
    typebox_check,
    validator_for_schema,
)

__all__ = ["CallVerdict", "normalize_arguments", "validate_call"]


@dataclass(frozen=True, slots=True)
class CallVerdict:
    """Accept, or a typed rejection: ``stage`` is ``resolve`` or ``validate``."""

    accepted: bool
    stage: str | None = None
    path: str | None = None
    message: str = ""
    external_refs: tuple[str, ...] = ()
    # Metric v3 only: the arguments to execute, when a normal form rewrote them, and the
    # witness of the rules that did (``None`` when the call was left as it came).
    args: Any = None
    witness: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"accepted": self.accepted}
        if self.witness is not None:
            out["args"] = self.args
            out["witness"] = self.witness
        if self.stage is not None:
            out["stage"] = self.stage
        if self.path is not None:
            out["path"] = self.path
        if self.message:
            out["message"] = self.message
        if self.external_refs:
            out["externalRefs"] = list(self.external_refs)
        return out


def _pointer(parts: Any) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def normalize_arguments(
    ref: str, schema: Any, args: Any, artifact: Mapping[str, Any] | None
) -> tuple[Any, dict[str, Any] | None]:
    """``(args, witness)``: ``args`` in their normal form under ``artifact`` (metric v3).

    The plan is the artifact's stored one for ``ref`` when the artifact is a version-2 file
    that has one (a stale or forged stored plan fails its proof and changes nothing; it is
    never replaced), else one derived from ``schema`` now, so an action new since the
    compile is normalised on its first call. Without an artifact nothing is rewritten.
    Refusals return the very ``args`` object and no witness.
    """
    if artifact is None:
        return args, None
    plan = None
    if artifact.get("version") == 2:
        plan = next((p for p in artifact.get("normalizations") or () if p.get("ref") == ref), None)
    if plan is None:
        plan = derive_normal_form_plan(ref, schema)
    result = apply_normal_form_plan(ref, schema, args, plan)
    witness = None if result.witness is None else dict(result.witness)
    return result.args, witness


def _generation(artifact: Mapping[str, Any] | None, metric_version: int | None) -> int:
    if metric_version is not None:
        return metric_version
    return 3 if artifact is not None and artifact.get("version") == 2 else 2


def validate_call(
    ref: str,
    args: Any,
    live_surface: Mapping[str, Any],
    artifact: Mapping[str, Any] | None,
    metric_version: int | None = None,
) -> CallVerdict:
    """Check one call against the effective schema of ``ref`` (declared + proven overlay).

    ``metric_version`` picks the generation; by default a version-2 artifact means metric
    v3 (normal forms, the live schema) and anything else metric v2 (overlays, quarantines).
    """
    declared = None
    found = False
    for action in live_surface.get("actions") or ():
        if action.get("ref") == ref:
            declared = action.get("inputSchema")
            found = True
    if not found:
        return CallVerdict(False, "resolve", None, f"unknown action {ref}")
    if _generation(artifact, metric_version) >= 3:
        normalized, witness = normalize_arguments(ref, declared, args, artifact)
        verdict = _check(declared, normalized)
        if witness is None or not verdict.accepted:
            return verdict
        return replace(verdict, args=normalized, witness=witness)
    if is_quarantined_ref(ref, declared, artifact):
        return CallVerdict(False, "resolve", None, f"unknown action {ref}")
    return _check(effective_schema_for(ref, declared, artifact), args)


def _check(schema: Any, args: Any) -> CallVerdict:
    if type(schema) is not dict:
        return CallVerdict(False, "validate", "", "the action has no object schema")
    with collect_external_refs() as met:
        try:
            accepted = bool(typebox_check(schema).check(args))
        except Exception as error:  # TypeBox throws (an invalid pattern): a rejection
            message = f"schema could not be evaluated: {error}"
            return CallVerdict(False, "validate", "", message)
    external = tuple(sorted(met))
    if accepted:
        return CallVerdict(True, external_refs=external)
    # The decision is TypeBox's; python-jsonschema only names where and why, when it agrees.
    try:
        errors = sorted(
            validator_for_schema(schema).iter_errors(args),
            key=lambda error: (len(error.absolute_path), _pointer(error.absolute_path)),
        )
    except Exception:
        errors = []
    if not errors:
        return CallVerdict(False, "validate", "", _TYPEBOX_ONLY, external)
    first = errors[0]
    path = _pointer(first.absolute_path)
    return CallVerdict(False, "validate", path, first.message, external)


_TYPEBOX_ONLY = "the arguments do not pass the schema as TypeBox 1.3.8 checks it"
