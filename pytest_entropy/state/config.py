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

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.plain_record import Record, field, field_names, replace
from pytest_entropy.state.option_table import (
    BASELINE_FILENAME,
    GROUP,
    OPTIONS,
    EntropySettings,
    Option,
    is_ci,
    option,
)
from pytest_entropy.state.settings import find_config_files
from pytest_entropy.state.values import positive_int, positive_seconds, storage_options_value

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

__all__ = [
    "BASELINE_FILENAME",
    "COMMAND_FLAGS",
    "GROUP",
    "OPTIONS",
    "EntropySettings",
    "Option",
    "find_config_files",
    "is_ci",
    "load_config",
    "option",
]  # and the tables below


class EntropyConfig(Record, frozen=True):
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
    known = set(field_names(EntropyConfig)) - {"sources"}
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
    held = set(field_names(EntropyConfig)) - {"sources"}
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


class CommandFlag(Record, frozen=True):
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
        " --format says), - for standard input, or fsspec URLs (s3://..., file://...;"
        " needs the dask extra)",
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
