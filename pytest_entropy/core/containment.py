"""JSON Schema containment: does every value one schema accepts also pass another?

:func:`containment_findings` answers "is ``inner`` ⊆ ``outer``?" the way a ratchet needs it:
not one boolean but every reason it is not, each at a parameter path with the keyword (the
*rule*) that decided it. A finding is *decided* when the checker knows a value ``inner``
accepts and ``outer`` refuses; it is *undecided* when the checker cannot tell (a regular
expression replaced by another, ``not``, ``if``/``then``, an external ``$ref``, ...) and then
says why in its ``reason``. Callers that gate treat undecided as refused: pessimism is the
safe default.

What it decides, by keyword family (the rest are compared for equality):

* ``true``/``false``/``{}`` schemas, ``type`` (``integer`` inside ``number``), ``enum`` and
  ``const`` (a finite schema is checked value by value with the replay's own validator, which
  is exact), ``boolean``/``null`` as finite types;
* strings: ``minLength``/``maxLength``, ``pattern`` (kept, dropped or one of a few patterns
  that match every string) and ``format`` (only the formats the replay asserts);
* numbers: each side's lower and upper bound as (value, inclusive), from ``minimum``/
  ``maximum`` and ``exclusiveMinimum``/``exclusiveMaximum`` together, moved onto the integers
  (or an integer ``multipleOf``'s multiples) when only integers meet, and decided under every
  reading of the spellings (draft 4's boolean form, later drafts' number form); ``multipleOf``;
* arrays: ``items`` (schema and tuple forms, ``prefixItems``, ``additionalItems``),
  ``minItems``/``maxItems``, ``uniqueItems``;
* objects: ``properties``, ``required``, ``additionalProperties``, ``patternProperties``,
  ``minProperties``/``maxProperties``;
* ``allOf`` (outer: every part; inner: merged when the merge is exact, references followed),
  ``anyOf`` and ``oneOf`` (inner: every branch; outer: the branches that can take the value,
  told apart by type or by a discriminating ``const``/``enum`` property, see
  :mod:`~pytest_entropy.core.containment_unions`), ``$ref`` to a JSON pointer inside the same
  schema (cycles assumed contained, which is sound for finite JSON values; equal text counts
  as equal only when every pointer inside it reaches equal text on both sides). An external
  ``$ref`` is never fetched.

Paths: ``""`` is the tool's arguments object, ``a.b`` a nested property, ``a[]`` every array
element, ``a[0]`` one tuple position, ``a.*`` a property no schema names, ``a.~P`` properties
matching the pattern ``P``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from pytest_entropy.core.containment_unions import UnionChecks
from pytest_entropy.core.schema_keywords import (
    ANY,
    CONTEXTUAL,
    DECIDED,
    MAX_DEPTH,
    NOTHING,
    UNIVERSAL_PATTERNS,
    Finding,
    check_lengths,
    empty_interval,
    fragment_document,
    fragment_validator,
    integer_step,
    interval,
    is_finite_number,
    item_layout,
    join_path,
    looser_bound,
    mapping,
    member_schema,
    merge_all_of,
    name_set,
    numeric_bound,
    readers_for,
    refs_in,
    resolve_pointer,
    snap,
    type_set,
    without,
)
from pytest_entropy.core.schema_strip import ANNOTATION_KEYWORDS, StrippedDigests, strip_annotations

__all__ = ["ANNOTATION_KEYWORDS", "Finding", "containment_findings", "strip_annotations"]


_FINITE_RANGE = 256

# The checker's methods all take a pair of (resolved) schemas and the findings list.
Schema = dict[str, Any]
Findings = list[Finding]


def _surely_infinite(schema: dict[str, Any], readers: tuple[str, ...]) -> bool:
    """Whether a non-finite-looking schema certainly accepts infinitely many values (no
    keyword that could squeeze it to a few: a pattern, a zero length, close bounds, ...)."""
    for word, value in schema.items():
        if word in ANNOTATION_KEYWORDS or word.startswith("x-"):
            continue
        if word in ("pattern", "not", "if", "propertyNames", "contains"):
            return False
        if word in ("maxLength", "maxItems", "maxProperties") and value == 0:
            return False
        if word not in DECIDED:
            return False
    kinds = type_set(schema)
    if kinds is None:
        return False
    if kinds & {"string", "array", "object"}:
        return True
    if not kinds & {"integer", "real"}:
        return False
    real = "real" in kinds
    for reader in readers:
        low, high = interval(schema, reader, None if real else 1)
        if low is None or high is None:
            continue
        # Integers between two bounds, or multiples of a step, are finitely many.
        if not real or low[0] >= high[0] or "multipleOf" in schema:
            return False
    return True


def _bound_words(schema: dict[str, Any], rule: str) -> Any:
    """What ``schema`` says on the side of the bound ``rule``: the same keyword's value, or
    its own bound keywords (``{"exclusiveMinimum": 0}`` against a ``minimum``)."""
    if rule in schema:
        return schema[rule]
    lower = rule in ("minimum", "exclusiveMinimum")
    side = ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
    words = {word: schema[word] for word in side if word in schema}
    return words or None


class _Checker(UnionChecks):
    """One containment question over two root schemas (for ``$ref``)."""

    def __init__(self, outer_root: Any, inner_root: Any) -> None:
        self.outer_root = outer_root
        self.inner_root = inner_root
        self.readers = readers_for(outer_root, inner_root)
        self._equal_targets: dict[str, bool] = {}
        self.assumed: set[tuple[int, int]] = set()
        self._digests = StrippedDigests()  # same_schema's answers, each node hashed once

    def same(self, a: Any, b: Any) -> bool:
        """``a`` and ``b`` accept the same values: the same text, and every ``$ref`` inside
        (followed to the end) pointing at the same text under both roots. Equal text alone is
        not enough: ``{"$ref": "#/$defs/M"}`` means two things when ``M`` changed."""
        if not self._digests.same(a, b):
            return False
        pending, seen = list(refs_in(a)), set[str]()
        while pending:
            ref = pending.pop()
            if ref in seen or not ref.startswith("#"):
                continue  # an outside document is never fetched: the same address, the same
            seen.add(ref)
            equal = self._equal_targets.get(ref)
            theirs = resolve_pointer(self.outer_root, ref)
            if equal is None:
                mine = resolve_pointer(self.inner_root, ref)
                equal = theirs is not None and mine is not None and self._digests.same(theirs, mine)
                self._equal_targets[ref] = equal
            if not equal:
                return False
            pending.extend(refs_in(theirs))
        return True

    def flipped(self) -> _Checker:
        return _Checker(self.inner_root, self.outer_root)

    # -- plumbing ------------------------------------------------------------------

    def quiet(self, outer: Any, inner: Any, path: str, depth: int) -> list[Finding]:
        findings: list[Finding] = []
        self.check(outer, inner, path, depth, findings)
        return findings

    def resolve(self, schema: Any, root: Any, path: str, out: Findings) -> Any:
        """The schema with its ``$ref`` followed (siblings kept as an ``allOf``)."""
        for _ in range(MAX_DEPTH):
            if schema is True:
                return ANY
            if schema is False:
                return NOTHING
            if type(schema) is not dict:
                out.append(Finding(path, "undecided", False, schema, schema, "not a schema"))
                return None
            ref = schema.get("$ref")
            if ref is None:
                return schema
            target = resolve_pointer(root, ref)
            if target is None:
                # Never fetched: an external or broken reference is not understood.
                why = f"the $ref {ref} points outside the schema (never fetched) or nowhere"
                out.append(Finding(path, "undecided", False, ref, ref, why))
                return None
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if any(key not in ANNOTATION_KEYWORDS for key in siblings):
                return {"allOf": [siblings, target]}
            schema = target
        why = f"$ref chains longer than {MAX_DEPTH}"
        out.append(Finding(path, "undecided", False, schema, schema, why))
        return None

    # -- the relation ----------------------------------------------------------------

    def check(self, outer: Any, inner: Any, path: str, depth: int, out: Findings) -> None:
        """Append to ``out`` every reason ``inner`` ⊄ ``outer`` at ``path``."""
        if depth > MAX_DEPTH:
            out.append(Finding(path, "undecided", False, outer, inner, f"nested over {MAX_DEPTH}"))
            return
        outer = self.resolve(outer, self.outer_root, path, out)
        inner = self.resolve(inner, self.inner_root, path, out)
        if outer is None or inner is None:
            return
        key = (id(outer), id(inner))
        if key in self.assumed or inner == NOTHING or self.same(outer, inner):
            return
        self.assumed.add(key)
        try:
            self._check(outer, inner, path, depth + 1, out)
        finally:
            self.assumed.discard(key)

    def _check(self, outer: Schema, inner: Schema, path: str, depth: int, out: Findings) -> None:
        if not any(key not in ANNOTATION_KEYWORDS for key in outer):
            return  # outer accepts everything
        if outer == NOTHING:
            out.append(Finding(path, "false", True, False, inner))
            return
        finite = self._finite(inner)
        if finite is not None:
            self._check_values(outer, inner, finite, path, out)
            return
        # Inner combinators first: every branch must fit.
        if type(inner.get("allOf")) is list:
            self._inner_all_of(outer, inner, path, depth, out)
            return
        for word in ("anyOf", "oneOf"):
            if type(inner.get(word)) is list:
                self._inner_union(outer, inner, word, path, depth, out)
                return
        # Outer conjunction: inner must fit every part.
        if type(outer.get("allOf")) is list:
            for part in [without(outer, "allOf"), *outer["allOf"]]:
                self.check(part, inner, path, depth, out)
            return
        for word in ("anyOf", "oneOf"):
            branches = outer.get(word)
            if type(branches) is list:
                self.check(without(outer, word), inner, path, depth, out)
                self._fit_branches(outer, inner, word, branches, path, depth, out)
                return
        self._check_plain(outer, inner, path, depth, out)

    def _inner_all_of(
        self, outer: Schema, inner: Schema, path: str, depth: int, out: Findings
    ) -> None:
        # References followed first, so a model behind a ``$ref`` merges like an inline one;
        # a part that is only annotations (or ``true``) adds nothing.
        scratch: Findings = []
        parts = [self.resolve(part, self.inner_root, path, scratch) for part in inner["allOf"]]
        rest = without(inner, "allOf")
        if not scratch:
            kept = [part for part in parts if any(k not in ANNOTATION_KEYWORDS for k in part)]
            if len(kept) == 1 and not any(k not in ANNOTATION_KEYWORDS for k in rest):
                self.check(outer, kept[0], path, depth, out)  # keeps its identity: cycles end
                return
            merged = merge_all_of({**rest, "allOf": kept})
            if merged is not None:
                self.check(outer, merged, path, depth, out)
                return
        parts = [rest, *inner["allOf"]]
        if not any(not self.quiet(outer, part, path, depth) for part in parts):
            why = "the allOf parts do not merge into one schema and no part alone fits"
            out.append(Finding(path, "undecided", False, outer, inner, why))

    def _finite(self, schema: Schema) -> list[Any] | None:
        """The candidate values of a finite schema (enum, const, boolean/null only)."""
        if "const" in schema:
            return [schema["const"]]
        if type(schema.get("enum")) is list:
            return list(schema["enum"])
        kinds = type_set(schema)
        if kinds is not None and kinds <= {"boolean", "null"} and "type" in schema:
            return [
                value
                for kind, value in (("boolean", True), ("boolean", False), ("null", None))
                if kind in kinds
            ]
        if kinds != frozenset({"integer"}):
            return None
        # A small integer range in any spelling: the integers every reading may let through
        # (the replay's own check then keeps the ones it accepts).
        lows, highs = [], []
        for reader in self.readers:
            low, high = interval(schema, reader, 1)
            if low is None or high is None:
                return None
            lows.append(low[0])
            highs.append(high[0])
        first, last = int(min(lows)), int(max(highs))
        if not 0 <= last - first <= _FINITE_RANGE:
            return None
        return list(range(first, last + 1))

    def _check_values(
        self, outer: Schema, inner: Schema, values: list[Any], path: str, out: Findings
    ) -> None:
        """A finite inner schema: exact, value by value, with the replay's own decision
        (:func:`~pytest_entropy.core.validation.accepts`, which refuses what it cannot
        check, as the replay does)."""
        from pytest_entropy.core.validation import accepts

        inside = fragment_document(self.inner_root, inner)
        outside = fragment_document(self.outer_root, outer)
        for value in values:
            if accepts(inside, value) and not accepts(outside, value):
                self._refused_value(outer, value, path, out)

    def _refused_value(self, outer: Schema, value: Any, path: str, out: Findings) -> None:
        """The finding for ``value``, which ``outer`` refuses: python-jsonschema's best error
        names the keyword and where below ``path`` (when it sees the refusal too)."""
        from jsonschema.exceptions import best_match

        explaining = fragment_validator(self.outer_root, outer)
        try:
            error = best_match(explaining.iter_errors(value)) if explaining is not None else None
        except Exception:
            error = None
        if error is None:
            # Only the replay refuses it (a TypeBox decision jsonschema does not share).
            rule = "const" if "const" in outer else "enum" if "enum" in outer else "type"
            out.append(Finding(path, rule, True, outer.get(rule), value))
            return
        where = path
        for part in error.absolute_path:
            where = f"{where}[{part}]" if type(part) is int else join_path(where, str(part))
        out.append(Finding(where, str(error.validator), True, error.validator_value, value))

    def _check_plain(
        self, outer: Schema, inner: Schema, path: str, depth: int, out: Findings
    ) -> None:
        inner_types, outer_types = type_set(inner), type_set(outer)
        if inner_types is None or outer_types is None:
            why = "a type keyword that names no JSON type"
            out.append(Finding(path, "undecided", False, outer.get("type"), inner.get("type"), why))
            return
        if inner_types <= {"integer", "real"} and self._no_numbers(inner, inner_types):
            return  # bounds that no number meets, under every reading: it accepts nothing
        if "enum" in outer or "const" in outer:
            # Inner is infinite; only a restricting keyword could still squeeze it inside.
            rule = "enum" if "enum" in outer else "const"
            decided = _surely_infinite(inner, self.readers)
            why = "" if decided else f"cannot list the values to compare with the {rule}"
            out.append(
                Finding(
                    path,
                    rule if decided else "undecided",
                    decided,
                    outer[rule],
                    inner.get(rule),
                    why,
                )
            )
            return
        if "real" in inner_types - outer_types and self._only_integers(inner):
            inner_types = inner_types - {"real"}  # ``number`` pinned to one integer value
        if not inner_types <= outer_types:
            out.append(Finding(path, "type", True, outer.get("type"), inner.get("type")))
        common = inner_types & outer_types
        if "string" in common:
            self._strings(outer, inner, path, out)
        if common & {"integer", "real"}:
            self._numbers(outer, inner, common, path, out)
        if "array" in common:
            self._arrays(outer, inner, path, depth, out)
        if "object" in common:
            self._objects(outer, inner, path, depth, out)
        for word, value in outer.items():
            if word in DECIDED or word in ANNOTATION_KEYWORDS or word.startswith("x-"):
                continue
            if word not in inner or not self.same(value, inner[word]):
                why = f"{word} is not a keyword containment decides, and it changed"
                out.append(Finding(path, "undecided", False, {word: value}, inner.get(word), why))
        for word in inner:
            if word in CONTEXTUAL and word not in outer:
                why = f"{word} depends on its neighbours"
                out.append(Finding(path, "undecided", False, None, {word: inner[word]}, why))

    def _pinned(self, schema: Schema) -> Fraction | None:
        """The one number bounds allow, the same under every reading, or ``None``."""
        point: Fraction | None = None
        for reader in self.readers:
            low, high = interval(schema, reader, None)
            if low is None or high is None or empty_interval(low, high) or low[0] != high[0]:
                return None
            if point is not None and point != low[0]:
                return None
            point = low[0]
        return point

    def _only_integers(self, schema: Schema) -> bool:
        """Bounds that pin every number to one integer (without a ``multipleOf``, which
        TypeBox reads with a tolerance)."""
        point = self._pinned(schema)
        return "multipleOf" not in schema and point is not None and point.denominator == 1

    def _no_numbers(self, schema: Schema, kinds: frozenset[str]) -> bool:
        step = integer_step(schema, "real" not in kinds)
        return all(empty_interval(*interval(schema, reader, step)) for reader in self.readers)

    # -- per type ------------------------------------------------------------------

    def _strings(self, outer: Schema, inner: Schema, path: str, out: Findings) -> None:
        check_lengths(outer, inner, "minLength", "maxLength", path, out)
        pattern = outer.get("pattern")
        if type(pattern) is str and pattern not in UNIVERSAL_PATTERNS:
            theirs = inner.get("pattern")
            if theirs != pattern:
                decided = theirs is None or theirs in UNIVERSAL_PATTERNS
                why = "" if decided else "a pattern replaced by another"
                out.append(
                    Finding(
                        path, "pattern" if decided else "undecided", decided, pattern, theirs, why
                    )
                )
        from pytest_entropy.core.validation import REFERENCE_FORMATS

        form = outer.get("format")
        if form in REFERENCE_FORMATS and inner.get("format") != form:
            out.append(Finding(path, "format", True, form, inner.get("format")))

    def _numbers(
        self, outer: Schema, inner: Schema, common: frozenset[str], path: str, out: Findings
    ) -> None:
        # Only the inner's numbers of a type the outer allows matter here (the rest were
        # reported as ``type``). Among integers, a bound is moved onto the integers (or the
        # multiples of an integer ``multipleOf``) first: ``exclusiveMinimum: 0`` is then
        # ``minimum: 1``, and ``exclusiveMinimum: 0.5`` too.
        step = integer_step(inner, "real" not in common)
        for lower in (True, False):
            for reader in self.readers:
                theirs = numeric_bound(outer, lower, reader)
                if theirs is None:
                    continue
                low, high = interval(inner, reader, step)
                if empty_interval(low, high):
                    continue  # read this way, the inner accepts no number at all
                if looser_bound(low if lower else high, snap(theirs[0], lower, step), lower):
                    rule = theirs[1]
                    out.append(
                        Finding(path, rule, True, outer.get(rule), _bound_words(inner, rule))
                    )
                    break
        step = outer.get("multipleOf")
        if is_finite_number(step) and step > 0:
            mine = inner.get("multipleOf")
            if is_finite_number(mine) and mine > 0:
                fits = (Fraction(mine) / Fraction(step)).denominator == 1
            else:
                # Integers are multiples of any step that divides one; one pinned number is
                # a multiple or not.
                point = self._pinned(inner)
                fits = (common <= {"integer"} and (1 / Fraction(step)).denominator == 1) or (
                    point is not None and (point / Fraction(step)).denominator == 1
                )
            if not fits:
                out.append(Finding(path, "multipleOf", True, step, mine))

    def _arrays(self, outer: Schema, inner: Schema, path: str, depth: int, out: Findings) -> None:
        check_lengths(outer, inner, "minItems", "maxItems", path, out)
        if outer.get("uniqueItems") is True and inner.get("uniqueItems") is not True:
            out.append(Finding(path, "uniqueItems", True, True, inner.get("uniqueItems")))
        outer_prefix, outer_rest = item_layout(outer)
        inner_prefix, inner_rest = item_layout(inner)
        longest = inner.get("maxItems")
        positions = max(len(outer_prefix), len(inner_prefix))
        for index in range(positions):
            if type(longest) is int and index >= longest:
                break
            mine = inner_prefix[index] if index < len(inner_prefix) else inner_rest
            theirs = outer_prefix[index] if index < len(outer_prefix) else outer_rest
            self._member(theirs, mine, f"{path}[{index}]", "items", depth, out)
        if not (type(longest) is int and longest <= positions):
            self._member(outer_rest, inner_rest, f"{path}[]", "items", depth, out)
        if "contains" in outer and not self.same(outer["contains"], inner.get("contains")):
            why = "contains changed"
            out.append(
                Finding(path, "undecided", False, outer["contains"], inner.get("contains"), why)
            )

    def _objects(self, outer: Schema, inner: Schema, path: str, depth: int, out: Findings) -> None:
        check_lengths(outer, inner, "minProperties", "maxProperties", path, out)
        outer_required = name_set(outer.get("required"))
        inner_required = name_set(inner.get("required"))
        for name in sorted(outer_required - inner_required):
            out.append(Finding(join_path(path, name), "required", True, True, False))
        outer_props = mapping(outer.get("properties"))
        inner_props = mapping(inner.get("properties"))
        outer_patterns = mapping(outer.get("patternProperties"))
        inner_patterns = mapping(inner.get("patternProperties"))
        same_patterns = self.same(outer_patterns, inner_patterns)
        for name in sorted({*outer_props, *inner_props}):
            theirs = member_schema(outer, outer_props, outer_patterns, name)
            mine = member_schema(inner, inner_props, inner_patterns, name)
            if theirs is None or mine is None:
                why = "a patternProperties pattern the linear-time engine cannot run"
                out.append(Finding(join_path(path, name), "undecided", False, theirs, mine, why))
                continue
            self._member(theirs, mine, join_path(path, name), "additionalProperties", depth, out)
        if not same_patterns:
            for pattern in sorted({*outer_patterns, *inner_patterns}):
                where = join_path(path, "~" + pattern)
                theirs = outer_patterns.get(pattern, outer.get("additionalProperties", True))
                mine = inner_patterns.get(pattern, inner.get("additionalProperties", True))
                found = self.quiet(theirs, mine, where, depth)
                if found and (pattern not in outer_patterns or pattern not in inner_patterns):
                    rule = "patternProperties"
                    decided = pattern not in outer_patterns and theirs is False
                    why = "" if decided else "patternProperties changed"
                    out.append(
                        Finding(where, rule if decided else "undecided", decided, theirs, mine, why)
                    )
                else:
                    out.extend(found)
        self._member(
            outer.get("additionalProperties", True),
            inner.get("additionalProperties", True),
            join_path(path, "*"),
            "additionalProperties",
            depth,
            out,
        )

    def _member(
        self, outer: Any, inner: Any, path: str, rule: str, depth: int, out: Findings
    ) -> None:
        """A member schema; a member ``false`` now accepting something is ``rule``."""
        if outer is False or outer == NOTHING:
            if inner is not False and inner != NOTHING:
                out.append(Finding(path, rule, True, False, inner))
            return
        self.check(outer, inner, path, depth, out)


def containment_findings(outer: Any, inner: Any, path: str = "") -> list[Finding]:
    """Every reason a value ``inner`` accepts may be refused by ``outer`` (empty: ⊆).

    >>> containment_findings({"type": "string"}, {"type": ["string", "number"]})[0].rule
    'type'
    """
    checker = _Checker(outer, inner)
    findings = checker.quiet(outer, inner, path, 0)
    unique: dict[tuple[str, str, bool], Finding] = {}
    for finding in findings:
        unique.setdefault((finding.path, finding.rule, finding.decided), finding)
    return list(unique.values())
