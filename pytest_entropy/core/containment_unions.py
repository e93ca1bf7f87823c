"""Containment inside ``anyOf``/``oneOf``: which branches can take a value, and which one
decides (a part of :mod:`pytest_entropy.core.containment`'s checker)."""

from __future__ import annotations

from typing import Any

from pytest_entropy.core.schema_keywords import (
    ALL_TYPES,
    Finding,
    accepts_nothing,
    definition_pointer,
    disjoint,
    join_path,
    mapping,
    pairwise_disjoint,
    type_names,
    type_set,
    without,
)
from pytest_entropy.core.schema_strip import ANNOTATION_KEYWORDS

Schema = dict[str, Any]
Findings = list[Finding]


class UnionChecks:
    """The union half of the checker; the checker supplies the relation itself."""

    outer_root: Any
    inner_root: Any

    def check(self, outer: Any, inner: Any, path: str, depth: int, out: Findings) -> None:
        raise NotImplementedError

    def quiet(self, outer: Any, inner: Any, path: str, depth: int) -> list[Finding]:
        raise NotImplementedError

    def resolve(self, schema: Any, root: Any, path: str, out: Findings) -> Any:
        raise NotImplementedError

    def flipped(self) -> UnionChecks:
        """A checker of the reverse question (roots swapped)."""
        raise NotImplementedError

    def _inner_union(
        self, outer: Schema, inner: Schema, word: str, path: str, depth: int, out: Findings
    ) -> None:
        branches = inner[word]
        union = outer.get("anyOf")
        if type(union) is list and any(
            not self.quiet(branch, inner, path, depth) for branch in union
        ):
            # The whole inner union fits one outer branch: only the rest remains.
            self.check(without(outer, "anyOf"), inner, path, depth, out)
            return
        if self._same_union(outer, inner, word, path, depth):
            self.check(without(outer, word), without(inner, word), path, depth, out)
            return
        rest = without(inner, word)
        bare = not any(key not in ANNOTATION_KEYWORDS for key in rest)
        found: list[Finding] = []
        for branch in branches:
            # A branch alone (when the rest is annotations) keeps its $ref and its identity.
            self.check(outer, branch if bare else {"allOf": [rest, branch]}, path, depth, found)
        resolved = [self.resolve(b, self.inner_root, path, []) for b in branches]
        if word == "oneOf" and not pairwise_disjoint(resolved):
            # A value two branches accept is refused by a oneOf: a branch's witness is no
            # witness of the whole, so it only says "cannot tell".
            found = [
                Finding(
                    f.path,
                    "undecided",
                    False,
                    f.outer,
                    f.inner,
                    f"{f.rule} decides it in one oneOf branch, but the branches may overlap",
                )
                if f.decided
                else f
                for f in found
            ]
        out.extend(found)

    def _same_union(self, outer: Schema, inner: Schema, word: str, path: str, depth: int) -> bool:
        """Both are the same union, branch for branch equivalent (in order)."""
        theirs, mine = outer.get(word), inner.get(word)
        if type(theirs) is not list or type(mine) is not list or len(theirs) != len(mine):
            return False
        return all(
            not self.quiet(a, b, path, depth) and not self.flipped().quiet(b, a, path, depth)
            for a, b in zip(theirs, mine, strict=True)
        )

    def _fit_branches(
        self,
        outer: Schema,
        inner: Schema,
        word: str,
        branches: list[Any],
        path: str,
        depth: int,
        out: Findings,
    ) -> None:
        """``inner`` (no union itself) inside the union of ``branches``.

        Branches that refuse every value ``inner`` accepts (another type, or another value
        of a property ``inner`` requires: a discriminated union) are set aside. One branch
        left decides exactly, with its own paths and rules: a value it refuses, every other
        branch refuses too. None left: refused outright. Several: some branch must hold
        ``inner`` whole (for a oneOf only if they cannot overlap); else ``inner`` is split by
        type; else the branch behind the same ``$ref`` says where, as undecided.
        """
        if accepts_nothing(self.resolve(inner, self.inner_root, path, [])):
            return  # no value to refuse: an empty schema fits any union
        resolved = [self.resolve(branch, self.outer_root, path, []) for branch in branches]
        apart = [disjoint(branch, inner) if branch is not None else None for branch in resolved]
        candidates = [i for i, why in enumerate(apart) if why is None]
        if len(candidates) == 1:
            self.check(branches[candidates[0]], inner, path, depth, out)
            return
        if not candidates:
            self._refused_by_all(outer, inner, word, resolved, apart, path, out)
            return
        exact = word == "anyOf" or pairwise_disjoint([resolved[i] for i in candidates])
        if exact and any(not self.quiet(branches[i], inner, path, depth) for i in candidates):
            return
        kinds = type_set(inner)
        names = type_names(kinds) if kinds is not None and "type" in inner else []
        if len(names) > 1:
            for name in names:
                self._fit_branches(outer, {**inner, "type": name}, word, branches, path, depth, out)
            return
        covered: set[str] = set()
        for i in candidates:
            branch = resolved[i]
            covered |= (type_set(branch) if type(branch) is dict else None) or ALL_TYPES
        if not (kinds or ALL_TYPES) <= covered:
            out.append(Finding(path, "type", True, outer.get(word), inner))
            return
        if not exact:
            why = f"{len(candidates)} oneOf branches may accept its values and may overlap"
            out.append(Finding(path, "undecided", False, outer.get(word), inner, why))
            return
        self._same_ref_branch(outer, inner, word, branches, candidates, path, depth, out)

    def _same_ref_branch(
        self,
        outer: Schema,
        inner: Schema,
        word: str,
        branches: list[Any],
        candidates: list[int],
        path: str,
        depth: int,
        out: Findings,
    ) -> None:
        """Several branches may take ``inner``'s values and none takes them all: the branch
        with the same ``$ref`` target as ``inner`` names the path and rule, undecided (another
        branch may still accept the value)."""
        pointer = definition_pointer(self.inner_root, inner)
        same = [
            i
            for i in candidates
            if pointer is not None
            and type(branches[i]) is dict
            and branches[i].get("$ref") == pointer
        ]
        many = f"{len(candidates)} {word} branches may accept its values and none alone does"
        if len(same) != 1:
            out.append(Finding(path, "undecided", False, outer.get(word), inner, many))
            return
        for found in self.quiet(branches[same[0]], inner, path, depth):
            why = found.reason or (
                f"{found.rule} refuses it in the branch {pointer}; "
                f"another {word} branch may accept it"
            )
            out.append(Finding(found.path, "undecided", False, found.outer, found.inner, why))

    def _refused_by_all(
        self,
        outer: Schema,
        inner: Schema,
        word: str,
        resolved: list[Any],
        apart: list[tuple[str, str] | None],
        path: str,
        out: Findings,
    ) -> None:
        """No branch accepts a value of ``inner``: by type, or by a discriminating property."""
        named = [(i, why) for i, why in enumerate(apart) if why is not None and why[0]]
        if not named:
            out.append(Finding(path, "type", True, outer.get(word), inner))
            return
        name = named[0][1][0]
        # What the branches told apart by this property allow there, and what the inner says.
        theirs = [
            mapping(resolved[i].get("properties")).get(name)
            for i, why in named
            if why is not None and why[0] == name
        ]
        allowed = [_values(schema) for schema in theirs]
        rule = "const" if all(type(s) is dict and "const" in s for s in theirs) else "enum"
        shown = _values(mapping(inner.get("properties")).get(name))
        out.append(Finding(join_path(path, name), rule, True, allowed, shown))


def _values(schema: Any) -> Any:
    """A ``const``/``enum`` schema's value(s) as a fragment to show."""
    if type(schema) is not dict:
        return schema
    return schema["const"] if "const" in schema else schema.get("enum")
