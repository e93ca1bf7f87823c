"""The plugin's options, defined once for pytest (``--entropy-*`` plus ini twins) and the CLI.

Each :class:`Option` is registered for pytest as ``--entropy-<name>`` with an
``entropy_<name>`` ini key, and the certification options also as the bare spelling of the
design card (``--sessions``, ``--surface``, ...) when no other plugin has taken it. The CLI
builds its ``certify`` and ``measure`` flags from the same table. Precedence: command line,
then ``PYTEST_ENTROPY_<KEY>`` in the environment, then the ini file, then ``[tool.entropy]``,
then ``entropy.yml``, then the default (``state/settings.py``).

This module imports neither pytest nor the metric, so loading the plugin stays cheap.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_entropy.state.option_table import (
    _INI_TYPES,
    BASELINE_FILENAME,
    GROUP,
    OPTIONS,
    EntropySettings,
    Option,
    _argparse_kwargs,
    may_be_configured,
    option,
)

if TYPE_CHECKING:
    import pytest

    from pytest_entropy.state.settings import Resolved

Configured = Mapping[str, "Resolved"]


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


def _raw(config: pytest.Config, entry: Option, configured: Configured) -> tuple[Any, str]:
    """``(value, origin)`` with origin ``cli``, ``env``, ``ini``, ``file`` or ``default``."""
    given = config.getoption(entry.dest, None)
    if given is not None:
        return given, "cli"
    resolved = configured.get(entry.name)
    if resolved is not None and resolved.level == "environment":
        return resolved.value, "env"
    configured_ini = config.getini(entry.dest)
    if configured_ini is not None and configured_ini != [] and configured_ini != "":
        return configured_ini, "ini"
    if resolved is not None:
        return resolved.value, "file"
    return None, "default"


def _path(config: pytest.Config, entry: Option, configured: Configured) -> Path | None:
    import pytest

    value, origin = _raw(config, entry, configured)
    if origin in ("cli", "env") and isinstance(value, str) and not value.strip():
        # `--entropy-sessions=$UNSET` would otherwise name the working directory.
        where = entry.flag if origin == "cli" else configured[entry.name].source
        raise pytest.UsageError(f"{where} is empty: give it a path")
    if origin == "cli":
        return (config.invocation_params.dir / str(value)).absolute()
    if origin == "ini":
        paths = list(value)
        if len(paths) != 1:
            raise pytest.UsageError(f"ini option {entry.dest} takes one path, got {len(paths)}")
        return Path(paths[0]).absolute()
    if origin in ("env", "file"):
        paths = [value] if isinstance(value, str) else list(value)
        if len(paths) != 1:
            where = configured[entry.name].source
            raise pytest.UsageError(f"{where}: {entry.name} takes one path, got {len(paths)}")
        return (config.invocation_params.dir / str(paths[0])).absolute()
    return None


def _flag(config: pytest.Config, entry: Option, configured: Configured) -> bool:
    value, _origin = _raw(config, entry, configured)
    return bool(value)


def _number(config: pytest.Config, entry: Option, configured: Configured) -> float | None:
    import math

    import pytest

    value, origin = _raw(config, entry, configured)
    if value is None:
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        where = {"cli": entry.flag, "ini": f"ini option {entry.dest}"}.get(origin, entry.name)
        raise pytest.UsageError(f"{where} needs a finite number, got {value!r}")
    return number


def _checked(config: pytest.Config, name: str, configured: Configured) -> float | None:
    """A share (``holdout``, ``max-malformed-share``) or the size factor, range-checked."""
    import pytest

    from pytest_entropy.state.settings import factor_value, share_value

    entry = option(name)
    value = _number(config, entry, configured)
    if value is None:
        return None
    try:
        if name == "size-factor":
            return factor_value(value, entry.flag)
        return share_value(value, entry.flag, holdout=name == "holdout")
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def _seconds(config: pytest.Config, entry: Option, configured: Configured) -> float | None:
    """A positive number of seconds, or ``None`` when not given."""
    import pytest

    number = _number(config, entry, configured)
    if number is not None and number <= 0:
        raise pytest.UsageError(f"{entry.flag} needs a positive number of seconds, got {number:g}")
    return number


def _text(config: pytest.Config, entry: Option, configured: Configured) -> str | None:
    value, _origin = _raw(config, entry, configured)
    return None if value is None or str(value).strip() == "" else str(value).strip()


def _server(config: pytest.Config, entry: Option, configured: Configured) -> str | None:
    """The surface option when it names an MCP server rather than a file.

    The ini key's ``paths`` type splits the value into words and anchors each at the ini
    file's directory; the words are taken back relative to it and joined again.
    """
    value, origin = _raw(config, entry, configured)
    if origin == "default":
        return None
    if origin in ("cli", "env", "file"):
        text = str(value) if isinstance(value, str) else " ".join(map(str, value))
    else:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        words = []
        for item in value:
            word = Path(item)
            try:
                words.append(str(word.relative_to(base)))
            except ValueError:
                words.append(str(word))
        text = " ".join(words)
    from pytest_entropy.sources.mcp import parse_server_spec

    return text if parse_server_spec(text) is not None else None


def _list(config: pytest.Config, entry: Option, configured: Configured) -> tuple[str, ...]:
    value, _origin = _raw(config, entry, configured)
    return tuple(str(item) for item in value) if value else ()


def _format(config: pytest.Config, entry: Option, known: list[str], configured: Configured) -> str:
    """A session or surface format name (default ``auto``), checked against ``known``."""
    import pytest

    value = _text(config, entry, configured)
    if value is None:
        return "auto"
    if value not in known:
        raise pytest.UsageError(
            f"{entry.flag}: unknown format {value!r} (known: {', '.join(known)})"
        )
    return value


def _formats(config: pytest.Config, configured: Configured) -> tuple[str, str]:
    """``(session format, surface format)``; the registry is imported only when one is named."""
    named = (
        _text(config, option(name), configured) not in (None, "auto")
        for name in ("format", "surface-format")
    )
    if not any(named):
        return "auto", "auto"
    from pytest_entropy.ingest.registry import session_formats, surface_formats

    return (
        _format(config, option("format"), session_formats(), configured),
        _format(config, option("surface-format"), surface_formats(), configured),
    )


def _nothing_configured(config: pytest.Config) -> bool:
    """No ``--entropy-*`` option, no ``entropy_*`` ini key, no ``PYTEST_ENTROPY_<KEY>`` and no
    configuration file that may name a setting: every setting is its default.

    The look of most pytest runs in a project with the plugin installed, made without
    importing the settings' checks or reading any file (issue 32)."""
    for entry in OPTIONS:
        if config.getoption(entry.dest, None) is not None:
            return False
        configured_ini = config.getini(entry.dest)
        if configured_ini is not None and configured_ini != [] and configured_ini != "":
            return False
    return not may_be_configured(config.invocation_params.dir, os.environ)


def settings_from_pytest(config: pytest.Config) -> EntropySettings:
    """Resolve every option: command line, environment, ini file, ``[tool.entropy]``,
    ``entropy.yml``, default."""
    if _nothing_configured(config):
        return EntropySettings(baseline=config.rootpath / BASELINE_FILENAME)
    import pytest

    from pytest_entropy.core.errors import EntropyInputError
    from pytest_entropy.state.settings import configured_settings

    try:
        configured = configured_settings(config.invocation_params.dir)
    except EntropyInputError as error:
        raise pytest.UsageError(str(error)) from None
    baseline = _path(config, option("baseline"), configured)
    server = _server(config, option("surface"), configured)
    state = configured.get("state-dir")  # no flag of its own: environment or files
    state_dir = (config.invocation_params.dir / str(state.value)) if state else None
    session_format, surface_format = _formats(config, configured)
    settings = EntropySettings(
        certify=_flag(config, option("certify"), configured)
        or _flag(config, option("certify-only"), configured),
        certify_only=_flag(config, option("certify-only"), configured),
        lenient=_flag(config, option("lenient"), configured),
        require_ratchet=_flag(config, option("require-ratchet"), configured),
        holdout=_checked(config, "holdout", configured),
        max_malformed_share=_checked(config, "max-malformed-share", configured),
        size_factor=_checked(config, "size-factor", configured),
        sessions=_path(config, option("sessions"), configured),
        surface=None if server is not None else _path(config, option("surface"), configured),
        surface_server=server,
        repairs=_path(config, option("repairs"), configured),
        trial=_flag(config, option("trial"), configured),
        artifact=_path(config, option("artifact"), configured),
        json=_path(config, option("json"), configured),
        markdown=_path(config, option("markdown"), configured),
        html=_path(config, option("html"), configured),
        baseline=baseline if baseline is not None else config.rootpath / BASELINE_FILENAME,
        baseline_given=baseline is not None,
        update=_flag(config, option("update"), configured),
        max_score=_number(config, option("max-score"), configured),
        lint=_text(config, option("lint"), configured),
        strict=_flag(config, option("strict"), configured),
        accept=_list(config, option("accept"), configured),
        state_dir=state_dir,
        allow_empty=_flag(config, option("allow-empty"), configured),
        session_format=session_format,
        surface_format=surface_format,
        surface_from_ini=_raw(config, option("surface"), configured)[1] == "ini",
        mcp_timeout=_seconds(config, option("mcp-timeout"), configured),
        metric_version=_metric_version(config, configured),
    )
    if settings.max_score is not None and settings.sessions is None:
        _, origin = _raw(config, option("max-score"), configured)
        if origin in ("cli", "ini"):  # asked of pytest itself (a file's may be for the CLI)
            raise pytest.UsageError(
                "--entropy-max-score needs --entropy-sessions (the corpus whose score it gates)"
            )
    if settings.metric_version == 3 and settings.certify:
        # The v3 list reads the upstream's corpus-mode options only (docs/metric-v3.md).
        used = [
            name
            for name, value in (
                ("--entropy-repairs", settings.repairs),
                ("--entropy-lint", settings.lint),
                ("--entropy-strict", settings.strict),
                ("--entropy-require-ratchet", settings.require_ratchet),
                ("--entropy-holdout", settings.holdout),
                ("--entropy-max-malformed-share", settings.max_malformed_share),
            )
            if value
        ]
        if used:
            raise pytest.UsageError(
                f"{used[0]} is a metric v2 certification option; drop it with"
                " --entropy-metric-version 3"
            )
    return settings


def _metric_version(config: pytest.Config, configured: Configured) -> int:
    """``--entropy-metric-version`` (or its ini key, the environment, the files): 2 or 3."""
    import argparse

    import pytest

    from pytest_entropy.state.values import metric_version_value

    entry = option("metric-version")
    value, origin = _raw(config, entry, configured)
    if value is None:
        return 2
    try:
        return metric_version_value(str(value))
    except argparse.ArgumentTypeError as error:
        where = {"cli": entry.flag, "ini": f"ini option {entry.dest}"}.get(origin, entry.name)
        raise pytest.UsageError(f"{where} {error}") from None
