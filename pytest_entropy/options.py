"""The plugin's options, defined once for pytest (``--entropy-*`` plus ini twins) and the CLI.

Each :class:`Option` is registered for pytest as ``--entropy-<name>`` with an
``entropy_<name>`` ini key, and the certification options also as the bare spelling of the
design card (``--sessions``, ``--surface``, ...) when no other plugin has taken it. The CLI
builds its ``certify`` and ``measure`` flags from the same table. Precedence: command line,
then the ini file, then the default.

This module imports neither pytest nor the metric, so loading the plugin stays cheap.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pytest

__all__ = [
    "BASELINE_FILENAME",
    "OPTIONS",
    "EntropySettings",
    "Option",
    "add_bare_aliases",
    "add_cli_option",
    "add_pytest_options",
    "is_ci",
    "option",
    "settings_from_pytest",
]

BASELINE_FILENAME: Final = "entropy-baseline.json"
GROUP: Final = "entropy"


@dataclass(frozen=True, slots=True)
class Option:
    """One option: ``kind`` is ``path``, ``flag`` or ``number``."""

    name: str
    kind: str
    help: str
    metavar: str | None = None
    bare: bool = False
    cli_flag: str | None = None

    @property
    def dest(self) -> str:
        return "entropy_" + self.name.replace("-", "_")

    @property
    def flag(self) -> str:
        return "--entropy-" + self.name

    @property
    def bare_flag(self) -> str:
        return "--" + self.name


OPTIONS: Final = (
    Option("certify", "flag", "run the entropy certification (spec §12) instead of your tests"),
    Option(
        "sessions",
        "path",
        "certification corpus mode: every *.jsonl directly in DIR, one scan; with "
        "--entropy-max-score or --entropy-baseline also the corpus the gate measures",
        "DIR",
        bare=True,
    ),
    Option("surface", "path", "surface snapshot to measure the corpus against", "FILE", bare=True),
    Option("repairs", "path", "repair table whose lexicon tax the corpus pays", "FILE", bare=True),
    Option("trial", "flag", "also run the held-out trial (needs sessions and surface)", bare=True),
    Option(
        "artifact",
        "path",
        "compiled artifact for the trial (default: the agent dir's compiled.json)",
        "FILE",
        bare=True,
    ),
    Option("json", "path", "write the certification JSON report to PATH", "PATH"),
    Option("markdown", "path", "write a Markdown certification summary to PATH", "PATH"),
    Option(
        "baseline",
        "path",
        f"ratchet baseline file (default: {BASELINE_FILENAME} in the rootdir)",
        "FILE",
        cli_flag="--baseline",
    ),
    Option(
        "update",
        "flag",
        "rewrite the ratchet baseline with the current values",
        cli_flag="--update-baseline",
    ),
    Option("max-score", "number", "fail when the sessions' entropy score exceeds X", "X"),
)


def option(name: str) -> Option:
    """The option called ``name`` (without the ``entropy-`` prefix)."""
    for entry in OPTIONS:
        if entry.name == name:
            return entry
    raise KeyError(name)


def _argparse_kwargs(entry: Option) -> dict[str, Any]:
    if entry.kind == "flag":
        # None, not False: "not given" must fall through to the ini file.
        return {"action": "store_true", "default": None, "help": entry.help}
    return {"default": None, "metavar": entry.metavar, "help": entry.help}


_INI_TYPES: Final = {"flag": "bool", "path": "paths", "number": "string"}


def add_pytest_options(parser: pytest.Parser) -> None:
    """Register every ``--entropy-*`` option and its ``entropy_*`` ini twin."""
    group = parser.getgroup(GROUP, "tool entropy (pytest-entropy)")
    for entry in OPTIONS:
        group.addoption(entry.flag, dest=entry.dest, **_argparse_kwargs(entry))
        parser.addini(entry.dest, entry.help, type=_INI_TYPES[entry.kind], default=None)  # type: ignore[arg-type]


def _taken_flags(parser: pytest.Parser) -> set[str]:
    groups = [getattr(parser, "_anonymous", None), *getattr(parser, "_groups", ())]
    taken: set[str] = set()
    for group in groups:
        for argument in getattr(group, "options", ()):
            taken.update(argument.names())
    return taken


def add_bare_aliases(parser: pytest.Parser) -> list[str]:
    """Add ``--sessions``, ``--surface``, ... where no plugin or conftest has taken them.

    Called once the installed plugins and the initial conftests have registered their
    options; a taken spelling is skipped, so ``--entropy-<name>`` always works. Returns the
    aliases added.
    """
    taken = _taken_flags(parser)
    group = parser.getgroup(GROUP)
    added = []
    for entry in OPTIONS:
        if entry.bare and entry.bare_flag not in taken:
            kwargs = _argparse_kwargs(entry)
            kwargs["help"] = f"same as {entry.flag}"
            try:
                group.addoption(entry.bare_flag, dest=entry.dest, **kwargs)
            except (argparse.ArgumentError, ValueError):
                continue  # registered somewhere this check cannot see: leave it to its owner
            added.append(entry.bare_flag)
    return added


def add_cli_option(parser: argparse.ArgumentParser, name: str) -> None:
    """Add the CLI spelling of one option (``--sessions``, ``--baseline``, ...)."""
    entry = option(name)
    flag = entry.cli_flag or entry.bare_flag
    if entry.kind == "flag":
        parser.add_argument(flag, dest=entry.dest, action="store_true", help=entry.help)
    else:
        parser.add_argument(flag, dest=entry.dest, metavar=entry.metavar, help=entry.help)


def is_ci(environ: Any = None) -> bool:
    """``CI`` set to anything but empty, ``0`` or ``false`` (any case)."""
    value = (os.environ if environ is None else environ).get("CI")
    return value is not None and value.strip().lower() not in ("", "0", "false")


@dataclass(frozen=True, slots=True)
class EntropySettings:
    """The resolved options of one pytest run (paths absolute)."""

    certify: bool = False
    sessions: Path | None = None
    surface: Path | None = None
    repairs: Path | None = None
    trial: bool = False
    artifact: Path | None = None
    json: Path | None = None
    markdown: Path | None = None
    baseline: Path = Path(BASELINE_FILENAME)
    baseline_given: bool = False
    update: bool = False
    max_score: float | None = None

    @property
    def gate(self) -> bool:
        """Whether the sessions corpus is gated (``--entropy-max-score``/``--entropy-baseline``)."""
        return self.sessions is not None and (self.max_score is not None or self.baseline_given)

    @property
    def active(self) -> bool:
        """Whether this run needs the session-level machinery at all."""
        return self.certify or self.gate

    def certification_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``CertificationOptions``."""

        def text(path: Path | None) -> str | None:
            return None if path is None else str(path)

        return {
            "sessions": text(self.sessions),
            "surface": text(self.surface),
            "repairs": text(self.repairs),
            "trial": self.trial,
            "artifact": text(self.artifact),
        }


def _raw(config: pytest.Config, entry: Option) -> tuple[Any, str]:
    """``(value, origin)`` with origin ``cli``, ``ini`` or ``default``."""
    given = config.getoption(entry.dest, None)
    if given is not None:
        return given, "cli"
    configured = config.getini(entry.dest)
    if configured is not None and configured != [] and configured != "":
        return configured, "ini"
    return None, "default"


def _path(config: pytest.Config, entry: Option) -> Path | None:
    import pytest

    value, origin = _raw(config, entry)
    if origin == "cli":
        return (config.invocation_params.dir / str(value)).absolute()
    if origin == "ini":
        paths = list(value)
        if len(paths) != 1:
            raise pytest.UsageError(f"ini option {entry.dest} takes one path, got {len(paths)}")
        return Path(paths[0]).absolute()
    return None


def _flag(config: pytest.Config, entry: Option) -> bool:
    value, _origin = _raw(config, entry)
    return bool(value)


def _number(config: pytest.Config, entry: Option) -> float | None:
    import math

    import pytest

    value, origin = _raw(config, entry)
    if value is None:
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        where = entry.flag if origin == "cli" else f"ini option {entry.dest}"
        raise pytest.UsageError(f"{where} needs a finite number, got {value!r}")
    return number


def settings_from_pytest(config: pytest.Config) -> EntropySettings:
    """Resolve every option: command line, then ini file, then default."""
    baseline = _path(config, option("baseline"))
    return EntropySettings(
        certify=_flag(config, option("certify")),
        sessions=_path(config, option("sessions")),
        surface=_path(config, option("surface")),
        repairs=_path(config, option("repairs")),
        trial=_flag(config, option("trial")),
        artifact=_path(config, option("artifact")),
        json=_path(config, option("json")),
        markdown=_path(config, option("markdown")),
        baseline=baseline if baseline is not None else config.rootpath / BASELINE_FILENAME,
        baseline_given=baseline is not None,
        update=_flag(config, option("update")),
        max_score=_number(config, option("max-score")),
    )
