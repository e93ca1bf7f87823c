"""Metric v3's proposals (notes §5.1-§5.3): normal forms first, then the review signals.

v3 never restricts a surface: ``enum-tighten`` and ``noise-quarantine`` do not exist, and the
only proposal a compile applies is ``normal-form``, one per surface action whose schema
licenses a plan (:mod:`.normal_form`). They come first, actions in code-unit order of their
ref (duplicates kept, the first 1000 considered). After them come the advisory signals v2
also computes, from the same evidence and by the same rules: ``declare-enum`` (annotated open
properties only), ``overload-split`` and ``sequence-fuse``. A declared enum is never
reinterpreted, whatever the observations say.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.v3 import V3_AUTO_APPLY_PROPOSAL_KINDS
from pytest_entropy.core.v3.normal_form import MAX_NORMAL_FORM_PLANS, derive_normal_form_plan

__all__ = [
    "V3_AUTO_APPLY_PROPOSAL_KINDS",
    "apply_proposals_to_surface_v3",
    "normal_form_proposals",
    "review_signals_v3",
]

Proposal = dict[str, Any]


def _actions(surface: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if surface is None:
        return []
    actions = surface.get("actions")
    if not isinstance(actions, list):
        return []
    return [a for a in actions if type(a) is dict and type(a.get("ref")) is str]


def normal_form_proposals(surface: Mapping[str, Any] | None) -> list[Proposal]:
    """``{kind: "normal-form", ref, baseSchemaDigest, rules}`` per action with a plan.

    >>> schema = {"type": "object", "additionalProperties": False,
    ...           "properties": {"n": {"type": "number"}}, "required": ["n"]}
    >>> [p["ref"] for p in normal_form_proposals(
    ...     {"version": 1, "actions": [{"ref": "b.x", "inputSchema": schema},
    ...                                {"ref": "a.x", "inputSchema": {"type": "object"}}]})]
    ['b.x']
    """
    ordered = sorted(_actions(surface), key=lambda action: code_unit_key(action["ref"]))
    proposals: list[Proposal] = []
    for action in ordered[:MAX_NORMAL_FORM_PLANS]:
        plan = derive_normal_form_plan(action["ref"], action.get("inputSchema"))
        if plan is not None:
            proposals.append(
                {
                    "kind": "normal-form",
                    "ref": plan["ref"],
                    "baseSchemaDigest": plan["baseSchemaDigest"],
                    "rules": plan["rules"],
                }
            )
    return proposals


def review_signals_v3(proposals: Iterable[Proposal]) -> list[Proposal]:
    """The proposals a v3 compile never applies (declare-enum, splits, fusions), in order."""
    return [p for p in proposals if p.get("kind") not in V3_AUTO_APPLY_PROPOSAL_KINDS]


def apply_proposals_to_surface_v3(
    surface: Mapping[str, Any], proposals: Iterable[Proposal]
) -> Mapping[str, Any]:
    """v3's ``applyProposalsToSurface``: the declared surface itself, whatever is proposed
    (normal forms live behind validation; legacy restrictions are not interpreted)."""
    del proposals
    return surface
