"""``--entropy-lint PROFILE``: one test item per tool of ``--entropy-surface``.

The items (``entropy-lint::<tool>``) join the project's own tests; each fails on the
error-severity findings of its tool (warnings are listed as a property, never fail). The lint
runs once per process, on first use. With ``--entropy-certify`` the same option adds the
``surface-lint`` check instead (:mod:`pytest_entropy.run.certification`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_entropy.report.names import terminal_line, terminal_text

if TYPE_CHECKING:
    from pytest_entropy.run.lint import LintRun
    from pytest_entropy.state.config import EntropySettings

__all__ = ["LintCollector", "LintFailed", "LintItem", "lint_items"]

NODE: Final = "entropy-lint"
_RUN_KEY: pytest.StashKey[Any] = pytest.StashKey()


class LintFailed(Exception):
    """A tool has error-severity lint findings."""


def _run(config: pytest.Config, settings: EntropySettings) -> LintRun | str:
    """The lint of the surface, or why it could not run (cached on the config)."""
    cached = config.stash.get(_RUN_KEY, None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    from pytest_entropy.core.errors import EntropyError
    from pytest_entropy.run.lint import lint_source

    result: LintRun | str
    if settings.surface is None:
        result = "--entropy-lint needs --entropy-surface (the surface to lint)"
    else:
        try:
            result = lint_source(settings.surface, [settings.lint or ""])
        except EntropyError as error:
            result = str(error)
    config.stash[_RUN_KEY] = result
    return result


_BY_TOOL_KEY: pytest.StashKey[dict[str | None, list[Any]]] = pytest.StashKey()


def _by_tool(config: pytest.Config, run: LintRun) -> dict[str | None, list[Any]]:
    """The findings of each tool, built once for all the items (a finding of a definition
    several tools share belongs to each of them)."""
    index = config.stash.get(_BY_TOOL_KEY, None)
    if index is None:
        index = {}
        for finding in run.findings:
            for ref in finding.affected:
                index.setdefault(ref, []).append(finding)
        config.stash[_BY_TOOL_KEY] = index
    return index


class LintItem(pytest.Item):
    """The lint findings of one tool (``name``), or the lint's own failure (``ref`` None)."""

    def __init__(self, *, ref: str | None, settings: EntropySettings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ref = ref
        self.settings = settings

    def runtest(self) -> None:
        run = _run(self.config, self.settings)
        if isinstance(run, str):
            raise LintFailed(terminal_line(run))
        mine = _by_tool(self.config, run).get(self.ref, [])
        warnings = [f for f in mine if f.severity == "warning"]
        if warnings:
            self.user_properties.append(("entropy_lint_warnings", len(warnings)))
        errors = [f for f in mine if f.severity == "error"]
        if errors:
            lines = [f"{len(errors)} lint errors in tool {self.ref} ({self.settings.lint}):"]
            lines += [
                f"  {f.rule} {f.pointer or '/'}: {f.message}"
                + (f" (fix: {f.fix})" if f.fix else "")
                for f in errors
            ]
            raise LintFailed("\n".join(map(terminal_line, lines)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LintFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{NODE}::{self.name}"


class LintCollector(pytest.Collector):
    """The parent of the lint items (there may be no test file at all)."""

    def __init__(self, *, settings: EntropySettings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings

    def collect(self) -> list[pytest.Item]:
        run = _run(self.config, self.settings)
        if isinstance(run, str):
            return [LintItem.from_parent(self, name="(lint)", ref=None, settings=self.settings)]
        refs = list(dict.fromkeys(action["ref"] for action in run.surface["actions"]))
        return [
            # The node id is printed (-v, the short summary): a name's controls are escaped.
            LintItem.from_parent(self, name=terminal_text(ref), ref=ref, settings=self.settings)
            for ref in refs
        ]


def lint_items(session: pytest.Session, settings: EntropySettings) -> list[pytest.Item]:
    """Collect the lint items under one ``entropy-lint`` collector."""
    collector = LintCollector.from_parent(session, name=NODE, nodeid=NODE, settings=settings)
    return list(collector.collect())
