"""``pytest-entropy proxy`` end to end: the official SDK client, the proxy as its server
command, and a live server behind it (the published ``mcp-server-time``, the suite's
``fastmcp`` server, a minimal JSON-RPC server); then the commands that read the recording."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio

from pytest_entropy.cli.app import main
from pytest_entropy.core.artifact import serialize_artifact
from pytest_entropy.core.canonical import schema_digest

pytestmark = pytest.mark.server  # live servers behind the proxy, as subprocesses

REPO = Path(__file__).resolve().parents[2]
PROXY = [sys.executable, "-m", "pytest_entropy", "proxy"]
MINIMAL = [sys.executable, "-m", "tests.servers.minimal_upstream"]
CALENDAR = [sys.executable, "-m", "tests.servers.fastmcp_server"]
TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


def _session(
    state: Path,
    server: list[str],
    work: Any,
    *flags: str,
    mode: str = "auto",
    handler: Any = None,
) -> Any:
    """Run ``work(client)`` with an SDK client whose server is the proxy in front of ``server``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=PROXY[0],
        args=[*PROXY[1:], "--state-dir", str(state), *flags, "--", *server],
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
        cwd=str(state.parent),
    )

    async def run() -> Any:
        with anyio.fail_after(90):
            async with Client(stdio_client(params), mode=mode, message_handler=handler) as client:  # type: ignore[arg-type]
                return await work(client)

    return anyio.run(run)


def _measure(state: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    argv = ["measure", "--sessions", str(state / "sessions")]
    argv += ["--surface", str(state / "surface.json"), "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    report: dict[str, Any] = json.loads(capsys.readouterr().out)["report"]
    return report


def test_calls_to_the_published_time_server_are_recorded_and_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mcp_server_time", reason="mcp-server-time (the test extra) is missing")
    state = tmp_path / "state"

    async def work(client: Any) -> list[bool]:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} >= {"get_current_time", "convert_time"}
        results = [
            await client.call_tool("get_current_time", {"timezone": "Europe/Paris"}),
            await client.call_tool("get_current_time", {"timezone": "UTC"}),
            await client.call_tool("get_current_time", {"timezone": "Nowhere/Bad"}),
            await client.call_tool("get_current_time", {"timezone": 7}),
        ]
        return [result.is_error for result in results]

    assert _session(state, TIME, work) == [False, False, True, True]
    files = list((state / "sessions").glob("*.jsonl"))
    assert len(files) == 1
    report = _measure(state, capsys)
    totals = report["totals"]
    assert totals["actionOperations"] == 4
    assert totals["discoveryOperations"] == 1  # the tools/list
    assert (totals["succeeded"], totals["failed"]) == (2, 2)
    (ref,) = [row for row in report["refs"] if row["ref"] == "mcp-time.get_current_time"]
    assert ref["failureStageEntropyBits"] == 1  # one invoke failure, one validate failure
    assert report["byModel"][0]["model"] == "mcp/0.1.0"  # the SDK client's clientInfo
    # surface.json holds the bytes `export` writes for the same server and refs
    exported = tmp_path / "exported.json"
    argv = ["export", "--ref-prefix", "mcp-time.", "--out", str(exported), "--mcp", "--", *TIME]
    assert main(argv) == 0, capsys.readouterr().err
    assert (state / "surface.json").read_bytes() == exported.read_bytes()
    # compile reads the recording with no other flag than the two paths
    argv = ["compile", "--sessions", str(state / "sessions")]
    assert main([*argv, "--surface", str(state / "surface.json")]) == 0


def _calendar_artifact(state: Path, *, base: Any = None) -> None:
    surface = json.loads((state / "surface.json").read_text())
    schemas = {action["ref"]: action["inputSchema"] for action in surface["actions"]}
    book = schemas["calendar.book"]
    tight = json.loads(json.dumps(book))
    tight["properties"]["room"]["enum"] = ["red"]
    artifact = {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {
                "ref": "calendar.book",
                "inputSchema": tight,
                "baseSchemaDigest": schema_digest(book if base is None else base),
            }
        ],
        "quarantined": [
            {
                "ref": "calendar.cancel",
                "baseSchemaDigest": schema_digest(schemas["calendar.cancel"]),
            }
        ],
        "applied": [{"kind": "enum-tighten", "ref": "calendar.book", "detail": "room"}],
        "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
        "evidenceDigest": "0" * 64,
    }
    (state / "compiled.json").write_text(serialize_artifact(artifact))


def test_a_compiled_surface_is_enforced_on_a_fastmcp_server(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp", reason="the standalone fastmcp package is not installed")
    state = tmp_path / "state"

    async def listing(client: Any) -> dict[str, Any]:
        listed = await client.list_tools()
        return {tool.name: tool.input_schema for tool in listed.tools}

    declared = _session(state, CALENDAR, listing)
    assert declared["book"]["properties"]["room"]["enum"] == ["red", "blue"]
    _calendar_artifact(state)

    async def enforced(client: Any) -> tuple[dict[str, Any], Any, Any, Any]:
        shown = await listing(client)
        refused = await client.call_tool("book", {"room": "blue"})
        quarantined = await client.call_tool("cancel", {"booking_id": "b1"})
        accepted = await client.call_tool("book", {"room": "red"})
        return shown, refused, quarantined, accepted

    shown, refused, quarantined, accepted = _session(state, CALENDAR, enforced)
    assert list(shown) == ["book"]  # the quarantined tool disappears
    assert shown["book"]["properties"]["room"]["enum"] == ["red"]
    assert refused.is_error
    text = refused.content[0].text
    assert "'room'" in text and "['red']" in text, text
    assert quarantined.is_error and "unknown tool" in quarantined.content[0].text
    assert not accepted.is_error and accepted.content[0].text == "red:30"
    # --no-enforce: the declared surface, every call forwarded
    shown_off = _session(state, CALENDAR, listing, "--no-enforce")
    assert shown_off == declared
    # An overlay compiled against another schema is never applied to this one.
    _calendar_artifact(state, base={"type": "object", "properties": {}})

    async def stale(client: Any) -> tuple[dict[str, Any], Any]:
        return await listing(client), await client.call_tool("book", {"room": "blue"})

    shown_stale, forwarded = _session(state, CALENDAR, stale)
    assert shown_stale["book"] == declared["book"]
    assert not forwarded.is_error and forwarded.content[0].text == "blue:30"


def test_compile_tightens_the_surface_live_and_tells_the_client(tmp_path: Path) -> None:
    state = tmp_path / "state"
    notified: list[str] = []

    async def handler(message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            notified.append(method)

    async def work(client: Any) -> tuple[Any, Any, Any]:
        await client.list_tools()
        for number in range(12):
            await client.call_tool("echo", {"text": "hi", "mode": ("fast", "slow")[number % 2]})
        with anyio.fail_after(60):
            while "notifications/tools/list_changed" not in notified:
                await anyio.sleep(0.05)
        relisted = await client.list_tools()
        refused = await client.call_tool("echo", {"text": "hi", "mode": "safe"})
        return relisted, refused, await client.call_tool("echo", {"text": "ok", "mode": "fast"})

    flags = ("--compile", "--poll", "--grace-ms", "50")
    relisted, refused, fine = _session(state, MINIMAL, work, *flags, mode="legacy", handler=handler)
    echo = next(tool for tool in relisted.tools if tool.name == "echo")
    assert echo.input_schema["properties"]["mode"]["enum"] == ["fast", "slow"]
    assert refused.is_error and "'mode'" in refused.content[0].text
    assert not fine.is_error
    assert (state / "compiled.json").is_file()


# ---------------------------------------------------------------------------- faults


STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _reap_proxies() -> Any:
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _raw_proxy(state: Path, *flags: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [*PROXY, "--state-dir", str(state), *flags, "--", *MINIMAL],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    STARTED.append(process)
    return process


def _send(process: subprocess.Popen[bytes], message: Any) -> None:
    assert process.stdin is not None
    raw = message if isinstance(message, bytes) else json.dumps(message).encode()
    process.stdin.write(raw + b"\n")
    process.stdin.flush()


def _read(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, "the proxy closed its output"
    message: dict[str, Any] = json.loads(line)
    return message


def _start(process: subprocess.Popen[bytes]) -> None:
    _send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert _read(process)["result"]["serverInfo"]["name"] == "minimal"
    _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert _read(process)["id"] == 2


def _call(request_id: Any, name: str, args: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": args}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _recorded(state: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    (session,) = (state / "sessions").glob("*.jsonl")
    for line in session.read_bytes().splitlines():
        json.loads(line)  # every line is whole
    return _measure(state, capsys)["totals"]


def test_a_crashing_server_gives_the_client_an_error_and_a_valid_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    process = _raw_proxy(state)
    _start(process)
    _send(process, _call(3, "echo", {"text": "a"}))
    assert _read(process)["id"] == 3
    # Waiting behind the crash (one write: all are read before the server dies), every
    # request gets the error, not only tools/*.
    waiting = [(5, "ping"), (6, "resources/list"), ("7", "prompts/get")]
    lines = [_call(4, "crash", {})] + [
        {"jsonrpc": "2.0", "id": request_id, "method": method} for request_id, method in waiting
    ]
    _send(process, b"\n".join(json.dumps(line).encode() for line in lines))
    assert process.wait(timeout=30) == 1  # the server failed (its status 3 on stderr)
    assert process.stdout is not None
    answers = {answer["id"]: answer for answer in map(json.loads, process.stdout)}
    assert sorted(answers, key=str) == [4, 5, 6, "7"]
    assert all(answer["error"]["code"] == -32000 for answer in answers.values())
    assert process.stderr is not None and b"exited (3)" in process.stderr.read()
    totals = _recorded(state, capsys)
    assert (totals["succeeded"], totals["aborted"]) == (1, 1)


def test_a_client_leaving_mid_call_ends_the_proxy_and_records_the_call_aborted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    process = _raw_proxy(state)
    _start(process)
    _send(process, _call(3, "slow", {"seconds": 30}))
    time.sleep(0.3)
    assert process.stdin is not None
    process.stdin.close()
    started = time.monotonic()
    process.wait(timeout=30)
    assert time.monotonic() - started < 20
    assert _recorded(state, capsys)["aborted"] == 1


def test_malformed_messages_and_concurrent_calls_pass_with_their_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    process = _raw_proxy(state)
    _start(process)
    _send(process, b"this is not JSON")
    _send(process, _call("slow-1", "slow", {"seconds": 0.5}))
    for number in range(16):
        _send(process, _call(100 + number, "echo", {"text": str(number)}))
    answers = [_read(process) for _ in range(17)]
    assert answers[-1]["id"] == "slow-1"  # answered last, id kept
    assert sorted(answer["id"] for answer in answers[:-1]) == list(range(100, 116))
    assert all(
        answer["result"]["content"][0]["text"] == str(answer["id"] - 100) for answer in answers[:-1]
    )
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    assert process.stderr is not None
    assert b"malformed message from the client" in process.stderr.read()
    assert _recorded(state, capsys)["succeeded"] == 17


# ------------------------------------------------------------------- streamable HTTP


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int, process: subprocess.Popen[bytes]) -> None:
    import socket

    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, "a server exited before it listened"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "nothing listened within 60 s"
            time.sleep(0.1)


def _spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        argv,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    STARTED.append(process)
    return process


def test_the_http_proxy_records_and_enforces_in_front_of_a_streamable_http_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcp import Client

    state = tmp_path / "state"
    upstream_port, proxy_port = _free_port(), _free_port()
    upstream = _spawn([sys.executable, "-m", "tests.servers.http_server", str(upstream_port)])
    _listening(upstream_port, upstream)
    url = f"http://127.0.0.1:{upstream_port}/mcp"
    argv = [*PROXY, "--state-dir", str(state), "--upstream", url, "--listen", str(proxy_port)]
    proxy = _spawn(argv)
    _listening(proxy_port, proxy)

    async def session(mode: str) -> tuple[dict[str, Any], Any]:
        with anyio.fail_after(60):
            async with Client(f"http://127.0.0.1:{proxy_port}/mcp", mode=mode) as client:  # type: ignore[arg-type]
                listed = await client.list_tools()
                html = await client.call_tool("render", {"fmt": "html"})
                await client.call_tool("search", {"query": "a"})
                return {tool.name: tool.input_schema for tool in listed.tools}, html

    declared, html = anyio.run(session, "legacy")
    assert not html.is_error
    totals = _measure(state, capsys)["totals"]
    assert (totals["actionOperations"], totals["discoveryOperations"]) == (2, 1)
    schema = declared["render"]
    tight = json.loads(json.dumps(schema))
    tight["properties"]["fmt"]["enum"] = ["pdf"]
    surface = json.loads((state / "surface.json").read_text())
    assert [action["ref"] for action in surface["actions"]] == ["echo.render", "echo.search"]
    artifact = {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {
                "ref": "echo.render",
                "inputSchema": tight,
                "baseSchemaDigest": schema_digest(surface["actions"][0]["inputSchema"]),
            }
        ],
        "quarantined": [],
        "applied": [],
        "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
        "evidenceDigest": "0" * 64,
    }
    (state / "compiled.json").write_text(serialize_artifact(artifact))
    for mode in ("legacy", "auto"):
        shown, refused = anyio.run(session, mode)
        assert shown["render"]["properties"]["fmt"]["enum"] == ["pdf"]
        assert refused.is_error and "'fmt'" in refused.content[0].text


def _echo_artifact(state: Path, modes: list[str]) -> None:
    """A compiled surface that narrows the minimal server's ``echo.mode`` to ``modes``."""
    surface = json.loads((state / "surface.json").read_text())
    (echo,) = [action for action in surface["actions"] if action["ref"] == "minimal.echo"]
    tight = json.loads(json.dumps(echo["inputSchema"]))
    tight["properties"]["mode"]["enum"] = modes
    artifact = {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {
                "ref": "minimal.echo",
                "inputSchema": tight,
                "baseSchemaDigest": schema_digest(echo["inputSchema"]),
            }
        ],
        "quarantined": [],
        "applied": [],
        "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
        "evidenceDigest": "0" * 64,
    }
    (state / "compiled.json").write_text(serialize_artifact(artifact))


@pytest.mark.parametrize("configured_off", [False, True])
def test_compile_false_in_the_configuration_turns_enforcement_off(
    tmp_path: Path, configured_off: bool
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if configured_off:
        (project / "pyproject.toml").write_text("[tool.entropy]\ncompile = false\n")
    state = tmp_path / "state"
    process = _raw_proxy(state, "--cwd", str(project))
    _start(process)
    _echo_artifact(state, ["fast"])
    _send(process, _call(3, "echo", {"text": "through", "mode": "slow"}))
    answer = _read(process)["result"]
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    assert process.stderr is not None
    err = process.stderr.read()
    if configured_off:
        assert answer == {"content": [{"type": "text", "text": "through"}]}
        assert b"compile and enforcement are off" in err
    else:
        assert answer["isError"] is True and "'mode'" in answer["content"][0]["text"]


def test_two_proxies_on_one_state_directory_and_a_huge_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    first, second = _raw_proxy(state), _raw_proxy(state)
    _start(first)
    _start(second)
    huge = "x" * (4 << 20)  # 4 MiB in one argument
    for number in range(5):
        _send(first, _call(number + 10, "echo", {"text": f"a{number}"}))
        _send(second, _call(number + 10, "echo", {"text": f"b{number}"}))
    _send(second, _call(99, "echo", {"text": huge}))
    assert [_read(first)["id"] for _ in range(5)] == list(range(10, 15))
    answers = [_read(second) for _ in range(6)]
    assert answers[-1]["result"]["content"][0]["text"] == huge
    for process in (first, second):
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    assert len(list((state / "sessions").glob("*.jsonl"))) == 2
    totals = _measure(state, capsys)["totals"]
    assert (totals["actionOperations"], totals["discoveryOperations"]) == (11, 2)


def test_an_http_upstream_nobody_answers_gives_the_waiting_request_an_error(
    tmp_path: Path,
) -> None:
    import httpx2

    proxy_port = _free_port()
    url = f"http://127.0.0.1:{_free_port()}/mcp"  # nothing listens there
    argv = [*PROXY, "--state-dir", str(tmp_path / "st"), "--upstream", url, "--listen"]
    proxy = _spawn([*argv, str(proxy_port)])
    _listening(proxy_port, proxy)
    answer = httpx2.post(
        f"http://127.0.0.1:{proxy_port}/mcp",
        json=_call(5, "echo", {"text": "a"}),
        headers={"accept": "application/json, text/event-stream"},
        timeout=60,
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["id"] == 5 and body["error"]["code"] == -32000
    notification = httpx2.post(
        f"http://127.0.0.1:{proxy_port}/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        timeout=60,
    )
    assert notification.status_code == 502


def test_compile_over_http_pushes_list_changed_on_the_servers_event_stream(
    tmp_path: Path,
) -> None:
    from mcp import Client

    state = tmp_path / "state"
    upstream_port, proxy_port = _free_port(), _free_port()
    upstream = _spawn([sys.executable, "-m", "tests.servers.http_modes_server", str(upstream_port)])
    _listening(upstream_port, upstream)
    url = f"http://127.0.0.1:{upstream_port}/mcp"
    argv = [*PROXY, "--state-dir", str(state), "--upstream", url, "--compile", "--poll"]
    proxy = _spawn([*argv, "--grace-ms", "50", "--listen", str(proxy_port)])
    _listening(proxy_port, proxy)
    notified: list[str] = []

    async def handler(message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            notified.append(method)

    async def work() -> tuple[Any, Any]:
        with anyio.fail_after(90):
            address = f"http://127.0.0.1:{proxy_port}/mcp"
            async with Client(address, mode="legacy", message_handler=handler) as client:  # type: ignore[arg-type]
                await client.list_tools()
                for number in range(12):
                    mode = ("fast", "slow")[number % 2]
                    await client.call_tool("echo", {"text": "hi", "mode": mode})
                while "notifications/tools/list_changed" not in notified:
                    await anyio.sleep(0.05)
                relisted = await client.list_tools()
                return relisted, await client.call_tool("echo", {"text": "x", "mode": "safe"})

    relisted, refused = anyio.run(work)
    echo = next(tool for tool in relisted.tools if tool.name == "echo")
    assert echo.input_schema["properties"]["mode"]["enum"] == ["fast", "slow"]
    assert refused.is_error and "'mode'" in refused.content[0].text
