"""``pytest-entropy proxy``'s usage errors (exit 2, a clear message), without a server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "server command after `--`"),
        (["--upstream", "http://127.0.0.1:1/mcp", "--", "x"], "server command after `--`"),
        (["--upstream", "ftp://127.0.0.1/mcp", "--listen", "1"], "http(s):// URL"),
        (["--upstream", "http://127.0.0.1:1/mcp"], "needs --listen"),
        (["--upstream", "http://127.0.0.1:1/mcp", "--listen", "a:b"], "--listen takes"),
        (["--listen", "80", "--", "x"], "--listen goes with --upstream"),
        (["--artifact", "missing.json", "--", "x"], "artifact not found"),
    ],
)
def test_usage_errors(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["proxy", "--state-dir", str(tmp_path), *argv])
    assert code == 2
    assert said in capsys.readouterr().err


def test_a_server_that_cannot_start_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "no-such-server")
    assert main(["proxy", "--state-dir", str(tmp_path), "--", missing]) == 2
    assert "cannot start" in capsys.readouterr().err


def test_a_failing_server_makes_the_proxy_exit_1_naming_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["proxy", "--state-dir", str(tmp_path), "--", sys.executable, "-c", "exit(4)"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "recording to" in err and "exited (4)" in err


def test_names_in_the_proxys_stderr_lines_are_shown_safely(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = str(tmp_path / "srv\x1b]52;c;aGk=\x07\n::error::x")
    assert main(["proxy", "--state-dir", str(tmp_path), "--", hostile]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "\n::error" not in err
    assert "\\x1b]52" in err
