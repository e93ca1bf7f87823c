"""Normal-form plans of metric v3: derivation, proof, application and witnesses (notes §6.7).

A plan is a small list of rules a closed object schema licenses on its own: a misspelt key
whose spelling form names exactly one declared key (``key-form``), a misspelt enum member
(``enum-form``), a number sent as its exact decimal text (``numeric-string``) and an explicit
``null`` for an optional field that does not admit null (``optional-null``). Nothing observed
in a corpus can add a rule: a plan is *proven* only by deriving it again from the live schema
and comparing digests, so a forged, stale or foreign plan is refused. Applying a plan never
changes arguments the schema already accepts, never repairs part of a call, and returns the
caller's own object on every refusal. The declared schema is never rewritten.

Plans and witnesses are plain JSON-shaped dicts because they travel in ``compiled.json`` and
in trace lines, and every comparison between them is by :func:`stable_json_hash`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, TypedDict

from ..canonical import stable_json_hash
from ..fingerprint import shape_signature
from ..jscompat import is_finite_number, js_string, sort_code_units
from ..plain_record import Record

__all__ = [
    "MAX_NORMAL_FORM_PLANS",
    "MAX_NORMAL_FORM_RULES",
    "NORMAL_FORM_RULE_KINDS",
    "NORMAL_FORM_VERSION",
    "NormalFormEvidenceSummary",
    "NormalFormPlan",
    "NormalFormResult",
    "NormalFormRule",
    "NormalFormWitness",
    "apply_normal_form_plan",
    "derive_normal_form_plan",
    "is_normal_form_plan",
    "is_normal_form_witness",
    "normal_form_evidence_summary",
    "proves_normal_form_plan",
    "spelling_form",
    "unique_forms",
]


def _accepts(schema: Any, value: Any) -> bool:
    """The validator's verdict (``core/validation.py``), imported at the first call: its format
    tables cost every ``measure`` about 20 ms of imports, and only a normal form needs them."""
    from ..validation import accepts as validator_accepts

    return validator_accepts(schema, value)


NORMAL_FORM_VERSION: Final = 1
MAX_NORMAL_FORM_RULES: Final = 128
MAX_NORMAL_FORM_PLANS: Final = 1000
NORMAL_FORM_RULE_KINDS: Final = ("key-form", "enum-form", "numeric-string", "optional-null")

MAX_REF_LENGTH: Final = 1024
MAX_KEY_LENGTH: Final = 128
# Keys a JavaScript host could turn into prototype writes; a schema naming one gets no plan.
UNSAFE_KEYS: Final = frozenset({"__proto__", "prototype", "constructor"})
# Keywords whose meaning a spelling rule could contradict: such a schema passes through.
COMBINATOR_KEYS: Final = ("patternProperties", "oneOf", "anyOf", "allOf", "$ref", "if", "not")

# ``\Z``, not ``$``: JavaScript's ``$`` does not accept a trailing newline.
_SPELLING: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9 _-]*\Z")
_SEPARATORS: Final = re.compile(r"[ _-]")
_DIGEST: Final = re.compile(r"[a-f0-9]{64}\Z")
_INTEGER_TEXT: Final = re.compile(r"-?[0-9]+\Z")


class NormalFormRule(TypedDict):
    kind: str
    key: str


class NormalFormPlan(TypedDict):
    version: int
    ref: str
    baseSchemaDigest: str
    rules: list[NormalFormRule]


class NormalFormWitness(TypedDict):
    version: int
    baseSchemaDigest: str
    beforeShape: str
    afterShape: str
    rules: list[NormalFormRule]


class NormalFormResult(Record, frozen=True):
    """What :func:`apply_normal_form_plan` returns: the arguments to use and, only when a
    rule changed them, the witness of what changed."""

    args: dict[str, Any]
    witness: NormalFormWitness | None = None


class NormalFormEvidenceSummary(Record, frozen=True):
    """Counts of calls that arrived normalised (a witness is an observation, not a success)."""

    normalized_calls: int = 0
    rules_applied: int = 0
    succeeded: int = 0
    subsequent_failures: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "normalizedCalls": self.normalized_calls,
            "rulesApplied": self.rules_applied,
            "succeeded": self.succeeded,
            "subsequentFailures": self.subsequent_failures,
        }


# ------------------------------------------------------------------------------- helpers


def _utf16_length(text: str) -> int:
    """``String.prototype.length``: astral characters count twice."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _is_record(value: Any) -> bool:
    return isinstance(value, dict)


def _is_safe_key(key: str) -> bool:
    return _utf16_length(key) <= MAX_KEY_LENGTH and key not in UNSAFE_KEYS


def _is_one(value: Any) -> bool:
    """``value === 1`` (a boolean is not a number in JavaScript)."""
    return type(value) in (int, float) and value == 1


def spelling_form(text: str) -> str | None:
    """The spelling form of an identifier-like string, or None when it has none.

    >>> spelling_form("Output-Format"), spelling_form("RARE FORMAT"), spelling_form("1st")
    ('outputformat', 'rareformat', None)
    """
    if not _SPELLING.match(text):
        return None
    return _SEPARATORS.sub("", text.lower())


def unique_forms(values: Iterable[Any]) -> dict[str, str]:
    """Spelling form → original, for the forms exactly one of ``values`` produces.

    Colliding originals (``"a-b"`` and ``"a_b"``) are dropped together: a plan never chooses
    between two declared spellings. Values without a form are ignored.

    >>> unique_forms(["a-b", "a_b", "pdf"])
    {'pdf': 'pdf'}
    """
    groups: dict[str, list[str]] = {}
    for value in values:
        form = spelling_form(value)
        if form is not None:
            groups.setdefault(form, []).append(value)
    return {form: group[0] for form, group in groups.items() if len(group) == 1}


def _lossless_number(text: str) -> int | float | None:
    """The number ``text`` is the exact JavaScript text of, or None.

    ``Number(text)`` must be finite and ``String(Number(text))`` must give ``text`` back, so
    ``"01"``, ``"1.0"``, ``" 1"``, ``"+1"``, ``"1e0"``, ``"-0"`` and integers a double cannot
    hold are refused. Every text that survives the round trip is one Python's ``float`` reads
    to the same double as JavaScript.
    """
    try:
        number = float(text)
    except ValueError:
        return None
    if not is_finite_number(number) or js_string(number) != text:
        return None
    return int(text) if _INTEGER_TEXT.match(text) else number


# ---------------------------------------------------------------------------- derivation


def derive_normal_form_plan(ref: str, schema: Any) -> NormalFormPlan | None:
    """The plan a closed object schema licenses, or None when it licenses none.

    >>> schema = {"type": "object", "additionalProperties": False,
    ...           "properties": {"pageCount": {"type": "integer"}}}
    >>> derive_normal_form_plan("demo.render", schema)["rules"]
    [{'kind': 'key-form', 'key': 'pageCount'}, {'kind': 'optional-null', 'key': 'pageCount'}, \
{'kind': 'numeric-string', 'key': 'pageCount'}]
    """
    if not isinstance(ref, str) or not ref or _utf16_length(ref) > MAX_REF_LENGTH:
        return None
    if not _is_record(schema) or schema.get("type") != "object":
        return None
    if schema.get("additionalProperties") is not False:
        return None
    properties = schema.get("properties")
    if not _is_record(properties) or any(key in schema for key in COMBINATOR_KEYS):
        return None
    keys = sort_code_units(list(properties))
    if len(keys) > MAX_NORMAL_FORM_RULES or not all(_is_safe_key(key) for key in keys):
        return None
    declared_required = schema.get("required")
    required = declared_required if isinstance(declared_required, list) else []
    key_forms = set(unique_forms(keys).values())
    rules: list[NormalFormRule] = []
    for key in keys:
        prop = properties[key]
        if not _is_record(prop):
            continue
        if key in key_forms:
            rules.append({"kind": "key-form", "key": key})
        if not _is_required(required, key) and not _accepts(prop, None):
            rules.append({"kind": "optional-null", "key": key})
        if _type_is(prop, "number") or _type_is(prop, "integer"):
            rules.append({"kind": "numeric-string", "key": key})
        if _type_is(prop, "string") and _string_enum_forms(prop):
            rules.append({"kind": "enum-form", "key": key})
    if not rules:
        return None
    return {
        "version": NORMAL_FORM_VERSION,
        "ref": ref,
        "baseSchemaDigest": stable_json_hash(schema),
        "rules": rules[:MAX_NORMAL_FORM_RULES],
    }


def _is_required(required: Sequence[Any], key: str) -> bool:
    # ``new Set(required).has(key)``: only a string entry equal to the key counts.
    return any(type(entry) is str and entry == key for entry in required)


def _type_is(prop: Mapping[str, Any], name: str) -> bool:
    declared = prop.get("type")
    return type(declared) is str and declared == name


def _string_enum_forms(prop: Mapping[str, Any]) -> dict[str, str]:
    """The unique forms of a string-only ``enum``; empty when there is no such enum."""
    members = prop.get("enum")
    if not isinstance(members, list) or not all(type(m) is str for m in members):
        return {}
    return unique_forms(members)


# ------------------------------------------------------------------------ guards, proofs


def _is_rule(value: Any) -> bool:
    if not _is_record(value) or len(value) != 2:
        return False
    key = value.get("key")
    kind = value.get("kind")
    return (
        type(key) is str
        and _is_safe_key(key)
        and type(kind) is str
        and kind in NORMAL_FORM_RULE_KINDS
    )


def _is_digest(value: Any) -> bool:
    return type(value) is str and bool(_DIGEST.match(value))


def _are_rules(value: Any) -> bool:
    return (
        isinstance(value, list)
        and 0 < len(value) <= MAX_NORMAL_FORM_RULES
        and all(_is_rule(rule) for rule in value)
    )


def is_normal_form_plan(value: Any) -> bool:
    """The plan wire shape: exactly ``version`` (1), ``ref``, ``baseSchemaDigest``, ``rules``."""
    if not _is_record(value) or len(value) != 4 or not _is_one(value.get("version")):
        return False
    ref = value.get("ref")
    if type(ref) is not str or not ref or _utf16_length(ref) > MAX_REF_LENGTH:
        return False
    return _is_digest(value.get("baseSchemaDigest")) and _are_rules(value.get("rules"))


def is_normal_form_witness(value: Any) -> bool:
    """The witness wire shape: exactly the five keys, three 64-hex digests, 1..128 rules."""
    if not _is_record(value) or len(value) != 5 or not _is_one(value.get("version")):
        return False
    digests = (value.get("baseSchemaDigest"), value.get("beforeShape"), value.get("afterShape"))
    return all(_is_digest(digest) for digest in digests) and _are_rules(value.get("rules"))


def proves_normal_form_plan(plan: Any, schema: Any) -> bool:
    """True iff ``plan`` is exactly what :func:`derive_normal_form_plan` gives for its ref
    and ``schema`` (same rules in the same order, same schema digest)."""
    if not is_normal_form_plan(plan):
        return False
    try:
        derived = derive_normal_form_plan(plan["ref"], schema)
        return derived is not None and stable_json_hash(derived) == stable_json_hash(plan)
    except Exception:
        # A schema the hash cannot read proves nothing; it never fails the caller.
        return False


# ---------------------------------------------------------------------------- application


def apply_normal_form_plan(
    ref: str, schema: Any, args: dict[str, Any], plan: Any = None
) -> NormalFormResult:
    """Normalise ``args`` under a proven ``plan``; every refusal returns ``args`` itself.

    Arguments the schema accepts are never touched (the identity law that keeps every rare
    enum member and every nullable value), and a candidate is used only when at least one
    rule applied and the whole candidate validates against the unchanged schema.
    """
    unchanged = NormalFormResult(args)
    if not _is_record(plan) or plan.get("ref") != ref or _accepts(schema, args):
        return unchanged
    if not proves_normal_form_plan(plan, schema):
        return unchanged
    properties: dict[str, Any] = schema["properties"]
    candidate = dict(args)
    applied: list[NormalFormRule] = []
    key_targets = unique_forms(rule["key"] for rule in plan["rules"] if rule["kind"] == "key-form")
    moved_to: set[str] = set()
    for key in sort_code_units(list(args)):
        if key in properties:
            continue
        form = spelling_form(key)
        target = key_targets.get(form) if form is not None else None
        if target is None:
            continue
        # Two spellings of one key, or an alias beside the key itself: never pick one.
        if target in args or target in moved_to:
            return unchanged
        moved_to.add(target)
        candidate[target] = args[key]
        del candidate[key]
        applied.append({"kind": "key-form", "key": target})
    for rule in plan["rules"]:
        kind, key = rule["kind"], rule["key"]
        if kind == "key-form" or key not in candidate:
            continue
        value = candidate[key]
        prop = properties[key]
        if _accepts(prop, value):
            continue
        if kind == "optional-null" and value is None:
            del candidate[key]
            applied.append(rule)
        elif kind == "numeric-string" and type(value) is str:
            number = _lossless_number(value)
            if number is not None and _accepts(prop, number):
                candidate[key] = number
                applied.append(rule)
        elif kind == "enum-form" and type(value) is str:
            form = spelling_form(value)
            members = prop.get("enum") if _is_record(prop) else None
            forms = (
                unique_forms(m for m in members if type(m) is str)
                if isinstance(members, list)
                else {}
            )
            member = forms.get(form) if form is not None else None
            if member is not None and _accepts(prop, member):
                candidate[key] = member
                applied.append(rule)
    # Half a repair is not a correction: the caller's validation must see the real failure.
    if not applied or not _accepts(schema, candidate):
        return unchanged
    witness: NormalFormWitness = {
        "version": NORMAL_FORM_VERSION,
        "baseSchemaDigest": plan["baseSchemaDigest"],
        "beforeShape": stable_json_hash(shape_signature(args)),
        "afterShape": stable_json_hash(shape_signature(candidate)),
        "rules": applied,
    }
    return NormalFormResult(candidate, witness)


# ------------------------------------------------------------------------------- evidence


def normal_form_evidence_summary(traces: Iterable[Any]) -> NormalFormEvidenceSummary:
    """Count the operations that carry a well-formed ``normalization`` witness.

    ``traces`` are JSON-shaped (``{"operations": [{..., "normalization": {...}}]}``) or
    records with an ``operations`` attribute whose items have ``normalization``/``outcome``.
    """
    calls = rules = succeeded = failures = 0
    for trace in traces:
        operations = trace.get("operations", ()) if isinstance(trace, Mapping) else trace.operations
        for operation in operations:
            if isinstance(operation, Mapping):
                witness, outcome = operation.get("normalization"), operation.get("outcome")
            else:
                witness = getattr(operation, "normalization", None)
                outcome = getattr(operation, "outcome", None)
            if not witness or not is_normal_form_witness(witness):
                continue
            calls += 1
            rules += len(witness["rules"])
            if outcome == "succeeded":
                succeeded += 1
            else:
                failures += 1
    return NormalFormEvidenceSummary(calls, rules, succeeded, failures)
