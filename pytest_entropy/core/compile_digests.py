"""The hashes one compile takes of its surfaces and schemas, each schema written once.

A compile hashes the effective surface (the before-report's digest, the artifact's
evidence), the candidate (the after-report's digest), every schema of both to find the
touched refs, and the candidate's and the declared schemas again for the artifact's
overlays. Most of those schemas are the same objects: the candidate is built with
:func:`~pytest_entropy.core.gate.apply_proposals_shared`, which shares every schema the
proposals leave alone. :class:`CompileDigests` writes the canonical JSON of each schema
object once and assembles a surface's text from its schemas' texts, so the compile writes
about one surface's worth of canonical JSON instead of five or six. A schema shared by the
candidate and the effective surface is untouched without being hashed at all.

Exactness: canonical JSON is compositional (a container's text is its items' texts in
canonical key order, and the writer's cycle check follows only the ancestors of the value
being written, so a cycle through a schema is met inside that schema's own text as well),
so an assembled text equals ``canonical_json`` of the whole, and so does every hash. Only a
surface of the exact shape the compiler builds is assembled (an exact dict holding exactly
``version`` and ``actions``, a list of exact dicts holding exactly a str ``ref`` and an
``inputSchema``); anything else is hashed whole. The memo is keyed by object identity and
lives for one compile, over inputs the compile never changes (it keeps the schemas it
wrote alive, so an identity is never reused; surfaces themselves are not kept).
``tests/property/test_compile_digests.py`` compares every hash with
:func:`~pytest_entropy.core.canonical.stable_json_hash` of the whole and the shared rewrite
with :func:`~pytest_entropy.core.gate.apply_proposals_to_surface`, the copying one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_entropy.core.canonical import canonical_json, json_string, sha256
from pytest_entropy.core.gate import apply_proposals_shared
from pytest_entropy.core.records import action_schemas

__all__ = ["CompileDigests", "compile_digests"]

_SURFACE_KEYS = frozenset({"version", "actions"})
_ACTION_KEYS = frozenset({"ref", "inputSchema"})


class CompileDigests:
    """The compile's hashes with each schema object written once (see the module)."""

    __slots__ = ("_actions_first", "_digests", "_held", "_schema_first", "_texts")

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._digests: dict[int, str] = {}
        self._held: list[Any] = []  # keeps every memoised object alive: ids stay unique
        # The canonical order of the two key sets the compiler writes, asked of the writer.
        self._actions_first = _first_of(canonical_json({"version": 0, "actions": 0}), "actions")
        self._schema_first = _first_of(canonical_json({"ref": 0, "inputSchema": 0}), "inputSchema")

    def apply(
        self, surface: Mapping[str, Any], proposals: Iterable[Mapping[str, Any]]
    ) -> dict[str, Any]:
        return apply_proposals_shared(surface, proposals)

    def _text(self, value: Any) -> str:
        key = id(value)
        text = self._texts.get(key)
        if text is None:
            text = canonical_json(value)
            self._texts[key] = text
            self._held.append(value)
        return text

    def value_hash(self, value: Any) -> str:
        key = id(value)
        digest = self._digests.get(key)
        if digest is None:
            digest = sha256(self._text(value).encode("utf-8")).hexdigest()
            self._digests[key] = digest
            self._held.append(value)
        return digest

    def surface_hash(self, surface: Mapping[str, Any]) -> str:
        # Not memoised itself: a steered compile hashes many candidates, which are not kept.
        return sha256(self._surface_text(surface).encode("utf-8")).hexdigest()

    def _surface_text(self, surface: Mapping[str, Any]) -> str:
        if type(surface) is not dict or surface.keys() != _SURFACE_KEYS:
            return canonical_json(surface)
        actions = surface["actions"]
        if type(actions) is not list or not all(
            type(action) is dict and action.keys() == _ACTION_KEYS and type(action["ref"]) is str
            for action in actions
        ):
            return canonical_json(surface)
        parts = []
        for action in actions:
            schema = '"inputSchema":' + self._text(action["inputSchema"])
            ref = '"ref":' + json_string(action["ref"])
            parts.append(f"{{{schema},{ref}}}" if self._schema_first else f"{{{ref},{schema}}}")
        listed = '"actions":[' + ",".join(parts) + "]"
        version = '"version":' + canonical_json(surface["version"])
        return f"{{{listed},{version}}}" if self._actions_first else f"{{{version},{listed}}}"

    def touched(self, candidate: Mapping[str, Any], effective: Mapping[str, Any]) -> set[str]:
        """Refs whose schema the candidate changed, plus refs it removed (spec §8.2)."""
        effective_schemas = action_schemas(effective)
        candidate_schemas = action_schemas(candidate)
        touched = {
            ref
            for ref, schema in candidate_schemas.items()
            if ref not in effective_schemas or not self._same(schema, effective_schemas[ref])
        }
        touched.update(ref for ref in effective_schemas if ref not in candidate_schemas)
        return touched

    def _same(self, schema: Any, other: Any) -> bool:
        return schema is other or self.value_hash(schema) == self.value_hash(other)


def _first_of(text: str, key: str) -> bool:
    """Whether ``key`` comes first in the canonical text of a two-key object."""
    return text.startswith("{" + json_string(key) + ":")


def compile_digests() -> CompileDigests:
    """One compile's digests (a fresh memo)."""
    return CompileDigests()
