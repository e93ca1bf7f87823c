"""The one option table both fronts use, and the project configuration files.

Options: each :class:`Option` is registered for pytest as ``--entropy-<name>`` with an
``entropy_<name>`` ini key (``pytest_entropy.pytest.options``), and the certification
options also as the bare spelling of the design card (``--sessions``, ``--surface``, ...)
when no other plugin has taken it. The CLI builds its ``certify`` and ``measure`` flags from
the same table, and every flag several commands share (``--sessions``, ``--surface``,
``--repairs``, ``--state-dir``, ``--agent-dir``, ``--cwd``) from :data:`COMMAND_FLAGS`. This
module imports neither pytest nor the metric, so loading the plugin stays cheap.

Project configuration: ``[tool.entropy]`` and ``entropy.yml`` (read by
:mod:`pytest_entropy.state.settings`, which names every key and the one precedence: command
line > environment ``PYTEST_ENTROPY_<KEY>`` > pytest ini ``entropy_*`` > ``[tool.entropy]``
> ``entropy.yml`` > default). :func:`load_config` gives the compile loop's record of them.
``compile: false`` turns off the compile loop and live enforcement entirely. YAML is read
with the safe loader only.

Example ``pyproject.toml``::

    [tool.entropy]
    compile = true
    surface = "tools/surface.json"
    sessions = ["logs/sessions"]
    state-dir = ".entropy"
    scheduler-timeout = 10                       # seconds (--scheduler-timeout)
    storage-options = { anon = false }           # fsspec options (--storage-options)
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Final

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.state.settings import find_config_files
from pytest_entropy.state.values import positive_int, positive_seconds, storage_options_value

__all__ = ["find_config_files", "load_config"]  # and the tables below


@dataclass(frozen=True, slots=True)
class EntropyConfig:
    """The settings the loop and enforcement read; ``sources`` says where each came from."""

    compile: bool = True
    sessions: tuple[str, ...] = ()
    agent_dir: str | None = None
    surface: str | None = None
    repairs: str | None = None
    state_dir: str | None = None
    grace_ms: int = 250
    poll_ms: int = 500
    window: int = 8
    strict: bool = False
    # An input that yields no operations passes (the twin of --allow-empty).
    allow_empty: bool = False
    # fsspec storage options for session URLs (the twin of --storage-options); they may
    # hold credentials, so they stay out of the repr.
    storage_options: dict[str, Any] | None = field(default=None, repr=False)
    scheduler_timeout: float = 10.0
    partial: bool = False  # compile --partial
    redact_values: bool = False  # --redact-values (pool, compile, watch, trial --explain)
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def with_overrides(
        self, overrides: Mapping[str, Any], source: str, base: Path | None = None
    ) -> EntropyConfig:
        """A copy with the non-``None`` values of ``overrides`` applied.

        Relative paths from a configuration file are resolved against ``base`` (the file's
        directory); paths from the command line stay relative to the working directory.
        """
        values = {key: value for key, value in overrides.items() if value is not None}
        if not values:
            return self
        checked = _validated(values, source)
        if base is not None:
            checked = _anchored(checked, base)
        sources = {**self.sources, **dict.fromkeys(checked, source)}
        return replace(self, **checked, sources=sources)


_FIELD_TYPES = {
    "compile": bool,
    "sessions": tuple,
    "agent_dir": str,
    "surface": str,
    "repairs": str,
    "state_dir": str,
    "grace_ms": int,
    "poll_ms": int,
    "window": int,
    "strict": bool,
    "allow_empty": bool,
    "storage_options": dict,
    "scheduler_timeout": float,
    "partial": bool,
    "redact_values": bool,
}


def _validated(values: Mapping[str, Any], source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    known = {f.name for f in fields(EntropyConfig)} - {"sources"}
    for raw_key, value in values.items():
        key = raw_key.replace("-", "_")
        if key not in known:
            raise EntropyInputError(f"unknown setting {raw_key!r}", source=source)
        expected = _FIELD_TYPES[key]
        if expected is tuple:
            if isinstance(value, str):
                value = (value,)
            elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                value = tuple(value)
            else:
                raise EntropyInputError(
                    f"{raw_key} must be a path or a list of paths", source=source
                )
        elif expected is bool:
            if type(value) is not bool:
                raise EntropyInputError(f"{raw_key} must be true or false", source=source)
        elif expected is int:
            if type(value) is not int or value < 1:
                raise EntropyInputError(f"{raw_key} must be a positive integer", source=source)
        elif expected is float:
            value = positive_seconds(value, raw_key, source)
        elif expected is dict:
            value = storage_options_value(value, raw_key, source)
        elif not isinstance(value, str):
            raise EntropyInputError(f"{raw_key} must be a string", source=source)
        out[key] = value
    return out


_PATH_FIELDS = ("agent_dir", "surface", "repairs", "state_dir")


def _anchored(values: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(values)
    for key in _PATH_FIELDS:
        if key in out:
            out[key] = str(base / os.path.expanduser(out[key]))
    if "sessions" in out:
        out["sessions"] = tuple(str(base / os.path.expanduser(p)) for p in out["sessions"])
    return out


def load_config(
    start: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> EntropyConfig:
    """Defaults, then ``entropy.yml``, ``[tool.entropy]``, the environment
    (``PYTEST_ENTROPY_<KEY>``), then ``overrides`` (the command line).

    Every key of :data:`~pytest_entropy.state.settings.SETTINGS` is checked; the ones this
    record holds are taken, the others are the commands' (see ``cli/configured.py``).
    """
    from pytest_entropy.state.settings import configured_settings

    config = EntropyConfig()
    held = {f.name for f in fields(EntropyConfig)} - {"sources"}
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, resolved in configured_settings(start, environ).items():
        name = key.replace("-", "_")
        if name in held:
            values[name] = resolved.value
            sources[name] = resolved.source
    if values:
        config = replace(config, **values, sources=sources)
    if overrides:
        config = config.with_overrides(overrides, "command line")
    return config


BASELINE_FILENAME: Final = "entropy-baseline.json"
GROUP: Final = "entropy"


@dataclass(frozen=True, slots=True)
class Option:
    """One option: ``kind`` is ``path``, ``flag``, ``number``, ``text`` or ``list`` (repeatable)."""

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


def add_cli_option(parser: argparse.ArgumentParser, name: str) -> None:
    """Add the CLI spelling of one option (``--sessions``, ``--baseline``, ...)."""
    entry = option(name)
    flag = entry.cli_flag or entry.bare_flag
    if entry.kind == "flag":
        parser.add_argument(flag, dest=entry.dest, action="store_true", help=entry.help)
    elif entry.kind == "number":
        parser.add_argument(
            flag, dest=entry.dest, metavar=entry.metavar, help=entry.help, type=float
        )
    else:
        parser.add_argument(flag, dest=entry.dest, metavar=entry.metavar, help=entry.help)


# ------------------------------------------------------------ flags the commands share


@dataclass(frozen=True, slots=True)
class CommandFlag:
    """A flag several ``pytest-entropy`` commands share, defined once here.

    ``cli/common.py`` turns it into an argparse argument (:func:`add_command_flag`); ``many``
    takes one or more values. The certification's ``--sessions DIR`` is the pytest table's
    (:data:`OPTIONS`), which ``certify`` adds through :func:`add_cli_option`.
    """

    flag: str
    help: str
    metavar: str | None
    many: bool = False
    action: str | None = None  # "store_true" (a switch) or "append" (repeatable)
    choices: tuple[Any, ...] = ()
    switch: bool = False  # an on/off flag (``--allow-empty``), no value
    value_type: Callable[[str], Any] | None = None  # argparse's ``type`` (positive_int)


COMMAND_FLAGS: Final = {
    "sessions": CommandFlag(
        "--sessions",
        "session files, directories (a directory means its *.jsonl, by name, or what"
        " --format says) or fsspec URLs (s3://..., file://...; needs the dask extra)",
        "PATH",
        many=True,
    ),
    "sessions-dir": CommandFlag("--sessions", "a directory of session files", "DIR"),
    "agent-dir": CommandFlag(
        "--agent-dir",
        "an agent directory: Pi's (sessions/<project>/, state in fabric/entropy/), Claude"
        " Code's (~/.claude: projects/<project>/*.jsonl), Codex's (~/.codex: sessions/YYYY/"
        "MM/DD/rollout-*.jsonl) or Gemini CLI's (~/.gemini: tmp/<project>/chats/); the last"
        " three keep their state in the project's .entropy/",
        "DIR",
    ),
    "agent-kind": CommandFlag(
        "--agent-kind",
        "the --agent-dir layout (default: detected; claude-code when it holds projects/,"
        " codex when its sessions/ holds year folders, gemini-cli when it holds tmp/)",
        "KIND",
        choices=("pi", "claude-code", "codex", "gemini-cli"),
    ),
    "state-dir": CommandFlag("--state-dir", "state directory (default: .entropy/ here)", "DIR"),
    "surface": CommandFlag(
        "--surface",
        "tool surface: a snapshot {version: 1, actions: [{ref, inputSchema}]} or a tool "
        "list (MCP, OpenAI, Anthropic, Gemini, Pi, BFCL, ...; see --surface-format), or a live "
        "MCP server: mcp+stdio:COMMAND ARGS, http(s)://URL, module:attribute",
        "FILE",
    ),
    "repairs": CommandFlag("--repairs", "repair table or array of rows", "FILE"),
    "cwd": CommandFlag("--cwd", "the project directory (default: the current one)", "DIR"),
    "partial": CommandFlag(
        "--partial",
        "when replay or the gate vetoes proposals, drop exactly those and gate the rest"
        " again until a set passes (default: partial in [tool.entropy], else all or nothing)",
        "",
        action="store_true",
    ),
    "only": CommandFlag(
        "--only",
        "apply only the auto proposals of this kind, tool REF or parameter REF.KEY; repeatable",
        "KIND|REF",
        action="append",
    ),
    "exclude": CommandFlag(
        "--exclude",
        "never apply the auto proposals of this kind, tool REF or parameter REF.KEY; repeatable",
        "KIND|REF",
        action="append",
    ),
    "min-gain": CommandFlag(
        "--min-gain",
        "skip an auto proposal whose own score gain (the score with it alone applied) is"
        " below X; it is reported as skipped with its gain",
        "X",
    ),
    "explain": CommandFlag(
        "--explain",
        "explain the result in plain words (an added explanations key in --json)",
        "",
        action="store_true",
    ),
    "redact-values": CommandFlag(
        "--redact-values",
        "replace observed values longer than 64 characters, shaped like a secret or under a"
        " secret-like key by a digest before they are stored or shown (default:"
        " redact-values in [tool.entropy], else verbatim, as the reference)",
        "",
        action="store_true",
    ),
    "storage-options": CommandFlag(
        "--storage-options",
        "fsspec storage options for session URLs, as a JSON object (e.g. "
        '\'{"key": ..., "secret": ..., "client_kwargs": {"endpoint_url": ...}}\'), given '
        "to every read on the client and the workers; default: storage-options in "
        "[tool.entropy]. Never shown in output or messages",
        "JSON",
    ),
    "max-inflated-bytes": CommandFlag(
        "--max-inflated-bytes",
        "the most bytes one compressed (.gz) session file may inflate to; a file that inflates"
        " further contributes nothing and is counted as oversized (default: max-inflated-bytes"
        " in [tool.entropy], else 1 GiB)",
        "BYTES",
        value_type=positive_int,
    ),
    "metric-version": CommandFlag(
        "--metric-version",
        "the metric generation: 2 (the reference) or 3 (the upstream's current one, see"
        " docs/metric-v3.md); default: metric-version in [tool.entropy], else 2",
        "2|3",
        choices=(2, 3),
        value_type=int,
    ),
    "allow-empty": CommandFlag(
        "--allow-empty",
        "pass on a corpus that yields no operations (default: exit 2, naming what was read;"
        " or allow-empty in [tool.entropy])",
        None,
        switch=True,
    ),
}


def add_command_flag(
    parser: Any, name: str, *, required: bool = False, help: str | None = None
) -> None:
    """Add the shared flag ``name`` of :data:`COMMAND_FLAGS` to a parser or group
    (``help`` adds what this command means by it)."""
    entry = COMMAND_FLAGS[name]
    if entry.switch:
        # None, not False: "not given" falls through to the project configuration.
        parser.add_argument(entry.flag, action="store_true", default=None, help=help or entry.help)
        return
    kwargs: dict[str, Any] = {"metavar": entry.metavar, "help": help or entry.help}
    if entry.action == "store_true":
        # None, not False: "not given" falls through to the project configuration.
        kwargs = {"action": "store_true", "default": None, "help": help or entry.help}
    elif entry.action is not None:
        kwargs["action"] = entry.action
    if entry.many:
        kwargs["nargs"] = "+"
    if entry.choices:
        kwargs["choices"] = entry.choices
    if entry.value_type is not None:
        kwargs["type"] = entry.value_type
    if required:
        kwargs["required"] = True
    parser.add_argument(entry.flag, **kwargs)


def is_ci(environ: Any = None) -> bool:
    """``CI`` set to anything but empty, ``0`` or ``false`` (any case)."""
    value = (os.environ if environ is None else environ).get("CI")
    return value is not None and value.strip().lower() not in ("", "0", "false")


@dataclass(frozen=True, slots=True)
class EntropySettings:
    """The resolved options of one pytest run (paths absolute)."""

    certify: bool = False
    certify_only: bool = False
    lenient: bool = False
    require_ratchet: bool = False
    holdout: float | None = None
    max_malformed_share: float | None = None
    size_factor: float | None = None
    sessions: Path | None = None
    surface: Path | None = None
    repairs: Path | None = None
    trial: bool = False
    artifact: Path | None = None
    json: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    baseline: Path = Path(BASELINE_FILENAME)
    baseline_given: bool = False
    update: bool = False
    max_score: float | None = None
    lint: str | None = None
    strict: bool = False
    accept: tuple[str, ...] = ()
    # ``--entropy-surface`` naming a server (mcp+stdio:..., a URL, module:attribute), as given.
    surface_server: str | None = None
    # ``state-dir`` of the configuration: where the trial looks for compiled.json first.
    state_dir: Path | None = None
    allow_empty: bool = False
    session_format: str = "auto"
    surface_format: str = "auto"
    # Where ``surface`` came from: the ``entropy_surface`` ini key (meant for the fixture)
    # does not put certification into corpus mode on its own.
    surface_from_ini: bool = False
    mcp_timeout: float | None = None  # seconds a live MCP server has to list (None: 30)
    metric_version: int = 2  # --entropy-metric-version (docs/metric-v3.md)

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
