"""The plugin's option table and its resolved settings, as plain data.

Every pytest start in a project with the plugin installed reads this module (to register the
``--entropy-*`` options and their ini twins), whether or not the project measures anything,
so it holds no dataclass (each compiles its methods at import), imports nothing of the
package and reads no configuration file: issue 32 asks the plugin to cost a trivial run
under 5 %. :mod:`pytest_entropy.state.config` re-exports every name, the one place both
fronts read the table from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

__all__ = [
    "BASELINE_FILENAME",
    "ENV_PREFIX",
    "GROUP",
    "OPTIONS",
    "PROGRAM_VARIABLES",
    "EntropySettings",
    "Option",
    "config_directories",
    "is_ci",
    "may_be_configured",
    "mentions_entropy",
    "option",
]

ENV_PREFIX: Final = "PYTEST_ENTROPY_"
# Variables that steer the program rather than configure a setting: never a setting, so
# neither checked nor shown (PYTEST_ENTROPY_PURE selects the plain code paths).
PROGRAM_VARIABLES: Final = frozenset({"PYTEST_ENTROPY_PURE", "PYTEST_ENTROPY_NO_NATIVE"})
PYPROJECT: Final = "pyproject.toml"
YAML_NAMES: Final = ("entropy.yml", "entropy.yaml")

BASELINE_FILENAME: Final = "entropy-baseline.json"
GROUP: Final = "entropy"


class Option:
    """One option: ``kind`` is ``path``, ``flag``, ``number``, ``text`` or ``list`` (repeatable).

    A plain class, not a dataclass: this table is built by every pytest start in every
    project that has the plugin installed, and a dataclass compiles its methods at import."""

    __slots__ = ("bare", "cli_flag", "help", "kind", "metavar", "name")

    def __init__(
        self,
        name: str,
        kind: str,
        help: str,
        metavar: str | None = None,
        *,
        bare: bool = False,
        cli_flag: str | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.help = help
        self.metavar = metavar
        self.bare = bare
        self.cli_flag = cli_flag

    def __repr__(self) -> str:
        return f"Option({self.name!r}, {self.kind!r})"

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
    Option("certify", "flag", "run the entropy certification (spec §12) beside your tests"),
    Option("certify-only", "flag", "run only the entropy certification, not your tests"),
    Option(
        "sessions",
        "path",
        "certification corpus mode: every *.jsonl directly in DIR, one scan (other formats:"
        " --entropy-format); with --entropy-max-score or --entropy-baseline also the corpus"
        " the gate measures",
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
    Option(
        "json",
        "path",
        "write the certification JSON report (the gate alone: the measure report) to PATH",
        "PATH",
    ),
    Option(
        "markdown",
        "path",
        "write a Markdown certification summary (the gate alone: the measure report) to PATH",
        "PATH",
    ),
    Option(
        "html",
        "path",
        "write the certification report (the gate alone: the measure report) as a"
        " self-contained HTML page to PATH (html extra)",
        "PATH",
    ),
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
    Option(
        "lint",
        "text",
        "schema-lint the --surface under PROFILE (openai-strict, anthropic, gemini, mcp;"
        " comma-separated): one test item per tool, and the surface-lint check with"
        " --entropy-certify",
        "PROFILE",
        cli_flag="--lint",
    ),
    Option(
        "strict",
        "flag",
        "any unreadable or unrecognised session file is an error (the gate and corpus mode"
        " fail) instead of being counted",
        cli_flag="--strict",
    ),
    Option("lenient", "flag", "certify: damaged or unrecognised session files do not gate"),
    Option("require-ratchet", "flag", "certify: ratchet-holding gates (default: reported)"),
    Option("holdout", "number", "certify: newest share of files held out (0.25)", "SHARE"),
    Option("max-malformed-share", "number", "certify: malformed lines tolerated (0)", "SHARE"),
    Option("size-factor", "number", "refuse a corpus score baseline N times off in size", "X"),
    Option(
        "allow-empty",
        "flag",
        "a sessions corpus that yields no operations passes the gate (default: it fails,"
        " naming what was read); certification's corpus mode fails on it regardless",
    ),
    Option(
        "format",
        "text",
        "the session format of --entropy-sessions: auto (default: detect each file), fabric"
        " (native) or a foreign format (docs/formats.md)",
        "FORMAT",
        bare=True,
    ),
    Option(
        "surface-format",
        "text",
        "the format of --entropy-surface: auto (default: detect), snapshot or a tool list"
        " (mcp, openai, anthropic, pi, bfcl, ...)",
        "FORMAT",
        bare=True,
    ),
    Option("mcp-timeout", "number", "seconds a live MCP server has to list its tools", "S"),
    Option("metric-version", "text", "the gate's and fixtures' metric: 2 (default) or 3", "2|3"),
    Option(
        "accept",
        "list",
        "accept the loosenings of tool REF (at PATH only, with PATH) in the ratchet baseline,"
        " with REASON after '='; repeatable",
        "REF[:PATH][=REASON]",
    ),
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
    if entry.kind == "list":
        return {"action": "append", "default": None, "metavar": entry.metavar, "help": entry.help}
    return {"default": None, "metavar": entry.metavar, "help": entry.help}


_INI_TYPES: Final = {
    "flag": "bool",
    "path": "paths",
    "number": "string",
    "text": "string",
    "list": "linelist",
}


def is_ci(environ: Any = None) -> bool:
    """``CI`` set to anything but empty, ``0`` or ``false`` (any case)."""
    value = (os.environ if environ is None else environ).get("CI")
    return value is not None and value.strip().lower() not in ("", "0", "false")


class EntropySettings:
    """The resolved options of one pytest run (paths absolute); immutable.

    A plain class with the behaviour of a frozen slotted dataclass (keyword construction,
    equality and hash over the fields, a field-by-field repr), written out by hand because
    every pytest start builds one (see the module's docstring). The comments of the fields:
    ``surface_server`` is ``--entropy-surface`` naming a server (mcp+stdio:..., a URL,
    module:attribute), as given; ``state_dir`` the configuration's ``state-dir`` (where the
    trial looks for compiled.json first); ``surface_from_ini`` says the surface came from the
    ``entropy_surface`` ini key (meant for the fixture: it does not put certification into
    corpus mode on its own); ``mcp_timeout`` the seconds a live MCP server has to list (None:
    30); ``metric_version`` is ``--entropy-metric-version`` (docs/metric-v3.md)."""

    __slots__ = (
        "accept",
        "allow_empty",
        "artifact",
        "baseline",
        "baseline_given",
        "certify",
        "certify_only",
        "holdout",
        "html",
        "json",
        "lenient",
        "lint",
        "markdown",
        "max_malformed_share",
        "max_score",
        "mcp_timeout",
        "metric_version",
        "repairs",
        "require_ratchet",
        "session_format",
        "sessions",
        "size_factor",
        "state_dir",
        "strict",
        "surface",
        "surface_format",
        "surface_from_ini",
        "surface_server",
        "trial",
        "update",
    )

    # The fields in the order they are declared (and shown, and compared in).
    _FIELDS: Final = (
        "certify",
        "certify_only",
        "lenient",
        "require_ratchet",
        "holdout",
        "max_malformed_share",
        "size_factor",
        "sessions",
        "surface",
        "repairs",
        "trial",
        "artifact",
        "json",
        "markdown",
        "html",
        "baseline",
        "baseline_given",
        "update",
        "max_score",
        "lint",
        "strict",
        "accept",
        "surface_server",
        "state_dir",
        "allow_empty",
        "session_format",
        "surface_format",
        "surface_from_ini",
        "mcp_timeout",
        "metric_version",
    )

    certify: bool
    certify_only: bool
    lenient: bool
    require_ratchet: bool
    holdout: float | None
    max_malformed_share: float | None
    size_factor: float | None
    sessions: Path | None
    surface: Path | None
    repairs: Path | None
    trial: bool
    artifact: Path | None
    json: Path | None
    markdown: Path | None
    html: Path | None
    baseline: Path
    baseline_given: bool
    update: bool
    max_score: float | None
    lint: str | None
    strict: bool
    accept: tuple[str, ...]
    surface_server: str | None
    state_dir: Path | None
    allow_empty: bool
    session_format: str
    surface_format: str
    surface_from_ini: bool
    mcp_timeout: float | None
    metric_version: int

    def __init__(
        self,
        *,
        certify: bool = False,
        certify_only: bool = False,
        lenient: bool = False,
        require_ratchet: bool = False,
        holdout: float | None = None,
        max_malformed_share: float | None = None,
        size_factor: float | None = None,
        sessions: Path | None = None,
        surface: Path | None = None,
        repairs: Path | None = None,
        trial: bool = False,
        artifact: Path | None = None,
        json: Path | None = None,
        markdown: Path | None = None,
        html: Path | None = None,
        baseline: Path | None = None,
        baseline_given: bool = False,
        update: bool = False,
        max_score: float | None = None,
        lint: str | None = None,
        strict: bool = False,
        accept: tuple[str, ...] = (),
        surface_server: str | None = None,
        state_dir: Path | None = None,
        allow_empty: bool = False,
        session_format: str = "auto",
        surface_format: str = "auto",
        surface_from_ini: bool = False,
        mcp_timeout: float | None = None,
        metric_version: int = 2,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "certify", certify)
        set_field(self, "certify_only", certify_only)
        set_field(self, "lenient", lenient)
        set_field(self, "require_ratchet", require_ratchet)
        set_field(self, "holdout", holdout)
        set_field(self, "max_malformed_share", max_malformed_share)
        set_field(self, "size_factor", size_factor)
        set_field(self, "sessions", sessions)
        set_field(self, "surface", surface)
        set_field(self, "repairs", repairs)
        set_field(self, "trial", trial)
        set_field(self, "artifact", artifact)
        set_field(self, "json", json)
        set_field(self, "markdown", markdown)
        set_field(self, "html", html)
        if baseline is None:  # the default, built here: pathlib is not imported on a command's way
            from pathlib import Path

            baseline = Path(BASELINE_FILENAME)
        set_field(self, "baseline", baseline)
        set_field(self, "baseline_given", baseline_given)
        set_field(self, "update", update)
        set_field(self, "max_score", max_score)
        set_field(self, "lint", lint)
        set_field(self, "strict", strict)
        set_field(self, "accept", accept)
        set_field(self, "surface_server", surface_server)
        set_field(self, "state_dir", state_dir)
        set_field(self, "allow_empty", allow_empty)
        set_field(self, "session_format", session_format)
        set_field(self, "surface_format", surface_format)
        set_field(self, "surface_from_ini", surface_from_ini)
        set_field(self, "mcp_timeout", mcp_timeout)
        set_field(self, "metric_version", metric_version)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: EntropySettings is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: EntropySettings is frozen")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EntropySettings) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"EntropySettings({shown})"

    @property
    def gate(self) -> bool:
        """Whether the sessions corpus is gated (``--entropy-max-score``/``--entropy-baseline``)."""
        return self.sessions is not None and (self.max_score is not None or self.baseline_given)

    @property
    def active(self) -> bool:
        """Whether this run needs the session-level machinery at all."""
        return self.certify or self.gate or self.lint is not None

    def certification_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``CertificationOptions``."""

        def text(path: Path | None) -> str | None:
            return None if path is None else str(path)

        surface = self.surface_server or text(self.surface)
        # The ini key alone (for the entropy_surface fixture) is no corpus-mode request: it
        # joins corpus mode only beside a sessions corpus; surface-lint still lints it.
        corpus_surface = None if self.surface_from_ini and self.sessions is None else surface
        return {
            "sessions": text(self.sessions),
            "surface": corpus_surface,
            "lint_surface": surface,
            "repairs": text(self.repairs),
            "trial": self.trial,
            "artifact": text(self.artifact),
            "lint": self.lint,
            "strict": self.strict,
            "lenient": self.lenient,
            "require_ratchet": self.require_ratchet,
            "holdout": self.holdout,
            "max_malformed_share": self.max_malformed_share,
            "baseline": str(self.baseline),
            "state_dir": text(self.state_dir),
            "session_format": self.session_format,
            "surface_format": self.surface_format,
            "mcp_timeout": self.mcp_timeout,
        }


def may_be_configured(start: str | os.PathLike[str], environ: Mapping[str, str]) -> bool:
    """Whether a ``PYTEST_ENTROPY_<KEY>`` variable or a configuration file may set a setting
    for a run started in ``start``: False means every setting has its default.

    A cheap look, no parse: the variables by name, ``entropy.yml`` by its presence and
    ``pyproject.toml`` by the word ``entropy`` in its bytes, in ``start`` and every directory
    above it, as :func:`~pytest_entropy.state.settings.find_config_files` searches."""
    for name, value in environ.items():
        if name.startswith(ENV_PREFIX) and value and name not in PROGRAM_VARIABLES:
            return True
    for candidate in config_directories(start):
        if any(os.path.isfile(os.path.join(candidate, name)) for name in YAML_NAMES):
            return True
        pyproject = os.path.join(candidate, PYPROJECT)
        if os.path.isfile(pyproject) and mentions_entropy(pyproject):
            return True
    return False


def mentions_entropy(path: str | os.PathLike[str]) -> bool:
    """Whether a ``pyproject.toml`` may hold ``[tool.entropy]``: the word in its bytes (a
    cheap look before parsing; most files never name the table). An unreadable file says
    yes, so that the full reading reports it."""
    try:
        with open(path, "rb") as stream:
            return b"entropy" in stream.read()
    except OSError:
        return True


def config_directories(start: str | os.PathLike[str] | None = None) -> list[str]:
    """Where configuration files are looked for, nearest first: ``start`` (default: the
    working directory) with its links resolved, then each directory above it to the root.
    (``Path.resolve()`` and ``.parents``, as text: pathlib is not imported on the way.)"""
    directory = os.path.realpath(start if start is not None else os.getcwd())
    found = [directory]
    while (parent := os.path.dirname(directory)) != directory:
        found.append(parent)
        directory = parent
    return found
