"""A helper that walks the ratchet's whole life cycle through real pytest runs.

Like pytest-regressions' workflow helper, it is shipped for plugin authors and users who
wrap the ratchet, and our own tests use it::

    def test_my_ratchet_life_cycle(pytester):
        from pytest_entropy.testing import walk_ratchet_life_cycle
        walk_ratchet_life_cycle(pytester, surface, looser_surface)

Each step runs pytest in-process in the ``pytester`` directory on a test that calls
``entropy_ratchet.check(surface)`` and asserts the outcome the life cycle promises:

1. no baseline, in CI: the test fails and no baseline is written;
2. no baseline, locally: the test passes and the baseline is created;
3. unchanged: passes, the file is byte-identical;
4. a looser surface (a regression): fails, naming what rose;
5. ``--entropy-update``: passes and rewrites the baseline;
6. unchanged again: passes;
7. the original, tighter surface: passes and says the baseline can be lowered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import pytest

__all__ = ["LifeCycleStep", "walk_ratchet_life_cycle"]

BASELINE: Final = "entropy-baseline.json"
TEST_FILE: Final = "test_entropy_ratchet_life_cycle"
TEST_SOURCE: Final = """
import json
import pathlib


def test_surface_ratchet(entropy_ratchet):
    surface = json.loads(pathlib.Path(__file__).with_name("surface.json").read_text())
    entropy_ratchet.check(surface, name="surface")
"""


@dataclass(frozen=True, slots=True)
class LifeCycleStep:
    """One pytest run of the walk and what it showed."""

    name: str
    passed: bool
    output: str
    baseline: str | None


def _write_surface(pytester: pytest.Pytester, surface: Mapping[str, Any]) -> None:
    pytester.path.joinpath("surface.json").write_text(json.dumps(surface), encoding="utf-8")


def _baseline(pytester: pytest.Pytester) -> str | None:
    path = pytester.path / BASELINE
    return path.read_text(encoding="utf-8") if path.exists() else None


def walk_ratchet_life_cycle(
    pytester: pytest.Pytester,
    surface: Mapping[str, Any],
    looser_surface: Mapping[str, Any],
) -> list[LifeCycleStep]:
    """Walk the seven steps above; raise ``AssertionError`` naming the first that misbehaves.

    ``looser_surface`` must have more static freedom than ``surface`` (a regression).
    """
    __tracebackhide__ = True
    pytester.makepyfile(**{TEST_FILE: TEST_SOURCE})
    steps: list[LifeCycleStep] = []

    def run(name: str, *args: str, ci: bool, expect_pass: bool, says: str) -> LifeCycleStep:
        __tracebackhide__ = True
        with pytest.MonkeyPatch.context() as patch:
            if ci:
                patch.setenv("CI", "true")
            else:
                patch.delenv("CI", raising=False)
            result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA", *args)
        output = result.stdout.str()
        passed = result.ret == pytest.ExitCode.OK
        step = LifeCycleStep(name, passed, output, _baseline(pytester))
        steps.append(step)
        if passed != expect_pass or says not in output:
            raise AssertionError(
                f"ratchet life cycle, step {len(steps)} ({name}): expected"
                f" {'a pass' if expect_pass else 'a failure'} saying {says!r}, got exit"
                f" {result.ret}\n{output}"
            )
        return step

    _write_surface(pytester, surface)
    first = run("missing in CI", ci=True, expect_pass=False, says="CI never creates one")
    if first.baseline is not None:
        raise AssertionError("ratchet life cycle, step 1: CI must not create a baseline")
    created = run("created locally", ci=False, expect_pass=True, says="baseline created")
    if created.baseline is None:
        raise AssertionError("ratchet life cycle, step 2: no baseline file was written")
    holds = run("unchanged", ci=True, expect_pass=True, says="1 passed")
    if holds.baseline != created.baseline:
        raise AssertionError("ratchet life cycle, step 3: an unchanged run rewrote the baseline")
    _write_surface(pytester, looser_surface)
    run("regression", ci=True, expect_pass=False, says="entropy rose above the baseline")
    updated = run("update", "--entropy-update", ci=False, expect_pass=True, says="baseline updated")
    if updated.baseline == created.baseline:
        raise AssertionError("ratchet life cycle, step 5: --entropy-update did not rewrite it")
    run("updated baseline holds", ci=True, expect_pass=True, says="1 passed")
    _write_surface(pytester, surface)
    run("tighter again", ci=True, expect_pass=True, says="the baseline can be lowered")
    return steps
