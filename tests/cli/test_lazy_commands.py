"""Commands load lazily (issue 32, item 2).

``--help`` and ``--version`` import no command module (and none of the libraries the
commands use); a command imports its own module only; the grammar built lazily is the full
grammar, byte for byte: the top-level help lists every command from the table in
``cli/commands/__init__.py``, which must say what the modules register.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from pytest_entropy.cli import app, main
from pytest_entropy.cli.commands import COMMANDS
from pytest_entropy.cli.version import version_text
from pytest_entropy.core import native_core

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "corpora" / "demo"
# What a command-free start must not pay for: every command module, the commands' shared
# helpers, the pipeline, the hashing code, the JSON engines, the schema validator and typing
# (a third of the interpreter's own start-up).
HEAVY = (
    "pytest_entropy.cli.common",
    "pytest_entropy.cli.configured",
    "pytest_entropy.run.corpus",
    "pytest_entropy.core.canonical",
    "pytest_entropy.core.records",
    "orjson",
    "msgspec",
    "jsonschema",
    "typing",
)


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise AssertionError("no sub-commands")


# What, in the package's modules, comes from dataclasses or inspect: a dataclass, a function
# of theirs, the module itself (orjson's own start-up imports both, so their presence in
# sys.modules says nothing about ours).
_DATACLASS_USES = (
    "shunned = [sys.modules.get('dataclasses'), sys.modules.get('inspect')]\n"
    "uses = sorted(f'{name}.{key}' for name, module in list(sys.modules.items())\n"
    "    if name.startswith('pytest_entropy') for key, value in vars(module).items()\n"
    "    if any(value is shunned_module for shunned_module in shunned if shunned_module)\n"
    "    or getattr(value, '__module__', None) in ('dataclasses', 'inspect')\n"
    "    or isinstance(value, type) and '__dataclass_fields__' in vars(value))\n"
)


def _imported_after(argv: list[str], cwd: Path = REPO) -> tuple[int, list[str], str, list[str]]:
    """Run ``main(argv)`` in a fresh interpreter; its status, the modules it imported, its
    output and what the package's modules hold of dataclasses and inspect."""
    code = (
        "import json, sys\n"
        "from pytest_entropy.cli import main\n"
        f"status = main({argv!r})\n"
        f"{_DATACLASS_USES}"
        "sys.stderr.write('\\n@@' + json.dumps([status, sorted(sys.modules), uses]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True
    )
    status, modules, uses = json.loads(result.stderr.rpartition("@@")[2])
    return status, modules, result.stdout, uses


def _commands_in(modules: list[str]) -> list[str]:
    prefix = "pytest_entropy.cli.commands."
    return sorted(name[len(prefix) :] for name in modules if name.startswith(prefix))


def test_the_table_says_what_the_modules_register() -> None:
    full = _subparsers(app.build_parser())
    listed = [(choice.dest, choice.help) for choice in full._choices_actions]
    assert listed == [(command.name, command.help) for command in COMMANDS]


@pytest.mark.parametrize("loaded", [(), *[(command.name,) for command in COMMANDS]])
def test_a_lazily_built_grammar_shows_the_full_help(
    loaded: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    full, lazy = app.build_parser(), app.build_parser(loaded)
    assert lazy.format_help() == full.format_help()
    for name in loaded:
        assert (
            _subparsers(lazy).choices[name].format_help()
            == _subparsers(full).choices[name].format_help()
        )


@pytest.mark.parametrize("argv", [["--version"], ["--no-color", "--version"], ["--help"]])
def test_help_and_version_import_no_command_module(argv: list[str]) -> None:
    status, modules, out, _ = _imported_after(argv)
    assert status == 0
    assert out.startswith("usage: pytest-entropy" if "--help" in argv else "pytest-entropy ")
    assert _commands_in(modules) == []
    assert [name for name in HEAVY if name in modules] == []


def test_the_top_level_help_is_unchanged_by_laziness(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The help a user sees (the lazy grammar) against the full grammar's rendering.
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["--help"]) == 0
    assert capsys.readouterr().out == app.build_parser().format_help()


def test_a_command_imports_its_own_module_only() -> None:
    argv = [
        "measure",
        "--sessions",
        str(DEMO / "sessions"),
        "--surface",
        str(DEMO / "surface.json"),
        "--repairs",
        str(DEMO / "repairs.json"),
    ]
    status, modules, out, dataclass_uses = _imported_after(argv)
    assert status == 0 and "report hash" in out
    assert _commands_in(modules) == ["measure"]
    # What other commands need: the compiler, the trial, the watch loop, Dask, the ratchet.
    unused = ("core.compiler", "core.trial", "run.watch", "testing.ratchet", "cli.steering")
    assert [name for name in unused if f"pytest_entropy.{name}" in modules] == []
    assert "dask" not in modules
    # What a command that reads sessions and writes nothing leaves alone (issue 32, item 2):
    # the observation pool, the state store (with its lock and sockets), the evidence
    # cache, the surface diff, the agent directories and the MCP servers' module; and of
    # the session readers, those of formats no file is in (the demo is native: none, nor
    # the converters' writer).
    readers = ("pi", "claude_code", "codex", "otel_genai", "inspect_ai", "log_surfaces")
    assert [name for name in readers if f"pytest_entropy.ingest.{name}" in modules] == []
    assert "pytest_entropy.ingest.writer" not in modules
    unwritten = (
        "core.pool",
        "state.store",
        "state.lock",
        "sources.incremental",
        "core.surface_diff",
        "sources.agent_dir",
        "sources.mcp",
    )
    assert [name for name in unwritten if f"pytest_entropy.{name}" in modules] == []
    # What only some runs need, loaded where it is used (issue 32, item 2): metric v3's
    # normal forms, value redaction, the number text of toFixed's long form, compressed
    # files, remote copies, HTML escaping, the heap trim of a large run, a worker pool.
    rare = ("core.v3.normal_form", "core.v3.proposals", "core.redact")
    assert [name for name in rare if f"pytest_entropy.{name}" in modules] == []
    stdlib = ("decimal", "gzip", "tempfile", "html", "ctypes", "threading", "multiprocessing")
    stdlib += ("shutil", "bz2", "lzma")  # argparse's width lookup (cli/app.py: _Formatter)
    assert [name for name in stdlib if name in modules] == []
    # Its records are plain records (core/plain_record.py), no dataclass: nothing of the
    # package's imports dataclasses or inspect, builds a dataclass or holds their functions.
    assert dataclass_uses == []
    # With the Rust core, the surface's parse and the report's text are the core's: orjson
    # (and the uuid, platform and datetime it imports) is never loaded (issue 32).
    if not _plain_forced():
        assert "orjson" not in modules
        # Nor, then, what orjson itself imports.
        assert [name for name in ("dataclasses", "inspect", "uuid") if name in modules] == []
        # The core hashes the report: hashlib (and OpenSSL's libcrypto) is not loaded. (The
        # json module cannot be checked here: the probe itself reports through it.)
        assert [name for name in ("hashlib", "_hashlib") if name in modules] == []


def test_propose_loads_no_openssl_and_no_sockets() -> None:
    # A propose hashes nothing with hashlib and takes no lock, yet its imports loaded both
    # (compile digests, the store's lock and journal): OpenSSL's libcrypto and the socket
    # module were about 5 MB of its peak memory (issue 28, point 5).
    argv = ["propose", "--sessions", str(DEMO / "sessions"), "--surface"]
    status, modules, out, _ = _imported_after([*argv, str(DEMO / "surface.json")])
    assert status == 0 and "report hash" in out
    assert [name for name in ("socket", "secrets", "hmac") if name in modules] == []
    assert ("_hashlib" in modules) == _plain_forced()  # the plain path hashes the report


def _plain_forced() -> bool:
    return not native_core.core_available() or any(
        os.environ.get(variable, "").strip() not in ("", "0")
        for variable in ("PYTEST_ENTROPY_PURE", "PYTEST_ENTROPY_NO_NATIVE")
    )


def test_compile_hashes_without_openssl(tmp_path: Path) -> None:
    # With the core, a compile's digests are the core's SHA-256 (canonical.sha256): hashlib
    # and OpenSSL's libcrypto stay out of the process.
    argv = ["compile", "--sessions", str(DEMO / "sessions"), "--surface"]
    argv += [str(DEMO / "surface.json"), "--out", str(tmp_path / "compiled.json")]
    status, modules, _, _ = _imported_after(argv)
    assert status == 0 and (tmp_path / "compiled.json").is_file()
    assert ("_hashlib" in modules) == _plain_forced()


@pytest.mark.parametrize("columns", [None, "100", "37", "0", "-4", "wide", ""])
def test_the_help_is_as_wide_as_argparse_would_make_it(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert app._terminal_columns() == shutil.get_terminal_size().columns
    ours = app._Formatter("pytest-entropy")
    theirs = argparse.HelpFormatter("pytest-entropy")
    assert ours._width == theirs._width
    assert ours._max_help_position == theirs._max_help_position


def test_a_command_s_own_help_loads_that_command(tmp_path: Path) -> None:
    status, modules, out, _ = _imported_after(["freedom", "--help"], cwd=tmp_path)
    assert status == 0 and out.startswith("usage: pytest-entropy freedom")
    assert _commands_in(modules) == ["freedom"]


def test_a_misspelt_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mesure"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'mesure'" in err
    assert all(repr(command.name) in err for command in COMMANDS)


def test_version_says_whether_the_native_core_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = version_text().splitlines()[0]
    assert first.startswith("pytest-entropy ") and "metric v2" in first and "ICU " in first
    monkeypatch.setattr(native_core, "_import_core", lambda: types.ModuleType("fake core"))
    previous = native_core.use_native_core(True)  # whatever PYTEST_ENTROPY_PURE said
    try:
        assert version_text().splitlines()[1] == "native core: loaded (pytest_entropy._core)"
        native_core.use_native_core(False)
        assert version_text().splitlines()[1].startswith("native core: off")
        monkeypatch.setattr(native_core, "_import_core", lambda: None)
        assert version_text().splitlines()[1].startswith("native core: not installed")
    finally:
        native_core.use_native_core(previous)


def test_version_line_in_a_process(tmp_path: Path) -> None:
    # PYTEST_ENTROPY_PURE=1 refuses the core whether or not it is built here.
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTEST_ENTROPY_PURE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(out) == 2 and out[0].startswith("pytest-entropy ")
    assert out[1] in (
        "native core: off (PYTEST_ENTROPY_PURE=1), the plain Python runs",
        "native core: not installed, the plain Python runs",
    )


def test_no_native_refuses_the_core_as_pure_does(tmp_path: Path) -> None:
    # PYTEST_ENTROPY_NO_NATIVE=1 once refused the C kernels; the Rust core is the only
    # native code left, so it refuses that, and --version names the variable set.
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ENTROPY_PURE"}
    env |= {"PYTHONPATH": str(REPO), "PYTEST_ENTROPY_NO_NATIVE": "1"}
    code = (
        "import pytest_entropy; from pytest_entropy.core import native_core;"
        "from pytest_entropy.cli.version import native_core_text;"
        "print(native_core.core() is None, native_core_text())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out in (
        "True native core: off (PYTEST_ENTROPY_NO_NATIVE=1), the plain Python runs",
        "True native core: not installed, the plain Python runs",
    )


def test_a_command_imports_no_typing(tmp_path: Path) -> None:
    # The modules on a command's way keep typing's names for the type checker and take the
    # few that run from core/typing_lite (issue 32, item 2). Run where no pyproject.toml is
    # found: reading one loads tomllib, which imports typing itself.
    argv = ["measure", "--sessions", str(DEMO / "sessions"), "--surface"]
    argv += [str(DEMO / "surface.json"), "--repairs", str(DEMO / "repairs.json")]
    status, modules, out, _ = _imported_after(argv, cwd=tmp_path)
    assert status == 0 and "report hash" in out
    assert "tomllib" not in modules
    assert "typing" not in modules


def test_a_command_imports_no_pathlib(tmp_path: Path) -> None:
    # A measure joins, lists and opens the files it is named as text (ingest/paths.py gives
    # the names pathlib would): pathlib, and with it urllib.parse and ipaddress on 3.11 and
    # 3.12, stays off the way (issue 32, item 2). A directory of sessions and a file named
    # with a trailing "./" both read.
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for source in sorted((DEMO / "sessions").iterdir()):
        (sessions / source.name).write_bytes(source.read_bytes())
    argv = ["measure", "--sessions", "./sessions/", "--surface", str(DEMO / "surface.json")]
    argv += ["--repairs", str(DEMO / "repairs.json")]
    status, modules, out, _ = _imported_after(argv, cwd=tmp_path)
    assert status == 0 and "report hash" in out
    assert "read 3 files" in out
    assert not {"pathlib", "urllib.parse", "ipaddress"} & set(modules)
