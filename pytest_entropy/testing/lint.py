"""``assert_lint_clean``: a tool author's test that a surface passes the schema lint.

::

    from pytest_entropy.testing.lint import assert_lint_clean

    def test_tools_fit_openai_strict_mode():
        assert_lint_clean("tools/surface.json", profile="openai-strict")
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_entropy.core.lint import LintOptions
from pytest_entropy.report.names import terminal_line
from pytest_entropy.run.lint import LintRun, lint_source

__all__ = ["assert_lint_clean"]

_SHOWN = 20


def assert_lint_clean(
    surface: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any],
    *,
    profile: str | Sequence[str] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    warnings: bool = False,
) -> LintRun:
    """Fail when the surface (a path or a parsed snapshot / tool list) has an error-severity
    finding under the hygiene and size rules and the given profile(s); with ``warnings``,
    warnings fail too. Returns the run (its findings) when it passes."""
    __tracebackhide__ = True
    profiles = [profile] if isinstance(profile, str) else list(profile or ())
    run = lint_source(
        surface, profiles, options=LintOptions(select=tuple(select), ignore=tuple(ignore))
    )
    failing = [f for f in run.findings if f.severity != "info"] if warnings else run.errors
    if failing:
        shown = [
            f"  {f.severity} {f.rule} {f.ref}{'#' + f.pointer if f.pointer else ''}: {f.message}"
            for f in failing[:_SHOWN]
        ]
        if len(failing) > _SHOWN:
            shown.append(f"  ... and {len(failing) - _SHOWN} more")
        tools = len({f.ref for f in failing})
        header = f"schema lint: {len(failing)} findings in {tools} tools"
        if profiles:
            header += f" (profile {', '.join(profiles)})"
        raise AssertionError("\n".join(map(terminal_line, [header, *shown])))
    return run
