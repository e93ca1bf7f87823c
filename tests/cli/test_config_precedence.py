"""One configuration for every command: command line > PYTEST_ENTROPY_<KEY> > [tool.entropy]
> entropy.yml > default, checked for every flag of every command that a setting names."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main, parse_arguments
from pytest_entropy.cli.configured import _NOT_ARGUMENTS, _action_for
from pytest_entropy.state.settings import SETTINGS, Setting
from tests.parser_support import command_parsers

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
LEVELS = ("yaml", "pyproject", "environment", "cli")


def _cases() -> list[tuple[str, str]]:
    cases = []
    for name, parser in command_parsers().items():
        for entry in SETTINGS:
            if entry.key not in _NOT_ARGUMENTS and _action_for(parser, entry.key) is not None:
                cases.append((name, entry.key))
    return cases


CASES = _cases()


def _texts(action: argparse.Action) -> list[str]:
    """Four values of the flag, each differing from the one before and from the default."""
    if action.choices is not None:
        pool = [str(c) for c in action.choices if c != action.default]
        return [pool[i % len(pool)] for i in range(4)] if len(pool) > 1 else pool * 4
    if action.type is int or getattr(action.type, "__name__", "") == "positive_int":
        return ["2", "3", "4", "5"]
    if (
        getattr(action.type, "__name__", "") in ("_seconds", "mcp_seconds", "float")
        or action.type is float
    ):
        return ["2.5", "3.5", "4.5", "5.5"]
    return [f"{level}-value" for level in LEVELS]


def _file_value(entry: Setting, text: str) -> Any:
    if entry.kind in ("paths", "list"):
        return [text]
    if entry.kind == "int":
        return int(text)
    if entry.kind in ("seconds", "number"):
        return float(text)
    return text


def _expected(entry: Setting, action: argparse.Action, text: str, level: str, base: Path) -> Any:
    value: Any = text
    if level in ("yaml", "pyproject") and entry.kind in ("path", "paths"):
        value = str(base / text)
    if callable(action.type):
        value = action.type(value)
    many = action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction)
    return [value] if many else value


def _base_argv(parser: argparse.ArgumentParser, tested: argparse.Action) -> list[str]:
    """Dummy values for every required flag and positional the tested one is not."""
    argv: list[str] = []
    exclusive = {
        id(member): group
        for group in parser._mutually_exclusive_groups
        for member in group._group_actions
    }
    covered: set[int] = set()
    for group in parser._mutually_exclusive_groups:
        if group.required and tested not in group._group_actions:
            argv += [group._group_actions[0].option_strings[0], "dummy"]
            covered.add(id(group))
    for action in parser._actions:
        if action is tested or id(exclusive.get(id(action))) in covered:
            continue
        if action.option_strings and action.required:
            argv += [action.option_strings[0], "dummy"]
        elif not action.option_strings and action.nargs not in ("?", "*", argparse.REMAINDER):
            argv.append("dummy")
    return argv


def _write_level(tmp: Path, level: str, key: str, value: Any) -> None:
    if level == "yaml":
        (tmp / "entropy.yml").write_text(json.dumps({key: value}) + "\n", encoding="utf-8")
    elif level == "pyproject":
        (tmp / "pyproject.toml").write_text(
            f"[tool.entropy]\n{json.dumps(key)} = {json.dumps(value)}\n", encoding="utf-8"
        )


@pytest.mark.parametrize(("command", "key"), CASES, ids=[f"{c}-{k}" for c, k in CASES])
def test_every_level_of_the_precedence(
    command: str, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("PYTEST_ENTROPY_"):
            monkeypatch.delenv(name)
    entry = next(item for item in SETTINGS if item.key == key)
    parser = command_parsers()[command]
    action = _action_for(parser, key)
    assert action is not None
    base = _base_argv(parser, action)
    if action.nargs == 0:  # a switch: false below true shows each level wins
        flags = {"yaml": True, "pyproject": False, "environment": True}
        _write_level(tmp_path, "yaml", key, True)
        args = parse_arguments([command, *base])
        assert getattr(args, action.dest) is True
        assert args.configured[action.dest].endswith("entropy.yml")
        _write_level(tmp_path, "pyproject", key, False)
        assert getattr(parse_arguments([command, *base]), action.dest) is False
        monkeypatch.setenv(entry.environment_name, "yes")
        args = parse_arguments([command, *base])
        assert getattr(args, action.dest) is flags["environment"]
        assert args.configured[action.dest] == f"environment ({entry.environment_name})"
        monkeypatch.setenv(entry.environment_name, "no")
        args = parse_arguments([command, *base, action.option_strings[0]])
        assert getattr(args, action.dest) is True
        assert action.dest not in args.configured
        return
    texts = _texts(action)
    required = action.required or any(
        group.required and action in group._group_actions
        for group in parser._mutually_exclusive_groups
    )
    if not required:
        unconfigured = parse_arguments([command, *base])
        first = _expected(entry, action, texts[0], "yaml", tmp_path)
        assert getattr(unconfigured, action.dest) != first
        assert unconfigured.configured == {}
    for position, level in enumerate(LEVELS):
        text = texts[position]
        if level in ("yaml", "pyproject"):
            _write_level(tmp_path, level, key, _file_value(entry, text))
            args = parse_arguments([command, *base])
        elif level == "environment":
            monkeypatch.setenv(entry.environment_name, text)
            args = parse_arguments([command, *base])
        else:
            args = parse_arguments([command, *base, action.option_strings[0], text])
        assert getattr(args, action.dest) == _expected(entry, action, text, level, tmp_path), level
        if level == "cli":
            assert action.dest not in args.configured
        elif level == "environment":
            assert args.configured[action.dest] == f"environment ({entry.environment_name})"
        else:
            assert args.configured[action.dest].startswith(str(tmp_path))


def test_every_command_reads_some_setting() -> None:
    commands = {command for command, _key in CASES}
    assert set(command_parsers()) - commands <= {"config", "report", "diff"}


def test_measure_runs_from_the_configuration_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.entropy]\nsessions = ["{DEMO / "sessions"}"]\n'
        f'surface = "{DEMO / "surface.json"}"\n',
        encoding="utf-8",
    )
    assert main(["measure", "--json"]) == 0
    configured = json.loads(capsys.readouterr().out)
    assert (
        main(
            [
                "measure",
                "--json",
                "--sessions",
                str(DEMO / "sessions"),
                "--surface",
                str(DEMO / "surface.json"),
            ]
        )
        == 0
    )
    given = json.loads(capsys.readouterr().out)
    assert configured["reportHash"] == given["reportHash"]
    assert configured["report"]["staticScore"] > 0  # the configured surface was read


def test_a_misspelt_key_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.entropy]\nstat-dir = "x"\n', encoding="utf-8")
    assert main(["measure", "--sessions", str(DEMO / "sessions")]) == 2
    err = capsys.readouterr().err
    assert "unknown setting 'stat-dir'" in err
    assert "did you mean 'state-dir'" in err
    (tmp_path / "pyproject.toml").unlink()
    monkeypatch.setenv("PYTEST_ENTROPY_SURFACE_FROMAT", "auto")
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert "PYTEST_ENTROPY_SURFACE_FROMAT" in err and "surface-format" in err


def test_config_shows_sources_and_masks_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "entropy.yml").write_text("window: 3\njobs: 7\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.entropy]\njobs = 2\nmcp-header = ["Authorization: Bearer sk-live-123456"]\n'
        '[tool.entropy.storage-options]\nkey = "AKIAEXAMPLE"\nsecret = "s3cr3t-value"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTEST_ENTROPY_STATE_DIR", "from-env")
    assert main(["config", "--json"]) == 0
    text = capsys.readouterr().out
    for secret in ("sk-live-123456", "AKIAEXAMPLE", "s3cr3t-value"):
        assert secret not in text
    document = json.loads(text)
    settings = document["settings"]
    assert settings["window"] == {
        "value": 3,
        "source": str(tmp_path / "entropy.yml"),
        "environment": "PYTEST_ENTROPY_WINDOW",
        "secret": False,
    }
    assert settings["jobs"]["value"] == 2
    assert settings["jobs"]["source"] == f"{tmp_path / 'pyproject.toml'} [tool.entropy]"
    assert settings["state-dir"] == {
        "value": "from-env",
        "source": "environment (PYTEST_ENTROPY_STATE_DIR)",
        "environment": "PYTEST_ENTROPY_STATE_DIR",
        "secret": False,
    }
    assert settings["storage-options"]["value"] == {"key": "***", "secret": "***"}
    assert settings["mcp-header"]["value"] == ["Authorization: ***"]
    assert settings["format"] == {
        "value": "auto",
        "source": "default",
        "environment": "PYTEST_ENTROPY_FORMAT",
        "secret": False,
    }
    assert document["files"] == {
        "pyproject": str(tmp_path / "pyproject.toml"),
        "yaml": str(tmp_path / "entropy.yml"),
    }
    assert main(["config"]) == 0
    human = capsys.readouterr().out
    assert "sk-live-123456" not in human and "s3cr3t-value" not in human
    width = max(len(entry.key) for entry in SETTINGS)  # the names are aligned to the longest
    assert f"{'jobs'.ljust(width)} = 2  ({tmp_path / 'pyproject.toml'} [tool.entropy])" in human
