"""The hygiene and size rules: what a tool author can get wrong whatever the provider."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pytest_entropy.core.lint.model import ERROR, WARNING, Finding, LintOptions
from pytest_entropy.core.lint.walk import (
    WALK_LIMIT,
    Node,
    anchors_of,
    nesting_depth,
    resolve_local,
    subschemas,
)

__all__ = ["hygiene_findings", "size_findings", "surface_findings"]

# Keywords that describe or annotate but constrain nothing (and the dialect switch).
_ANNOTATIONS: Final = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "type",
    }
)
_TYPING: Final = ("type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf")
_COMBINATORS: Final = frozenset({"anyOf", "oneOf", "allOf", "not", "if", "then", "else"})
MCP_NAME: Final = re.compile(r"[A-Za-z0-9_\-./]{1,128}")

_MAX_INVALID_PER_TOOL: Final = 20


def _finding(rule: str, ref: str, pointer: str, message: str, fix: str | None) -> Finding:
    severity = ERROR if rule in _ERRORS else WARNING
    return Finding(rule, severity, ref, pointer, message, fix)


_ERRORS: Final = frozenset(
    {
        "schema-empty",
        "schema-invalid",
        "required-unknown",
        "ref-unresolved",
        "name-invalid",
        "name-duplicate",
    }
)


def _empty(schema: Any) -> bool:
    if schema is True or schema == {}:
        return True
    if type(schema) is not dict:
        return False
    return all(key in _ANNOTATIONS for key in schema)


MetaCache = dict[Any, Any]


def _dialects(cache: MetaCache) -> dict[str, Any]:
    """The meta-schema URIs jsonschema knows, without the trailing ``#``."""
    known = cache.get("dialects")
    if known is not None:
        return known  # type: ignore[no-any-return]
    from jsonschema import validators

    known = {}
    for cls in (
        validators.Draft3Validator,
        validators.Draft4Validator,
        validators.Draft6Validator,
        validators.Draft7Validator,
        validators.Draft201909Validator,
        validators.Draft202012Validator,
    ):
        meta = cls.META_SCHEMA
        uri = meta.get("$id") or meta.get("id")
        known[str(uri).rstrip("#")] = cls
    cache["dialects"] = known
    return known


def _meta_validator(schema: dict[str, Any], cache: MetaCache) -> tuple[Any, str | None]:
    """The validator class of the schema's dialect, and a problem when ``$schema`` names
    no dialect jsonschema knows (the schema is then checked as 2020-12)."""
    from jsonschema import validators

    known = _dialects(cache)
    dialect = schema.get("$schema")
    if dialect is None:
        return validators.Draft202012Validator, None
    if type(dialect) is str and dialect.rstrip("#") in known:
        return known[dialect.rstrip("#")], None
    return validators.Draft202012Validator, f"$schema {dialect!r} names no known dialect"


def _pointer_of(path: Sequence[Any]) -> str:
    from pytest_entropy.core.lint.walk import escape

    return "".join(f"/{escape(str(part))}" for part in path)


_PROSE: Final = ("description", "title", "$comment")


def _shallow(schema: dict[str, Any]) -> dict[str, Any]:
    """The node with every subschema the walk visits on its own replaced by ``{}`` (or, in a
    map of named subschemas, left out) and its prose and values blanked: what the
    meta-schema checks at this node alone. Booleans stay (draft 4 refuses some)."""
    from pytest_entropy.core.lint.walk import SUBSCHEMA_LISTS, SUBSCHEMA_MAPS, SUBSCHEMA_ONE

    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _PROSE and type(value) is str:
            value = ""
        elif key in ("default", "const"):
            value = None  # any value is a valid default or const
        elif key in ("enum", "required") and type(value) is list:
            value = _placeholders(value)
        elif type(value) in (int, float):
            value = _number_class(value)
        elif key == "examples" and type(value) is list:
            value = []
        elif type(value) is dict and key in SUBSCHEMA_ONE:
            value = {}
        elif type(value) is list and (key in SUBSCHEMA_LISTS or key == "items"):
            value = [{} if type(item) is dict else item for item in value]
        elif type(value) is dict and key in SUBSCHEMA_MAPS:
            # Entries that are schemas are checked at their own nodes; what stays is the map
            # itself, its patternProperties' keys (regexes) and any entry that is no object.
            if key == "patternProperties":
                value = {name: {} if type(item) is dict else item for name, item in value.items()}
            else:
                value = {name: item for name, item in value.items() if type(item) is not dict}
        out[key] = value
    return out


def _number_class(value: float) -> float:
    """A stand-in of the same class for the meta-schemas (sign, zero, integer or not):
    they check bounds such as ``minLength >= 0`` and ``multipleOf > 0``, never the value."""
    if value == 0:
        return value
    sign = 1 if value > 0 else -1
    return sign * (1 if float(value).is_integer() else 0.5) if type(value) is float else sign


def _placeholders(values: list[Any]) -> list[Any]:
    """Placeholder strings for string values (equal ones for equal strings), other values
    kept: the meta-schemas check only the array's length, uniqueness and (``required``)
    that each is a string."""
    seen: dict[str, int] = {}
    out: list[Any] = []
    for value in values:
        key = _enum_key(value)
        index = seen.setdefault(key, len(seen))
        out.append(f"v{index}" if type(value) is str else value)
    return out


def _meta_errors(checker: Any, schema: dict[str, Any], cache: MetaCache) -> list[tuple[str, str]]:
    """``(relative pointer, message)`` of the meta-schema errors at one node, memoised on
    the node's shallow form (real surfaces repeat small parameter schemas endlessly, and
    checking 2020-12's meta-schema costs milliseconds a node)."""
    import json

    shallow = _shallow(schema)
    try:
        key = (type(checker).__name__, json.dumps(shallow, sort_keys=True))
    except (TypeError, ValueError):
        key = None
    if key is not None and key in cache:
        cached: list[tuple[str, str]] = cache[key]
        return cached
    try:
        errors = sorted(
            checker.iter_errors(shallow),
            key=lambda error: [str(part) for part in error.absolute_path],
        )
        found = [(_pointer_of(list(error.absolute_path)), error.message) for error in errors]
    except RecursionError:
        # Only a value the walk does not enter (a deep "dependencies" or the like) gets here.
        found = [("", "nested too deeply to check against the meta-schema")]
    if key is not None:
        cache[key] = found
    return found


def _invalid(
    ref: str,
    schema: Any,
    nodes: Sequence[Node],
    cache: MetaCache,
) -> Iterator[Finding]:
    if type(schema) is bool:
        return
    if type(schema) is not dict:
        yield _finding(
            "schema-invalid",
            ref,
            "",
            f"the input schema is a JSON {type(schema).__name__}, not an object",
            "give the tool an object schema",
        )
        return
    cls, problem = _meta_validator(schema, cache)
    if problem is not None:
        yield _finding(
            "schema-invalid", ref, "/$schema", problem, "name a JSON Schema dialect or drop $schema"
        )
    checker = cache.get(cls)
    if checker is None:
        checker = cache[cls] = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    dialect = cls.__name__.removesuffix("Validator")
    count = 0
    for node in nodes:
        if type(node.schema) is not dict:
            continue  # the parent's check judges a non-object subschema
        for pointer, message in _meta_errors(checker, node.schema, cache):
            if count == _MAX_INVALID_PER_TOOL:
                return
            count += 1
            text = message if len(message) <= 200 else message[:197] + "..."
            yield _finding(
                "schema-invalid", ref, node.pointer + pointer, f"{text} (dialect {dialect})", None
            )


def _enum_key(value: Any) -> str:
    # JSON Schema equality: 1 and 1.0 are equal, true and 1 are not.
    from pytest_entropy.core.canonical import canonical_json

    if type(value) is float and value.is_integer():
        value = int(value)
    return f"{type(value) is bool}:{canonical_json(value)}"


def _parent_pointer(node: Node) -> str | None:
    """The pointer of the schema a combinator branch belongs to (``None`` elsewhere)."""
    if node.via not in _COMBINATORS:
        return None
    cut = 1 if node.via in ("not", "if", "then", "else") else 2
    return node.pointer.rsplit("/", cut)[0] if node.pointer.count("/") >= cut else ""


def hygiene_findings(
    ref: str,
    action: Mapping[str, Any],
    *,
    options: LintOptions,
    nodes: Sequence[Node] | None = None,
    meta_cache: MetaCache | None = None,
) -> list[Finding]:
    """The hygiene rules on one action ``{ref, inputSchema, description?}``; ``nodes`` are
    its subschemas when the caller has them, ``meta_cache`` shares meta-schema verdicts
    between the tools of one run."""
    schema = action.get("inputSchema")
    nodes = list(subschemas(schema)) if nodes is None else nodes
    out: list[Finding] = []
    description = action.get("description")
    if type(description) is not str or not description.strip():
        out.append(
            _finding(
                "tool-undescribed",
                ref,
                "",
                "the tool has no description, so a model cannot tell when to use it",
                "describe what the tool does and when to use it",
            )
        )
    if _empty(schema):
        out.append(
            _finding(
                "schema-empty",
                ref,
                "",
                "the input schema describes no parameters: any arguments pass",
                'declare "properties" (an empty object for a tool without parameters)',
            )
        )
    if options.wants("schema-invalid"):
        out.extend(_invalid(ref, schema, nodes, {} if meta_cache is None else meta_cache))
    names_at: dict[str, set[str]] = {}
    anchors: dict[str, Any] | None = None  # built on the first "#anchor" $ref, then shared
    for node in nodes:
        sub = node.schema
        if node.via == "properties":
            out.extend(_parameter(ref, node))
        if type(sub) is not dict:
            continue
        properties = sub.get("properties")
        names = set(properties) if type(properties) is dict else set()
        parent = _parent_pointer(node)
        if parent is not None:
            names |= names_at.get(parent, set())
        names_at[node.pointer] = names
        out.extend(_enum(ref, node))
        out.extend(_required(ref, node, names))
        target = sub.get("$ref")
        if type(target) is str:
            if anchors is None and target.startswith("#") and not target.startswith("#/"):
                anchors = anchors_of(nodes)
            found, _ = resolve_local(schema, target, anchors)
            if not found:
                external = not target.startswith("#")
                out.append(
                    _finding(
                        "ref-unresolved",
                        ref,
                        f"{node.pointer}/$ref",
                        f"external $ref {target!r} is never fetched"
                        if external
                        else f"$ref {target!r} resolves to nothing in the schema",
                        "inline the referenced schema or add it under $defs",
                    )
                )
    return out


def _parameter(ref: str, node: Node) -> Iterator[Finding]:
    sub = node.schema
    name = node.pointer.rsplit("/", 1)[-1]
    if sub is True or (type(sub) is dict and not any(key in sub for key in _TYPING)):
        yield _finding(
            "param-untyped",
            ref,
            node.pointer,
            f"parameter {name!r} has no type: any value passes",
            'give it a "type" (or an enum)',
        )
    if type(sub) is dict and "$ref" not in sub:
        described = sub.get("description")
        if type(described) is not str or not described.strip():
            yield _finding(
                "param-undescribed",
                ref,
                node.pointer,
                f"parameter {name!r} has no description",
                "say what the value means and give an example",
            )


def _enum(ref: str, node: Node) -> Iterator[Finding]:
    values = node.schema.get("enum")
    if type(values) is not list:
        return
    if len(values) == 1:
        yield _finding(
            "enum-single",
            ref,
            f"{node.pointer}/enum",
            "an enum of one value",
            f"write const: {values[0]!r} instead",
        )
    seen: set[str] = set()
    for index, value in enumerate(values):
        key = _enum_key(value)
        if key in seen:
            yield _finding(
                "enum-duplicate",
                ref,
                f"{node.pointer}/enum/{index}",
                f"enum value {value!r} is listed twice",
                "remove the repeated value",
            )
        seen.add(key)


def _pattern_covers(schema: dict[str, Any], name: str) -> bool:
    patterns = schema.get("patternProperties")
    if type(patterns) is not dict:
        return False
    for pattern in patterns:
        try:
            if re.search(pattern, name):
                return True
        except re.error:
            continue
    return False


def _required(ref: str, node: Node, names: set[str]) -> Iterator[Finding]:
    required = node.schema.get("required")
    if type(required) is not list:
        return
    for index, name in enumerate(required):
        if type(name) is str and name not in names and not _pattern_covers(node.schema, name):
            yield _finding(
                "required-unknown",
                ref,
                f"{node.pointer}/required/{index}",
                f"required name {name!r} is not among the properties",
                f"declare {name!r} under properties or drop it from required",
            )


def size_findings(
    ref: str, schema: Any, *, options: LintOptions, nodes: Sequence[Node] | None = None
) -> list[Finding]:
    """``schema-too-deep`` and ``schema-too-large`` on one tool's schema."""
    import json

    out: list[Finding] = []
    nodes = list(subschemas(schema)) if nodes is None else nodes
    deepest = max(nodes, key=lambda node: node.depth)
    cut = next((node for node in nodes if node.cut), None)
    if cut is not None:
        out.append(
            _finding(
                "schema-too-deep",
                ref,
                cut.pointer,
                f"the schema nests {nesting_depth(schema)} levels deep (threshold"
                f" {options.max_depth}); lint checked it down to {WALK_LIMIT} steps"
                " and nothing below",
                "flatten nested objects into fewer levels",
            )
        )
    elif deepest.depth > options.max_depth:
        out.append(
            _finding(
                "schema-too-deep",
                ref,
                deepest.pointer,
                f"the schema nests {deepest.depth} levels deep (threshold {options.max_depth})",
                "flatten nested objects into fewer levels",
            )
        )
    try:
        text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    except (RecursionError, TypeError, ValueError):
        from pytest_entropy.core.canonical import js_stringify

        text = js_stringify(schema)  # slower, but no nesting limit
    size = len(text.encode("utf-8", "surrogatepass"))  # a lone surrogate counts 3 bytes
    if size > options.max_schema_bytes:
        out.append(
            _finding(
                "schema-too-large",
                ref,
                "",
                f"the schema is {size} bytes of JSON (threshold {options.max_schema_bytes}),"
                " paid in tokens on every request",
                "shorten descriptions, drop unused parameters or split the tool",
            )
        )
    return out


def surface_findings(refs: Sequence[str], *, options: LintOptions) -> list[tuple[int, Finding]]:
    """``name-invalid``, ``name-duplicate`` and ``surface-too-many-tools``, each with the
    position of the tool it is reported on."""
    out: list[tuple[int, Finding]] = []
    seen: set[str] = set()
    for position, ref in enumerate(refs):
        if not MCP_NAME.fullmatch(ref):
            out.append(
                (
                    position,
                    _finding(
                        "name-invalid",
                        ref,
                        "",
                        f"tool name {ref!r} is not 1-128 characters of A-Za-z0-9_-./",
                        "rename the tool",
                    ),
                )
            )
        if ref in seen:
            out.append(
                (
                    position,
                    _finding(
                        "name-duplicate",
                        ref,
                        "",
                        f"a second tool named {ref!r}",
                        "give every tool its own name",
                    ),
                )
            )
        seen.add(ref)
    if len(refs) > options.max_tools:
        position = options.max_tools
        out.append(
            (
                position,
                _finding(
                    "surface-too-many-tools",
                    refs[position],
                    "",
                    f"the surface has {len(refs)} tools (threshold {options.max_tools}); a"
                    " model chooses less well among many",
                    "split the surface or load tools on demand",
                ),
            )
        )
    return out
