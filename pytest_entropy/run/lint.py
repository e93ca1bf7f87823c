"""Lint runs for the fronts: a surface from a path or an object, profiles by name, and the
``lint --fix --sessions`` replay of recorded calls."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_entropy.core.lint import (
    Finding,
    LintOptions,
    Profile,
    check_rule_patterns,
    lint_surface,
)
from pytest_entropy.core.lint.fix import FixReplay
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run.corpus import SourceFile
from pytest_entropy.sources.lint_profiles import load_profiles
from pytest_entropy.sources.scan import scan_source

__all__ = ["LintRun", "lint_source", "replay_fix"]


@dataclass(frozen=True, slots=True)
class LintRun:
    """A surface (descriptions kept), the profiles it was checked with and the findings."""

    surface: dict[str, Any]
    profiles: tuple[Profile, ...]
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "error"]


def lint_source(
    surface: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any] | Any,
    profiles: Sequence[str] = (),
    *,
    options: LintOptions | None = None,
    surface_format: str = "auto",
    ref_prefix: str = "",
    timeout: float | None = None,
) -> LintRun:
    """Lint a surface (anything :func:`pytest_entropy.load_surface` reads: a file of any
    format, a parsed surface object, ``mcp+stdio:``, a URL, ``module:attribute``, a server)
    with the named profiles (``openai-strict``, ... or profile files; comma-separated names
    too); ``timeout`` is a live server's, in seconds."""
    from pytest_entropy.sources.surface import load_surface

    chosen = load_profiles(list(profiles))
    options = options or LintOptions()
    check_rule_patterns(options, chosen)
    loaded = load_surface(
        surface,
        surface_format=surface_format,
        ref_prefix=ref_prefix,
        tool_fields=True,
        timeout=timeout,
    )
    return LintRun(loaded, tuple(chosen), tuple(lint_surface(loaded, chosen, options)))


def replay_fix(
    sources: Sequence[SourceFile], replay: FixReplay, options: ReadOptions
) -> tuple[FixReplay, ScanDiagnostics]:
    """Feed every trace of ``sources`` (in order, one process) to ``replay``."""
    diagnostics = ScanDiagnostics()
    for source in sources:
        scan_source(source.location, replay.add_trace, diagnostics=diagnostics, options=options)
    return replay, diagnostics
