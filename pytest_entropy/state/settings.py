"""Every project setting, where it may come from, and the one precedence over them.

A setting is named once here (:data:`SETTINGS`) and may be given, highest first:

1. on the command line (``--state-dir``; applied by each front);
2. in the environment, as ``PYTEST_ENTROPY_<KEY>`` (``PYTEST_ENTROPY_STATE_DIR``);
3. in pytest's ini file as ``entropy_<key>`` (the plugin only);
4. in ``[tool.entropy]`` of the nearest ``pyproject.toml`` that has that table;
5. in the nearest ``entropy.yml`` (or ``entropy.yaml``);
6. its default.

:func:`configured_settings` resolves levels 2, 4 and 5 (the fronts add 1 and 3 on top);
every value carries the place it came from, which ``pytest-entropy config`` prints. A key no
setting has is an error naming it and the closest known key. ``tomllib`` and ``yaml`` are
imported only when such a file exists, so loading the plugin stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.plain_record import Record
from pytest_entropy.ingest.paths import as_path
from pytest_entropy.state.option_table import (
    ENV_PREFIX,
    PROGRAM_VARIABLES,
    PYPROJECT,
    YAML_NAMES,
    config_directories,
    mentions_entropy,
)

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

__all__ = [
    "ENV_PREFIX",
    "SETTINGS",
    "Resolved",
    "Setting",
    "check_value",
    "configured_settings",
    "environment_settings",
    "factor_value",
    "file_settings",
    "find_config_files",
    "mask",
    "setting",
    "share_value",
]

# ENV_PREFIX, PROGRAM_VARIABLES and the file names live in the option table's module (the
# plugin's cheap look at whether anything is configured reads them too).
_PYPROJECT = PYPROJECT
_YAML_NAMES = YAML_NAMES


class Setting(Record, frozen=True):
    """One setting: ``kind`` is ``bool``, ``int``, ``seconds``, ``number``, ``path``,
    ``paths``, ``text``, ``choice``, ``list`` or ``table``; ``secret`` masks it in output."""

    key: str
    kind: str
    help: str
    choices: tuple[str, ...] = ()
    secret: bool = False
    default: Any = None

    @property
    def environment_name(self) -> str:
        return ENV_PREFIX + self.key.replace("-", "_").upper()


SETTINGS: Final = (
    Setting("sessions", "paths", "session files or directories", default=()),
    Setting("surface", "path", "the declared tool surface"),
    Setting("repairs", "path", "the repair table"),
    Setting(
        "state-dir",
        "path",
        "where compiled.json and observation-pool.json live",
        default=".entropy",
    ),
    Setting("agent-dir", "path", "an agent directory (Pi's or Claude Code's)"),
    Setting(
        "agent-kind",
        "choice",
        "the agent directory's layout",
        ("pi", "claude-code", "codex", "gemini-cli"),
    ),
    Setting("artifact", "path", "the compiled artifact the trial replays against"),
    Setting("format", "text", "the session format (auto, fabric or a foreign one)", default="auto"),
    Setting(
        "surface-format",
        "text",
        "the surface format (auto, snapshot or a tool list)",
        default="auto",
    ),
    Setting("ref-prefix", "text", "prefix for every foreign tool name", default=""),
    Setting(
        "strict", "bool", "unreadable or unrecognised session files are an error", default=False
    ),
    Setting(
        "allow-empty", "bool", "a corpus that yields no operations is not an error", default=False
    ),
    Setting("compile", "bool", "run the compile loop and live enforcement (watch)", default=True),
    Setting(
        "partial",
        "bool",
        "compile and watch: drop vetoed proposals and gate the rest again",
        default=False,
    ),
    Setting(
        "redact-values",
        "bool",
        "long or secret-looking values enter the pool (and trial examples) as digests",
        default=False,
    ),
    Setting("grace-ms", "int", "watch: wait after a change, in milliseconds", default=250),
    Setting("poll-ms", "int", "watch: polling interval, in milliseconds", default=500),
    Setting("window", "int", "watch: how many newest session files a tick reads", default=8),
    Setting(
        "metric-version",
        "int",
        "the metric generation: 2 (the reference, the default) or 3 (the upstream's current"
        " one, docs/metric-v3.md)",
        default=2,
    ),
    Setting("jobs", "int", "worker processes", default=1),
    Setting("engine", "choice", "where to run", ("local", "processes", "dask"), default="local"),
    Setting("scheduler", "text", "a Dask scheduler address"),
    Setting("scheduler-timeout", "seconds", "how long to wait for the scheduler", default=10.0),
    Setting("storage-options", "table", "fsspec storage options for session URLs", secret=True),
    Setting(
        "max-inflated-bytes",
        "int",
        "the most bytes one compressed session file may inflate to (more: counted oversized)",
        default=1 << 30,
    ),
    Setting(
        "mcp-header",
        "list",
        "HTTP headers for a live MCP server (Name: value)",
        secret=True,
        default=(),
    ),
    Setting(
        "mcp-timeout",
        "seconds",
        "how long a live MCP server has to list its tools (--mcp-timeout)",
        default=30.0,
    ),
    Setting("baseline", "path", "the ratchet baseline file", default="entropy-baseline.json"),
    Setting("max-score", "number", "fail when the sessions' entropy score exceeds it"),
    Setting("lint", "text", "schema-lint profiles"),
    Setting("lenient", "bool", "certification: damaged session files do not fail", default=False),
    Setting("require-ratchet", "bool", "certification: ratchet-holding gates", default=False),
    Setting("holdout", "number", "certification: the newest share of files held out"),
    Setting("max-malformed-share", "number", "certification: malformed lines tolerated"),
    Setting("size-factor", "number", "how far a corpus may differ in size from its baseline"),
    Setting("accept", "list", "accepted loosenings in the ratchet baseline", default=()),
)

_BY_KEY: Final = {entry.key: entry for entry in SETTINGS}
_PATH_KINDS: Final = ("path", "paths")


def setting(key: str) -> Setting:
    """The setting called ``key`` (``state-dir``; ``state_dir`` too)."""
    return _BY_KEY[key.replace("_", "-")]


class Resolved(Record, frozen=True):
    """A configured value and where it came from (``level``: environment, pyproject, yaml)."""

    value: Any
    source: str
    level: str


def _unknown(raw_key: str, source: str) -> EntropyInputError:
    import difflib

    close = difflib.get_close_matches(raw_key.replace("_", "-").lower(), list(_BY_KEY), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    known = ", ".join(sorted(_BY_KEY))
    return EntropyInputError(f"unknown setting {raw_key!r}{hint}; known: {known}", source=source)


def check_value(entry: Setting, value: Any, source: str, name: str | None = None) -> Any:
    """``value`` checked against the setting's kind (lists become tuples)."""
    name = name or entry.key
    kind = entry.kind
    if kind == "paths":
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise EntropyInputError(f"{name} must be a path or a list of paths", source=source)
    if kind == "list":
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise EntropyInputError(f"{name} must be a string or a list of strings", source=source)
    if kind == "bool":
        if type(value) is not bool:
            raise EntropyInputError(f"{name} must be true or false", source=source)
        return value
    if kind == "int":
        if type(value) is not int or value < 1:
            raise EntropyInputError(f"{name} must be a positive integer", source=source)
        return value
    if kind == "seconds":
        if type(value) not in (int, float) or not 0 < value < float("inf"):
            raise EntropyInputError(f"{name} must be a positive number of seconds", source=source)
        return float(value)
    if kind == "number":
        if type(value) not in (int, float) or value != value or abs(value) == float("inf"):
            raise EntropyInputError(f"{name} must be a finite number", source=source)
        return float(value)
    if kind == "table":
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            # Never repeat the value: it may hold a secret.
            raise EntropyInputError(
                f"{name} must be a table of fsspec storage options (string keys)", source=source
            )
        return dict(value)
    if not isinstance(value, str):
        raise EntropyInputError(f"{name} must be a string", source=source)
    if kind == "choice" and value not in entry.choices:
        raise EntropyInputError(
            f"{name} must be one of {', '.join(entry.choices)}, not {value!r}", source=source
        )
    return value


def _anchored(entry: Setting, value: Any, base: Path) -> Any:
    if entry.kind == "path":
        return str(base / os.path.expanduser(value))
    if entry.kind == "paths":
        return tuple(str(base / os.path.expanduser(item)) for item in value)
    return value


def _file_layer(
    table: Mapping[str, Any], source: str, level: str, base: Path
) -> dict[str, Resolved]:
    out: dict[str, Resolved] = {}
    for raw_key, value in table.items():
        key = str(raw_key).replace("_", "-")
        entry = _BY_KEY.get(key)
        if entry is None:
            raise _unknown(str(raw_key), source)
        checked = _anchored(entry, check_value(entry, value, source, str(raw_key)), base)
        out[key] = Resolved(checked, source, level)
    return out


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _from_text(entry: Setting, text: str, name: str) -> Any:
    """An environment variable's text as the setting's kind."""
    kind = entry.kind
    source = f"environment ({name})"
    if kind == "bool":
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise EntropyInputError(f"{name} must be true or false (1/0, yes/no)", source=source)
    if kind in ("int",):
        try:
            return check_value(entry, int(text.strip()), source, name)
        except ValueError:
            raise EntropyInputError(f"{name} must be a positive integer", source=source) from None
    if kind in ("seconds", "number"):
        try:
            return check_value(entry, float(text.strip()), source, name)
        except ValueError:
            raise EntropyInputError(f"{name} must be a number", source=source) from None
    if kind == "paths":
        return tuple(part for part in text.split(os.pathsep) if part)
    if kind == "list":
        return tuple(part.strip() for part in text.splitlines() if part.strip())
    if kind == "table":
        import json  # only for a table-valued variable

        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise EntropyInputError(f"{name} is not valid JSON: {error}", source=source) from None
        return check_value(entry, value, source, name)
    return check_value(entry, text, source, name)


def environment_settings(environ: Mapping[str, str] | None = None) -> dict[str, Resolved]:
    """Every ``PYTEST_ENTROPY_<KEY>`` variable, checked (an unknown one is an error)."""
    environ = os.environ if environ is None else environ
    out: dict[str, Resolved] = {}
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or not environ[name] or name in PROGRAM_VARIABLES:
            continue
        key = name[len(ENV_PREFIX) :].lower().replace("_", "-")
        entry = _BY_KEY.get(key)
        if entry is None:
            raise _unknown(name, "environment")
        out[key] = Resolved(
            _from_text(entry, environ[name], name), f"environment ({name})", "environment"
        )
    return out


def find_config_files(
    start: str | os.PathLike[str] | None = None,
) -> tuple[Path | None, Path | None]:
    """The nearest ``pyproject.toml`` with a ``[tool.entropy]`` table, and ``entropy.yml``,
    searching from ``start`` (default: the working directory) up to the filesystem root."""
    pyproject: Path | None = None
    yaml_file: Path | None = None
    for candidate in config_directories(start):
        if yaml_file is None:
            for name in _YAML_NAMES:
                if os.path.isfile(os.path.join(candidate, name)):
                    yaml_file = as_path(os.path.join(candidate, name))
                    break
        toml_path = os.path.join(candidate, _PYPROJECT)
        if (
            pyproject is None
            and os.path.isfile(toml_path)
            and mentions_entropy(toml_path)
            and "entropy" in read_toml(toml_path).get("tool", {})
        ):
            pyproject = as_path(toml_path)
        if pyproject is not None and yaml_file is not None:
            break
    return pyproject, yaml_file


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    import tomllib  # only when a pyproject.toml may hold [tool.entropy]

    try:
        with open(path, "rb") as stream:
            return tomllib.load(stream)
    except tomllib.TOMLDecodeError as error:
        raise EntropyInputError(f"not valid TOML ({error})", source=str(path)) from None
    except OSError as error:
        raise EntropyInputError(f"unreadable: {error.strerror}", source=str(path)) from None


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        import yaml  # the plugin and CLI load YAML only when such a file exists
    except ModuleNotFoundError as error:
        if error.name != "yaml":
            raise
        from pytest_entropy.core.extras import extra_hint

        raise EntropyInputError(
            f"a YAML configuration file needs PyYAML: {extra_hint('yaml')}"
            " (or move the settings to [tool.entropy] in pyproject.toml)",
            source=str(path),
        ) from None

    try:
        with open(path, encoding="utf-8") as stream:
            value = yaml.safe_load(stream)
    except yaml.YAMLError as error:
        raise EntropyInputError(f"not valid YAML ({error})", source=str(path)) from None
    except OSError as error:
        raise EntropyInputError(f"unreadable: {error.strerror}", source=str(path)) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EntropyInputError("must be a mapping of settings", source=str(path))
    # Accept both a bare mapping and one nested under "entropy:".
    nested = value.get("entropy")
    return nested if isinstance(nested, dict) else value


def file_settings(start: str | os.PathLike[str] | None = None) -> dict[str, Resolved]:
    """``[tool.entropy]`` over ``entropy.yml`` (relative paths anchored at each file)."""
    pyproject, yaml_file = find_config_files(start)
    out: dict[str, Resolved] = {}
    if yaml_file is not None:
        out.update(_file_layer(read_yaml(yaml_file), str(yaml_file), "yaml", yaml_file.parent))
    if pyproject is not None:
        table = read_toml(pyproject)["tool"]["entropy"]
        if not isinstance(table, dict):
            raise EntropyInputError("[tool.entropy] must be a table", source=str(pyproject))
        label = f"{pyproject} [tool.entropy]"
        out.update(_file_layer(table, label, "pyproject", pyproject.parent))
    return out


def configured_settings(
    start: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Resolved]:
    """The environment over ``[tool.entropy]`` over ``entropy.yml``: every configured key."""
    return {**file_settings(start), **environment_settings(environ)}


def mask(entry: Setting, value: Any) -> Any:
    """``value`` fit to print: a secret's values become ``***`` (its keys and header
    names stay, so a reader sees what is set)."""
    if not entry.secret or value is None:
        return value
    if isinstance(value, Mapping):
        return dict.fromkeys(value, "***")
    if isinstance(value, list | tuple):
        return [f"{str(item).partition(':')[0].strip()}: ***" for item in value]
    return "***"


def share_value(value: Any, name: str, *, holdout: bool = False) -> float:
    """A share of a corpus: a finite number from 0 to 1 (a ``holdout`` share: above 0 and
    below 1, so both parts of the split hold something); ValueError naming ``name``."""
    try:
        number = float(str(value).strip())
    except ValueError:
        number = float("nan")
    low_ok = number > 0 if holdout else number >= 0
    high_ok = number < 1 if holdout else number <= 1
    if not (number == number and low_ok and high_ok):
        bounds = "above 0 and below 1" if holdout else "from 0 to 1"
        raise ValueError(f"{name} needs a share {bounds}, got {value!r}")
    return number


def factor_value(value: Any, name: str) -> float:
    """A size factor: a finite number of at least 1; ValueError naming ``name``."""
    try:
        number = float(str(value).strip())
    except ValueError:
        number = float("nan")
    if not (number == number and 1 <= number < float("inf")):
        raise ValueError(f"{name} needs a factor of at least 1, got {value!r}")
    return number
