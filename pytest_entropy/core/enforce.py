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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_entropy.core.artifact import effective_schema_for, is_quarantined_ref
from pytest_entropy.core.validation import (
    collect_external_refs,
    typebox_check,
    validator_for_schema,
)

__all__ = ["CallVerdict", "validate_call"]


@dataclass(frozen=True, slots=True)
class CallVerdict:
    """Accept, or a typed rejection: ``stage`` is ``resolve`` or ``validate``."""

    accepted: bool
    stage: str | None = None
    path: str | None = None
    message: str = ""
    external_refs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"accepted": self.accepted}
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


def validate_call(
    ref: str,
    args: Any,
    live_surface: Mapping[str, Any],
    artifact: Mapping[str, Any] | None,
) -> CallVerdict:
    """Check one call against the effective schema of ``ref`` (declared + proven overlay)."""
    declared = None
    found = False
    for action in live_surface.get("actions") or ():
        if action.get("ref") == ref:
            declared = action.get("inputSchema")
            found = True
    if not found:
        return CallVerdict(False, "resolve", None, f"unknown action {ref}")
    if is_quarantined_ref(ref, declared, artifact):
        return CallVerdict(False, "resolve", None, f"unknown action {ref}")
    schema = effective_schema_for(ref, declared, artifact)
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
