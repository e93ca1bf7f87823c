"""``accepts(schema, args)``: does a recorded call pass its tool's schema (spec §2.9)?

The reference judges every recorded call with TypeBox 1.3.8's ``Value.Check`` (its host
registry pins ``typebox`` 1.3.8), so this module does too: :mod:`~pytest_entropy.core.typebox`
compiles a schema into closures with exactly TypeBox's decisions (string lengths in its
grapheme count, ``multipleOf`` with its tolerance, ``enum``/``const``/``uniqueItems`` on
JavaScript values, its format registry, its ``$ref`` resolution). Replay in the compile
gate, the trial, ``watch``, certification and :func:`~pytest_entropy.core.enforce.validate_call`
all decide through :func:`accepts` or :class:`CallChecks`; docs/decisions.md lists every
place the decision differs from JSON Schema as python-jsonschema reads it.

* any exception while checking (TypeBox throws on a pattern JavaScript cannot compile)
  counts as a rejection;
* a ``$ref`` is resolved only inside the schema, the way TypeBox searches it; a ref that
  names nothing there and is not a bare fragment (``https://``, ``file://``, ``other.json``)
  is never fetched. It is not enforceable, so the value it guards is accepted and the ref
  counted (:func:`collect_external_refs`), as an unsupported pattern is (docs/decisions.md,
  "No $ref outside the schema is fetched");
* a pattern RE2 cannot run is accepted and counted (core.regex).

Checks are built once per schema and reused: by object identity first (replay checks many
calls against one schema object), then by the schema's digest. :func:`validator_for_schema`
still builds python-jsonschema validators, for what reads their error paths and messages
(a refusal's explanation in ``validate_call``); it decides nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlsplit

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.regex import (
    note_external_ref,
    note_external_refs,
    pattern_search,
    watch_unenforced,
)
from pytest_entropy.core.typebox import CompiledCheck, compile_schema

if TYPE_CHECKING:
    from jsonschema import FormatChecker
    from jsonschema.protocols import Validator
    from referencing import Registry

__all__ = [
    "REFERENCE_FORMATS",
    "CallChecks",
    "accepts",
    "collect_external_refs",
    "note_external_refs",
    "typebox_check",
    "validator_for_schema",
]

REFERENCE_FORMATS: Final = (
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "url",
    "uuid",
    "json-pointer",
    "json-pointer-uri-fragment",
    "relative-json-pointer",
    "regex",
)

_POINTER_FRAGMENT: Final = re.compile(
    r"#(?:/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*\Z", re.IGNORECASE
)


def _url(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https", "ftp") and bool(parts.hostname)


def _pointer_fragment(value: object) -> bool:
    return not isinstance(value, str) or bool(_POINTER_FRAGMENT.match(value))


def _iri(rule: str) -> Any:
    """An IRI check as RFC 3987 defines it: percent-encode the non-ASCII characters, then
    the result must be a URI (or URI reference) by RFC 3986."""

    def check(value: object) -> bool:
        if not isinstance(value, str):
            return True
        from rfc3986_validator import validate_rfc3986  # type: ignore[import-untyped]

        ascii_form = quote(value, safe="".join(chr(c) for c in range(0x21, 0x7F)))
        return validate_rfc3986(ascii_form, rule=rule) is not None

    return check


@cache
def _format_checker() -> FormatChecker:
    """The reference's format registry (built on first use: jsonschema loads lazily)."""
    from jsonschema import FormatChecker

    base = FormatChecker()
    checker = FormatChecker(formats=())
    for name in REFERENCE_FORMATS:
        if name in base.checkers:
            function, raises = base.checkers[name]
            checker.checkers[name] = (function, raises)
    checker.checkers["url"] = (_url, ())
    checker.checkers["json-pointer-uri-fragment"] = (_pointer_fragment, ())
    if "iri" not in checker.checkers:
        checker.checkers["iri"] = (_iri("URI"), ())
    if "iri-reference" not in checker.checkers:
        checker.checkers["iri-reference"] = (_iri("URI_reference"), ())
    return checker


# ------------------------------------------------------------- regex keywords on RE2
#
# jsonschema evaluates `pattern`, `patternProperties` (and, through them,
# `additionalProperties` and `unevaluatedProperties`) with Python's backtracking `re`. These
# replacements run every schema pattern on RE2 instead (core.regex). A pattern RE2 cannot
# compile is never enforced and never makes a key "additional": replay must not fail on a
# pattern it cannot evaluate safely.


def _matches(pattern: Any, text: str) -> bool | None:
    if not isinstance(pattern, str):
        return None
    return pattern_search(pattern, text)


def _pattern_keyword(validator: Any, pattern: Any, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and _matches(pattern, instance) is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties_keyword(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object") or not isinstance(patterns, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key) is True:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_keys(instance: dict[str, Any], schema: Any) -> list[str]:
    declared = schema.get("properties", {}) if isinstance(schema, dict) else {}
    patterns = schema.get("patternProperties", {}) if isinstance(schema, dict) else {}
    if not isinstance(declared, dict):
        declared = {}
    if not isinstance(patterns, dict):
        patterns = {}
    return [
        key
        for key in instance
        if key not in declared and not any(_matches(p, key) is not False for p in patterns)
    ]


def _additional_properties_keyword(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Any:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = _additional_keys(instance, schema)
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        listed = ", ".join(repr(key) for key in sorted(extras))
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _evaluated_keys(
    validator: Any, instance: dict[str, Any], schema: Any, depth: int = 0
) -> set[str]:
    """Keys some applicator of ``schema`` evaluates (for ``unevaluatedProperties``)."""
    if not isinstance(schema, dict) or depth > 64:
        return set(instance) if depth > 64 else set()
    keys: set[str] = set()
    ref = schema.get("$ref")
    if isinstance(ref, str):
        try:
            resolved = validator._resolver.lookup(ref)
            keys |= _evaluated_keys(
                validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
                instance,
                resolved.contents,
                depth + 1,
            )
        except Exception:
            return set(instance)  # unresolvable here: do not count anything as unevaluated
    properties = schema.get("properties")
    if isinstance(properties, dict):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if keyword in schema:
            keys |= {
                key
                for key, value in instance.items()
                if validator.evolve(schema=schema[keyword]).is_valid(value)
            }
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict):
        keys |= {key for key in instance if any(_matches(p, key) is not False for p in patterns)}
    dependent = schema.get("dependentSchemas")
    if isinstance(dependent, dict):
        for name, subschema in dependent.items():
            if name in instance:
                keys |= _evaluated_keys(validator, instance, subschema, depth + 1)
    for keyword in ("allOf", "oneOf", "anyOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            for subschema in branches:
                if validator.evolve(schema=subschema).is_valid(instance):
                    keys |= _evaluated_keys(validator, instance, subschema, depth + 1)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"], depth + 1)
            keys |= _evaluated_keys(validator, instance, schema.get("then"), depth + 1)
        else:
            keys |= _evaluated_keys(validator, instance, schema.get("else"), depth + 1)
    return keys


def _unevaluated_properties_keyword(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Any:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    rejected = [
        key
        for key in instance
        if key not in evaluated and not validator.evolve(schema=unevaluated).is_valid(instance[key])
    ]
    if rejected:
        listed = ", ".join(repr(key) for key in sorted(rejected))
        yield ValidationError(f"Unevaluated properties are not allowed ({listed})")


# ------------------------------------------------------- $ref only inside the schema
#
# jsonschema's default registry retrieves any ref it does not hold with urlopen: over the
# network for http(s) and from disk for file://, once per evaluation (the registry is
# immutable, so a cached validator never keeps what it fetched). Whoever serves the URL
# would decide what replay enforces, and a server that never answers would hang it. Every
# validator here gets a registry whose retrieval refuses instead; the ref keywords treat a
# refused ref as not enforceable (accept, count), the way an unsupported pattern is.


class _ExternalRef(Exception):
    """Raised by the registry for a ref outside the schema; never leaves this module."""


def _refuse_retrieval(uri: str) -> Any:
    note_external_ref(uri)  # recorded at every use, like an unsupported pattern
    raise _ExternalRef(uri)


@cache
def _local_registry() -> Registry[Any]:
    from referencing import Registry

    return Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def _caused_by_external_ref(error: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, _ExternalRef):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _unless_external(keyword: Any) -> Any:
    """``keyword`` that yields nothing more once a ref it follows turns out external."""

    def checked(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        try:
            yield from keyword(validator, value, instance, schema) or ()
        except Exception as error:
            if not _caused_by_external_ref(error):
                raise

    return checked


@contextmanager
def _collect_refs() -> Iterator[set[str]]:
    with watch_unenforced() as found:
        yield found.refs


def collect_external_refs() -> AbstractContextManager[set[str]]:
    """The external refs met inside the block, gathered into the yielded set (a view of
    :func:`~pytest_entropy.core.regex.watch_unenforced`'s record)."""
    return _collect_refs()


_REPLACED_KEYWORDS: Final = {
    "pattern": _pattern_keyword,
    "patternProperties": _pattern_properties_keyword,
    "additionalProperties": _additional_properties_keyword,
    "unevaluatedProperties": _unevaluated_properties_keyword,
}
# Keywords that look refs up: each becomes its own version behind _unless_external.
_REF_KEYWORDS: Final = ("$ref", "$dynamicRef", "$recursiveRef", "unevaluatedItems")


@cache
def _linear_time(cls: Any) -> Any:
    """``cls`` with the regex keywords it knows replaced by their RE2 versions and the ref
    keywords by versions that do not enforce an external ref."""
    from jsonschema.validators import extend

    replacements = {k: v for k, v in _REPLACED_KEYWORDS.items() if k in cls.VALIDATORS}
    replacements.update(
        {k: _unless_external(cls.VALIDATORS[k]) for k in _REF_KEYWORDS if k in cls.VALIDATORS}
    )
    return extend(cls, validators=replacements)  # type: ignore[no-untyped-call]


_by_identity: dict[int, tuple[Any, Validator]] = {}
_by_digest: dict[str, Validator] = {}
_CACHE_LIMIT: Final = 4096


def validator_for_schema(schema: dict[str, Any]) -> Validator:
    """The (cached) validator of one schema."""
    cached = _by_identity.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    digest = stable_json_hash(schema)
    validator = _by_digest.get(digest)
    if validator is None:
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for

        cls = _linear_time(validator_for(schema, default=Draft202012Validator))
        validator = cls(schema, format_checker=_format_checker(), registry=_local_registry())
        if len(_by_digest) >= _CACHE_LIMIT:
            _by_digest.clear()
        _by_digest[digest] = validator
    if len(_by_identity) >= _CACHE_LIMIT:
        _by_identity.clear()
    # Keep the schema object alive beside its id so the id cannot be reused by another.
    _by_identity[id(schema)] = (schema, validator)
    return validator


_checks_by_identity: dict[int, tuple[Any, CompiledCheck]] = {}
_checks_by_digest: dict[str, CompiledCheck] = {}


def typebox_check(schema: dict[str, Any], digest: str | None = None) -> CompiledCheck:
    """The (cached) compiled TypeBox check of one schema (``digest``: its stable JSON hash,
    when the caller has it already)."""
    cached = _checks_by_identity.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    if digest is None:
        digest = stable_json_hash(schema)
    compiled = _checks_by_digest.get(digest)
    if compiled is None:
        compiled = compile_schema(schema)
        if len(_checks_by_digest) >= _CACHE_LIMIT:
            _checks_by_digest.clear()
        _checks_by_digest[digest] = compiled
    if len(_checks_by_identity) >= _CACHE_LIMIT:
        _checks_by_identity.clear()
    # Keep the schema object alive beside its id so the id cannot be reused by another.
    _checks_by_identity[id(schema)] = (schema, compiled)
    return compiled


def accepts(schema: Any, args: Any) -> bool:
    """True iff ``schema`` is a JSON object and TypeBox 1.3.8's ``Value.Check`` accepts
    ``args`` against it.

    >>> accepts({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 2.0})
    True
    >>> accepts({"type": "string", "maxLength": 1}, "e\u0301")  # one grapheme
    True
    """
    if type(schema) is not dict:
        return False
    try:
        return bool(typebox_check(schema).check(args))
    except Exception:
        return False


class CallChecks:
    """``accepts(schema, ·)`` as one callable per schema, for the many calls of one replay.

    Every schema is checked by its compiled TypeBox closure (:func:`typebox_check`), called
    directly (the same closure :func:`accepts` calls; a schema it cannot compile is
    checked by :func:`accepts` itself). Equal schemas (by object, then by
    digest) share one check, so a caller may compare checks by identity. One instance lives
    for one command (a replay's plan holds it); it pickles empty, so each worker builds its
    own.

    ``decoded=True`` promises that every value checked was decoded from JSON text (plain
    dicts, lists, strings, numbers, booleans, null: what the session readers produce). The
    verdicts of compiled checks that record nothing on the side are then remembered by the
    value's JSON bytes, exact for such values (at most :data:`MEMO_LIMIT` at a time; a
    value with a ``null`` anywhere, which a non-finite number would also write, is never
    remembered).
    """

    __slots__ = ("_by_digest", "_by_identity", "_memo", "_parts", "decoded")

    def __init__(self, *, decoded: bool = False) -> None:
        self.decoded = decoded
        self._by_identity: dict[int, tuple[Any, Callable[[Any], bool]]] = {}
        self._by_digest: dict[str, Callable[[Any], bool]] = {}
        self._memo: dict[bytes, bool] = {}
        # check -> (kind, compiled function) for the compiled checks (see parts)
        self._parts: dict[Callable[[Any], bool], tuple[int, Callable[[Any], bool]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"decoded": self.decoded}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(decoded=state.get("decoded", False))  # type: ignore[misc]

    def __call__(self, schema: Any) -> Callable[[Any], bool]:
        """The check of ``schema``: ``check(args) == accepts(schema, args)``."""
        cached = self._by_identity.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        check = self._build(schema)
        self._by_identity[id(schema)] = (schema, check)  # the schema stays alive beside its id
        return check

    def _build(self, schema: Any) -> Callable[[Any], bool]:
        if type(schema) is not dict:
            return _rejects_everything
        try:
            digest = stable_json_hash(schema)
        except Exception:
            return functools.partial(accepts, schema)
        found = self._by_digest.get(digest)
        if found is not None:
            return found
        check: Callable[[Any], bool] = functools.partial(accepts, schema)
        try:
            compiled = typebox_check(schema, digest)
        except Exception:
            compiled = None
        if compiled is not None:
            function = compiled.check
            if self.decoded and not compiled.effects:
                prefix = len(self._by_digest).to_bytes(4, "big")
                check = _remembered(function, prefix, self._memo)
                self._parts[check] = (CHECK_PURE, function)
            else:
                check = _guarded(function)
                self._parts[check] = (CHECK_GUARDED, function)
        self._by_digest[digest] = check
        return check

    def parts(self, check: Callable[[Any], bool]) -> tuple[int, Callable[[Any], bool] | None]:
        """What a check of this instance is made of, for a caller that runs the pieces
        itself (the Rust core's trial): ``(CHECK_REJECT, None)`` for a check that
        rejects everything; ``(CHECK_GUARDED, function)`` for a compiled ``function``
        whose exception is a rejection; ``(CHECK_PURE, function)`` for one that is also a
        pure function of JSON values (its verdicts may be remembered by their JSON bytes);
        ``(CHECK_PLAIN, check)`` for anything else, called as it is."""
        if check is _rejects_everything:
            return CHECK_REJECT, None
        return self._parts.get(check) or (CHECK_PLAIN, check)


CHECK_REJECT: Final = 0
CHECK_PLAIN: Final = 1
CHECK_GUARDED: Final = 2
CHECK_PURE: Final = 3


MEMO_LIMIT: Final = 1 << 15


def _rejects_everything(args: Any) -> bool:
    return False


def _remembered(
    compiled: Callable[[Any], bool], prefix: bytes, memo: dict[bytes, bool]
) -> Callable[[Any], bool]:
    import orjson

    dumps = orjson.dumps

    def check(args: Any) -> bool:
        try:
            key = prefix + dumps(args)
        except Exception:
            key = None  # not plain JSON (a huge integer, a non-string key): not remembered
        if key is not None:
            verdict = memo.get(key)
            if verdict is not None:
                return verdict
        try:
            verdict = compiled(args)
        except Exception:
            verdict = False  # any exception while validating is a rejection, as in accepts
        if key is not None and b"null" not in key:
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[key] = verdict
        return verdict

    return check


def _guarded(compiled: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check(args: Any) -> bool:
        try:
            return compiled(args)
        except Exception:
            return False  # any exception while validating is a rejection, as in accepts

    return check
