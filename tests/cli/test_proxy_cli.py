"""``pytest-entropy proxy``'s usage errors (exit 2, a clear message), without a server."""

from __future__ import annotations

import io
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

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
        (
            ["--upstream", "http://127.0.0.1:99999/mcp", "--listen", "TAKEN"],
            "'http://127.0.0.1:99999",
        ),
        (["--upstream", "http://127.0.0.1:abc/mcp", "--listen", "TAKEN"], "port is not a number"),
        (["--upstream", "http://", "--listen", "TAKEN"], "--upstream 'http://' is not a URL"),
        (["--upstream", "https:///mcp", "--listen", "TAKEN"], "names no host"),
        (["--listen", "80", "--", "x"], "--listen goes with --upstream"),
        (["--artifact", "missing.json", "--", "x"], "artifact not found"),
    ],
)
def test_usage_errors(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:  # should a bad URL get through, nothing is served
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        argv = [port if word == "TAKEN" else word for word in argv]
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


def _server_that_leaves_a_mark(mark: Path) -> list[str]:
    return [sys.executable, "-c", f"open({str(mark)!r}, 'w').close()"]


@pytest.mark.parametrize("option", ["--record", "--state-dir"])
def test_a_directory_that_cannot_be_written_stops_the_proxy_before_it_serves(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    mark = tmp_path / "started"
    state = ["--state-dir", str(tmp_path / "state")] if option == "--record" else []
    argv = ["proxy", *state, option, str(blocker), "--", *_server_that_leaves_a_mark(mark)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{option} {blocker}: cannot write there: {blocker} is a file" in err, err
    assert "recording to" not in err and not mark.exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_record_directory_stops_the_proxy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    argv = ["proxy", "--state-dir", str(tmp_path / "st"), "--record", str(locked), "--", "x"]
    assert main(argv) == 2
    assert "read-only" in capsys.readouterr().err


def test_calls_the_disk_refuses_later_are_counted_and_the_proxy_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_entropy.run.proxy import ArtifactHolder, ProxyHub
    from pytest_entropy.run.proxy_stdio import run_stdio_proxy

    sessions = tmp_path / "sessions"
    sessions.write_text("what a disk does after the check is its own business")
    hub = ProxyHub(record_dir=sessions, state_dir=tmp_path, artifact=ArtifactHolder(None))
    read, write = os.pipe()
    calls = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"text":"a"}}}\n' % number
        for number in range(3)
    )
    os.write(write, calls)
    os.close(write)
    out = io.BytesIO()
    server = [sys.executable, "-m", "tests.servers.minimal_upstream"]
    with open(read, "rb", buffering=0) as client_in:
        status = run_stdio_proxy(hub, server, client_in=client_in, client_out=out)
    assert status == 1
    assert out.getvalue().count(b'"result"') == 3  # every call was still answered
    err = capsys.readouterr().err
    assert err.count("cannot record to") == 1
    assert "3 calls were not recorded" in err


def test_a_server_whose_client_left_is_terminated_after_the_wait_the_docs_give(
    tmp_path: Path,
) -> None:
    from pytest_entropy.run.proxy import ArtifactHolder, ProxyHub
    from pytest_entropy.run.proxy_stdio import run_stdio_proxy

    hub = ProxyHub(record_dir=None, state_dir=tmp_path, artifact=ArtifactHolder(None))
    read, write = os.pipe()
    os.close(write)  # the client is gone at once
    stubborn = [sys.executable, "-c", "import time; time.sleep(30)"]  # ignores its stdin
    started = time.monotonic()
    with open(read, "rb", buffering=0) as client_in:
        status = run_stdio_proxy(
            hub, stubborn, client_in=client_in, client_out=io.BytesIO(), exit_wait=1.0
        )
    elapsed = time.monotonic() - started
    assert status == 1  # terminated: it did not end cleanly
    # One wait of exit_wait in all (it was one to answer, then one more to exit).
    assert 1.0 <= elapsed < 1.7, elapsed


def test_the_listen_address_is_bound_before_listening_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("uvicorn")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["proxy", "--state-dir", str(tmp_path / "st"), "--upstream"]
        code = main([*argv, "http://127.0.0.1:1/mcp", "--listen", str(port)])
    assert code == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}: address in use" in err
    assert "listening" not in err and "Traceback" not in err


def test_an_address_not_of_this_machine_cannot_be_listened_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("uvicorn")
    argv = ["proxy", "--state-dir", str(tmp_path / "st"), "--upstream", "http://127.0.0.1:1/mcp"]
    assert main([*argv, "--listen", "192.0.2.1:8765"]) == 2  # TEST-NET-1: nobody's address
    assert "cannot listen on 192.0.2.1:8765: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("artifact", "said"),
    [
        (None, "no compiled artifact yet at {path}: enforcing nothing until one is written"),
        (
            "{not json",
            "not enforcing {path} (unusable, see above): enforcing nothing until it is fixed",
        ),
        ("valid", "enforcing {path}"),
    ],
)
def test_the_banner_says_what_is_really_enforced(
    artifact: str | None, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_entropy.core.artifact import serialize_artifact

    path = tmp_path / "compiled.json"
    if artifact == "valid":
        empty: dict[str, Any] = {
            "version": 1,
            "metricVersion": 2,
            "actions": [],
            "quarantined": [],
            "applied": [],
            "gate": {"passed": True, "beforeScore": 1, "afterScore": 1, "reasons": []},
            "evidenceDigest": "0" * 64,
        }
        path.write_text(serialize_artifact(empty))
    elif artifact is not None:
        path.write_text(artifact)
    argv = ["proxy", "--state-dir", str(tmp_path), "--", sys.executable, "-c", "pass"]
    assert main(argv) == 0
    (banner,) = [line for line in capsys.readouterr().err.splitlines() if "recording to" in line]
    assert banner.endswith("· " + said.format(path=path)), banner
