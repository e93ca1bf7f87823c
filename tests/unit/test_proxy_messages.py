"""The MCP proxy's message logic without a transport: forwarding, recording, enforcement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pytest_entropy.core.artifact import serialize_artifact
from pytest_entropy.core.canonical import schema_digest
from pytest_entropy.ingest.native import scan_lines
from pytest_entropy.run.proxy import (
    LIST_CHANGED,
    NAVIGATION_REF,
    ArtifactHolder,
    ProxyConnection,
    ProxyHub,
)

BOOK = {
    "type": "object",
    "properties": {"room": {"type": "string"}, "minutes": {"type": "integer"}},
    "required": ["room"],
}
CANCEL = {"type": "object", "properties": {"booking_id": {"type": "string"}}}
TIGHT = {**BOOK, "properties": {**BOOK["properties"], "room": {"type": "string", "enum": ["red"]}}}


def _line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _artifact(
    *, overlay: dict[str, Any] | None = None, quarantined: bool = False, base: Any = BOOK
) -> dict[str, Any]:
    return {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {
                "ref": "calendar.book",
                "inputSchema": overlay or TIGHT,
                "baseSchemaDigest": schema_digest(base),
            }
        ],
        "quarantined": (
            [{"ref": "calendar.cancel", "baseSchemaDigest": schema_digest(CANCEL)}]
            if quarantined
            else []
        ),
        "applied": [{"kind": "enum", "ref": "calendar.book", "detail": "room"}],
        "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
        "evidenceDigest": "e" * 64,
    }


OPEN: list[ProxyConnection] = []


@pytest.fixture(autouse=True)
def _close_connections() -> Any:
    yield
    while OPEN:
        OPEN.pop().close()


class Wire:
    """A hub and one connection, with the handshake and a listing done."""

    def __init__(self, tmp_path: Path, artifact: dict[str, Any] | None = None, **hub: Any) -> None:
        self.state = tmp_path / "state"
        self.state.mkdir()
        if artifact is not None:
            (self.state / "compiled.json").write_text(serialize_artifact(artifact))
        self.sent: list[bytes] = []
        self.hub = ProxyHub(
            record_dir=self.state / "sessions",
            state_dir=self.state,
            artifact=ArtifactHolder(self.state / "compiled.json"),
            **hub,
        )
        self.connection: ProxyConnection = self.hub.connect(self.sent.append)
        OPEN.append(self.connection)

    def handshake(self, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        self.connection.from_client(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {"clientInfo": {"name": "inspector", "version": "1.2"}},
                }
            )
        )
        self.connection.from_server(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {"serverInfo": {"name": "calendar"}, "capabilities": {"tools": {}}},
                }
            )
        )
        return self.listing(tools)

    def listing(self, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        if tools is None:
            tools = [
                {"name": "book", "inputSchema": BOOK},
                {"name": "cancel", "inputSchema": CANCEL},
            ]
        self.connection.from_client(_line({"jsonrpc": "2.0", "id": "l", "method": "tools/list"}))
        routed = self.connection.from_server(
            _line({"jsonrpc": "2.0", "id": "l", "result": {"tools": tools}})
        )
        shown: dict[str, Any] = orjson.loads(routed.to_client[0])
        return shown

    def call(self, request_id: Any, name: str, args: Any) -> Any:
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": args},
        }
        return self.connection.from_client(_line(message))

    def answer(self, request_id: Any, **body: Any) -> Any:
        return self.connection.from_server(_line({"jsonrpc": "2.0", "id": request_id, **body}))

    def operations(self) -> list[tuple[str, str, str | None]]:
        self.connection.close()
        files = sorted((self.state / "sessions").glob("*.jsonl"))
        assert len(files) == 1
        lines = files[0].read_bytes().splitlines()
        records = scan_lines(lines)
        return [
            (op.ref, op.outcome, op.failure_stage)
            for trace in records.traces
            for op in trace.operations
        ]


def test_messages_it_does_not_need_to_change_are_forwarded_as_the_same_bytes(
    tmp_path: Path,
) -> None:
    wire = Wire(tmp_path)
    samples = [
        b'{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"x://y"}}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}',
        b'{"jsonrpc":"2.0","id":"p","method":"ping"}',
        b'{"jsonrpc":"2.0","id":9,"method":"future/thing","params":{"protocolVersion":"2099-01-01"}}',
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x/y"}]',
        b'{"jsonrpc": "2.0",  "id": 3, "method": "prompts/get"}',
        b"not json at all",
    ]
    for raw in samples:
        routed = wire.connection.from_client(raw)
        assert (routed.to_server, routed.to_client) == ([raw], [])
    server_side = [
        b'{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}',
        b'{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{}}',
        b'{"jsonrpc":"2.0","id":7,"result":{"contents":[]}}',
        b"{broken",
    ]
    for raw in server_side:
        assert wire.connection.from_server(raw).to_client == [raw]
    # The client's answer to the server's sampling request goes back up unchanged.
    reply = b'{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant"}}'
    assert wire.connection.from_client(reply).to_server == [reply]
    assert wire.hub.stats.malformed == 2


def test_calls_are_recorded_with_outcomes_stages_navigation_and_the_client_as_model(
    tmp_path: Path,
) -> None:
    wire = Wire(tmp_path)
    wire.handshake()
    wire.call(1, "book", {"room": "red"})
    wire.call(2, "book", {"room": 5})  # the declared schema rejects it
    wire.call("3", "nope", {})  # an unknown tool
    wire.call(4, "cancel", {"booking_id": "b1"})
    wire.call(5, "cancel", {"booking_id": "b2"})
    wire.call(6, "cancel", {"booking_id": "b3"})
    # Answered out of order, ids kept apart by type ("3" is not 3).
    wire.answer(4, result={"content": [], "isError": True})
    wire.answer("3", error={"code": -32602, "message": "Unknown tool: nope"})
    wire.answer(2, result={"content": [], "isError": True})
    wire.answer(1, result={"content": []})
    wire.answer(5, error={"code": -32602, "message": "bad"})
    operations = wire.operations()  # 6 was never answered: aborted when the client left
    assert operations == [
        (NAVIGATION_REF, "succeeded", None),
        ("calendar.cancel", "failed", "invoke"),
        ("calendar.nope", "failed", "resolve"),
        ("calendar.book", "failed", "validate"),
        ("calendar.book", "succeeded", None),
        ("calendar.cancel", "failed", "validate"),
        ("calendar.cancel", "aborted", None),
    ]
    text = next((wire.state / "sessions").glob("*.jsonl")).read_text()
    assert text.splitlines()[0] == (
        '{"type":"model_change","provider":"inspector","modelId":"1.2"}'
    )
    assert '"args":{"booking_id":"b1"}' in text  # the verbatim audit
    snapshot = json.loads((wire.state / "surface.json").read_text())
    assert [action["ref"] for action in snapshot["actions"]] == ["calendar.book", "calendar.cancel"]


def test_a_cancelled_call_is_aborted(tmp_path: Path) -> None:
    wire = Wire(tmp_path)
    wire.handshake()
    wire.call(1, "book", {"room": "red"})
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    routed = wire.connection.from_client(_line(cancel))
    assert routed.to_server == [_line(cancel)]
    wire.answer(1, result={"content": []})  # a late answer changes nothing
    assert wire.operations()[1:] == [("calendar.book", "aborted", None)]


def test_redact_values_keeps_secrets_out_of_the_audit(tmp_path: Path) -> None:
    wire = Wire(tmp_path, redact=True)
    wire.handshake()
    wire.call(1, "book", {"room": "red", "api_key": "sk-live-abcdef"})
    wire.answer(1, result={"content": []})
    wire.connection.close()
    text = next((wire.state / "sessions").glob("*.jsonl")).read_text()
    assert "sk-live-abcdef" not in text
    assert '"room":"red"' in text


def test_an_off_modal_call_is_refused_by_the_proxy_and_never_forwarded(tmp_path: Path) -> None:
    wire = Wire(tmp_path, _artifact(quarantined=True))
    shown = wire.handshake()
    tools = {tool["name"]: tool for tool in shown["result"]["tools"]}
    assert list(tools) == ["book"]  # the quarantined tool disappears from the catalog
    assert tools["book"]["inputSchema"]["properties"]["room"]["enum"] == ["red"]
    routed = wire.call(1, "book", {"room": "blue"})
    assert routed.to_server == []
    answer = orjson.loads(routed.to_client[0])
    assert answer["id"] == 1
    assert answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert "'room'" in text and "['red']" in text and "blue" in text
    refused = wire.call(2, "cancel", {"booking_id": "b"})
    assert refused.to_server == [] and b"unknown tool" in refused.to_client[0]
    accepted = wire.call(3, "book", {"room": "red"})
    assert accepted.to_client == [] and len(accepted.to_server) == 1
    wire.answer(3, result={"content": []})
    assert wire.operations()[1:] == [
        ("calendar.book", "failed", "validate"),
        ("calendar.cancel", "failed", "resolve"),
        ("calendar.book", "succeeded", None),
    ]


def test_a_schema_changed_underneath_gets_its_declared_schema(tmp_path: Path) -> None:
    wire = Wire(tmp_path, _artifact())
    changed = {**BOOK, "description": "now with a description"}
    shown = wire.handshake([{"name": "book", "inputSchema": changed}])
    assert shown["result"]["tools"][0]["inputSchema"] == changed
    assert wire.call(1, "book", {"room": "blue"}).to_server  # forwarded: no stale overlay


def test_an_artifact_replaced_mid_connection_is_enforced_from_the_next_call(
    tmp_path: Path,
) -> None:
    wire = Wire(tmp_path)
    wire.handshake()
    assert wire.call(1, "book", {"room": "blue"}).to_server
    (wire.state / "compiled.json").write_text(serialize_artifact(_artifact()))
    assert not wire.call(2, "book", {"room": "blue"}).to_server


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "malformed JSON"),
        ('{"version": 1}', "invalid"),
        ('{"version": 2, "metricVersion": 3, "actions": []}', "version-2 artifact (metric v3)"),
    ],
)
def test_a_damaged_or_version_2_artifact_disables_enforcement_once_and_never_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, said: str
) -> None:
    wire = Wire(tmp_path)
    (wire.state / "compiled.json").write_text(content)
    wire.handshake()
    assert wire.call(1, "book", {"room": "blue"}).to_server
    assert wire.call(2, "book", {"room": "green"}).to_server
    err = capsys.readouterr().err
    assert err.count(said) == 1
    assert "enforcement is off" in err


def test_enforcement_off_forwards_everything(tmp_path: Path) -> None:
    wire = Wire(tmp_path, _artifact(quarantined=True))
    wire.hub.artifact.enabled = False
    shown = wire.handshake()
    assert [tool["name"] for tool in shown["result"]["tools"]] == ["book", "cancel"]
    assert wire.call(1, "book", {"room": "blue"}).to_server


def test_a_batch_keeps_its_other_members_when_one_call_is_refused(tmp_path: Path) -> None:
    wire = Wire(tmp_path, _artifact())
    wire.handshake()
    batch = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "book", "arguments": {"room": "blue"}},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    routed = wire.connection.from_client(_line(batch))
    assert [orjson.loads(out) for out in routed.to_server] == [[batch[1]]]
    assert routed.to_client == []  # the refusal waits for the server's part of the batch
    answered = wire.connection.from_server(_line([{"jsonrpc": "2.0", "id": 2, "result": {}}]))
    (array,) = [orjson.loads(out) for out in answered.to_client]
    assert [item["id"] for item in array] == [1, 2]  # one batch answer, in the batch's order
    assert array[0]["result"]["isError"] is True and array[1]["result"] == {}


def _refused_call(request_id: Any) -> dict[str, Any]:
    params = {"name": "book", "arguments": {"room": "blue"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_batch_the_proxy_answers_alone_is_answered_with_an_array(tmp_path: Path) -> None:
    wire = Wire(tmp_path, _artifact())
    wire.handshake()
    notice = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
    routed = wire.connection.from_client(_line([_refused_call(1), notice, _refused_call("b")]))
    assert [orjson.loads(out) for out in routed.to_server] == [[notice]]
    (array,) = [orjson.loads(out) for out in routed.to_client]
    assert [item["id"] for item in array] == [1, "b"]


def test_a_held_batch_is_completed_by_answers_one_by_one_by_errors_and_by_cancels(
    tmp_path: Path,
) -> None:
    wire = Wire(tmp_path, _artifact())
    wire.handshake()
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    echo = {"jsonrpc": "2.0", "id": 3, "method": "prompts/get"}
    wire.connection.from_client(_line([ping, _refused_call(1), echo]))
    assert wire.answer(3, result={"messages": []}).to_client == []
    (array,) = [orjson.loads(out) for out in wire.answer(2, result={}).to_client]
    assert [item["id"] for item in array] == [2, 1, 3]
    # The server going away answers the batch's waiting requests inside its array.
    wire.connection.from_client(_line([_refused_call(4), {**ping, "id": 5}]))
    (array,) = [orjson.loads(out) for out in wire.connection.upstream_gone("it crashed")]
    assert [item["id"] for item in array] == [4, 5]
    assert array[1]["error"]["code"] == -32000
    # A cancelled request gets no answer: the batch's array goes without it.
    wire.connection.from_client(_line([_refused_call(6), {**ping, "id": 7}]))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    routed = wire.connection.from_client(_line(cancel))
    assert routed.to_server == [_line(cancel)]
    (array,) = [orjson.loads(out) for out in routed.to_client]
    assert [item["id"] for item in array] == [6]


def test_the_upstream_going_away_answers_every_waiting_request(tmp_path: Path) -> None:
    wire = Wire(tmp_path)
    wire.handshake()
    wire.call(1, "book", {"room": "red"})
    wire.call("two", "book", {"room": "red"})
    answers = [orjson.loads(out) for out in wire.connection.upstream_gone("it crashed")]
    assert sorted(str(answer["id"]) for answer in answers) == ["1", "two"]
    assert all(answer["error"]["code"] == -32000 for answer in answers)
    assert wire.operations()[1:] == [("calendar.book", "aborted", None)] * 2


def test_the_upstream_going_away_answers_waiting_requests_of_every_method(
    tmp_path: Path,
) -> None:
    wire = Wire(tmp_path)
    wire.handshake()
    for request_id, method in enumerate(["ping", "resources/list", "prompts/get", "x/new"]):
        wire.connection.from_client(_line({"jsonrpc": "2.0", "id": request_id, "method": method}))
    wire.call(9, "book", {"room": "red"})
    wire.answer(1, result={"resources": []})  # answered: nothing more to say
    answers = [orjson.loads(out) for out in wire.connection.upstream_gone("it crashed")]
    assert sorted(answer["id"] for answer in answers) == [0, 2, 3, 9]
    assert all(answer["error"]["code"] == -32000 for answer in answers)
    assert wire.operations()[1:] == [("calendar.book", "aborted", None)]


def test_a_call_sent_before_the_handshake_is_answered_is_recorded_under_the_servers_name(
    tmp_path: Path,
) -> None:
    wire = Wire(tmp_path)
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    wire.connection.from_client(_line(initialize))
    wire.call(1, "book", {"room": "red"})  # the client did not wait for the answer
    wire.call(2, "book", {"room": "red"})
    wire.answer(0, result={"serverInfo": {"name": "calendar"}, "capabilities": {}})
    wire.answer(1, result={"content": []})
    assert wire.operations() == [
        ("calendar.book", "succeeded", None),
        ("calendar.book", "aborted", None),  # still waiting when the client left
    ]


def test_a_recording_the_disk_refuses_is_said_once_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = Wire(tmp_path)
    (wire.state / "sessions").write_text("a file where the directory should be")
    wire.handshake()
    for number in range(3):
        wire.call(number, "book", {"room": "red"})
        wire.answer(number, result={"content": []})
    assert wire.hub.stats.unrecorded == 4  # the listing and three calls
    assert capsys.readouterr().err.count("cannot record to") == 1
    assert wire.hub.unrecorded_said()
    assert "4 calls were not recorded" in capsys.readouterr().err


def test_a_session_file_that_fails_mid_connection_stops_its_recording_and_counts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = Wire(tmp_path)
    wire.connection.batched = True
    wire.handshake()
    wire.connection.flush()
    wire.call(1, "book", {"room": "red"})
    wire.answer(1, result={"content": []})

    class Full:
        def write(self, data: bytes) -> int:
            return len(data)

        def flush(self) -> None:
            raise OSError(28, "No space left on device")

        def close(self) -> None:
            self.flush()

    assert wire.connection.recording._file is not None
    wire.connection.recording._file.close()  # the call's line stays in the buffer the disk refuses
    wire.connection.recording._file = Full()  # type: ignore[assignment]
    wire.connection.flush()  # the call's line was in the buffer: lost
    wire.call(2, "book", {"room": "red"})
    wire.answer(2, result={"content": []})
    assert wire.hub.stats.unrecorded == 2
    assert capsys.readouterr().err.count("No space left on device") == 1


def test_compile_mode_announces_list_changed_and_notifies_initialized_clients(
    tmp_path: Path,
) -> None:
    wire = Wire(tmp_path, advertise_list_changed=True)
    wire.connection.from_client(_line({"jsonrpc": "2.0", "id": 0, "method": "initialize"}))
    routed = wire.connection.from_server(
        _line({"jsonrpc": "2.0", "id": 0, "result": {"capabilities": {"tools": {}}}})
    )
    assert orjson.loads(routed.to_client[0])["result"]["capabilities"]["tools"] == {
        "listChanged": True
    }
    assert wire.hub.surface_changed() == 1
    assert wire.sent == [LIST_CHANGED]


def test_an_http_upstream_failure_answers_only_the_requests_of_that_post(tmp_path: Path) -> None:
    wire = Wire(tmp_path)
    wire.handshake()
    wire.call(1, "book", {"room": "red"})  # in flight in another POST
    failed = _line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "book"}})
    wire.connection.from_client(failed)
    answers = [orjson.loads(out) for out in wire.connection.upstream_gone("refused", failed)]
    assert [answer["id"] for answer in answers] == [2]
    wire.answer(1, result={"content": []})
    assert wire.operations()[1:] == [
        ("calendar.book", "aborted", None),
        ("calendar.book", "succeeded", None),
    ]


@pytest.mark.parametrize(
    ("text", "where"),
    [("8765", ("127.0.0.1", 8765)), ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9", ("::1", 9))],
)
def test_listen_binds_loopback_unless_a_host_is_given(text: str, where: tuple[str, int]) -> None:
    from pytest_entropy.run.proxy_http import parse_listen

    assert parse_listen(text) == where
    with pytest.raises(ValueError, match="--listen"):
        parse_listen("localhost:http")


def test_a_fault_of_the_proxy_forwards_the_message_as_it_came(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = Wire(tmp_path)
    wire.handshake()

    def broken(*_args: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(wire.connection, "_client_item", broken)
    monkeypatch.setattr(wire.connection, "_server_item", broken)
    raw = _line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "book"}})
    assert wire.connection.from_client(raw).to_server == [raw]
    answer = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    assert wire.connection.from_server(answer).to_client == [answer]
    assert capsys.readouterr().err.count("internal error (RuntimeError('boom'))") == 2


# ----------------------------------------------------------------- metric v3 (normal forms)

RENDER = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "outputFormat": {"type": "string", "enum": ["pdf", "html", "rare-format"]},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["outputFormat", "limit"],
}
V3_TOOLS = [{"name": "render", "inputSchema": RENDER}, {"name": "book", "inputSchema": BOOK}]


def _v3_wire(tmp_path: Path, artifact: dict[str, Any]) -> Wire:
    from pytest_entropy.core.canonical import file_text

    wire = Wire(tmp_path)
    (wire.state / "compiled.json").write_text(file_text(artifact))
    wire.hub.artifact = ArtifactHolder(wire.state / "compiled.json", metric_version=3)
    return wire


def _v3_artifact() -> dict[str, Any]:
    from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3

    live = {"version": 1, "actions": [{"ref": "calendar.render", "inputSchema": RENDER}]}
    artifact = compile_entropy_surface_v3([], live).artifact
    assert artifact is not None
    return artifact


def test_v3_forwards_the_normal_form_of_a_misspelt_call(tmp_path: Path) -> None:
    wire = _v3_wire(tmp_path, _v3_artifact())
    wire.handshake(V3_TOOLS)
    routed = wire.call(1, "render", {"output-format": "RARE FORMAT", "limit": "2"})
    assert routed.to_client == []
    forwarded = orjson.loads(routed.to_server[0])
    assert forwarded["params"] == {
        "name": "render",
        "arguments": {"outputFormat": "rare-format", "limit": 2},
    }
    # A canonical call is forwarded as the very bytes the client sent.
    raw = _line(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "render", "arguments": {"outputFormat": "pdf", "limit": 1}},
        }
    )
    assert wire.connection.from_client(raw).to_server == [raw]
    # What no rule repairs is refused at validate, as an enforced schema refuses it.
    refused = wire.call(3, "render", {"outputFormat": "PDF", "output-format": "pdf", "limit": 1})
    assert refused.to_server == [] and b"refused by the compiled surface" in refused.to_client[0]


def test_v3_lists_the_declared_tools_and_ignores_legacy_restrictions(tmp_path: Path) -> None:
    legacy = _artifact(quarantined=True)  # a version-1 file: an overlay and a quarantine
    wire = _v3_wire(tmp_path, legacy)
    shown = wire.handshake([*V3_TOOLS, {"name": "cancel", "inputSchema": CANCEL}])
    assert [tool["name"] for tool in shown["result"]["tools"]] == ["render", "book", "cancel"]
    assert shown["result"]["tools"][1]["inputSchema"] == BOOK
    # v2 would refuse room "blue" (the overlay's enum is ["red"]) and hide cancel.
    assert wire.call(1, "book", {"room": "blue"}).to_server
    assert wire.call(2, "cancel", {"booking_id": "b1"}).to_server
    # No stored plan for render: one derived from the live schema still normalises it.
    forwarded = orjson.loads(
        wire.call(3, "render", {"outputFormat": "HTML", "limit": 1}).to_server[0]
    )
    assert forwarded["params"]["arguments"] == {"outputFormat": "html", "limit": 1}


def test_v3_live_compile_writes_normal_forms_without_changing_the_listing(
    tmp_path: Path,
) -> None:
    from pytest_entropy.run.proxy_compile import LiveCompile
    from pytest_entropy.run.watch import Notice

    wire = Wire(tmp_path, advertise_list_changed=True)
    wire.hub.artifact = ArtifactHolder(wire.state / "compiled.json", metric_version=3)
    wire.handshake(V3_TOOLS)
    wire.call(1, "render", {"output-format": "PDF", "limit": 1})
    wire.answer(1, result={"content": []})
    wire.connection.flush()  # the recorded call on disk; the client stays connected
    live = LiveCompile(
        wire.hub,
        wire.state / "sessions",
        window=8,
        grace_seconds=0.01,
        poll_seconds=0.05,
        use_inotify=False,
        redact_values=False,
    )
    assert wire.hub.surface is not None
    live.surface_listed(wire.hub.surface)
    live.stop()
    assert live.loop is not None and live.loop.metric_version == 3
    live.loop.tick()  # whatever the background tick did, one more is a no-op or the compile
    written = json.loads((wire.state / "compiled.json").read_text())
    assert written["version"] == 2
    assert [plan["ref"] for plan in written["normalizations"]] == ["calendar.render"]
    wire.sent.clear()
    live.notify(Notice("compiled", "entropy: compiled"))
    assert wire.sent == []  # the listed tools did not change: no tools/list_changed
    wire.hub.artifact.metric_version = 2  # under v2 the same notice re-lists the clients
    live.notify(Notice("compiled", "entropy: compiled"))
    assert wire.sent == [LIST_CHANGED]


def test_an_event_stream_answering_a_held_batch_sends_the_whole_array_once(
    tmp_path: Path,
) -> None:
    import asyncio

    pytest.importorskip("httpx2")
    from pytest_entropy.run.proxy_http import _events

    wire = Wire(tmp_path, _artifact())
    wire.handshake()
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    wire.connection.from_client(_line([_refused_call(1), ping, {**ping, "id": 3}]))
    upstream = [
        "event: message",
        'data: {"jsonrpc":"2.0","id":3,"result":{}}',
        "",
        "event: message",
        'data: {"jsonrpc":"2.0","id":2,"result":{}}',
        "",
    ]

    async def lines() -> Any:
        for line in upstream:
            yield line

    async def relayed() -> list[bytes]:
        return [chunk async for chunk in _events(wire.connection, lines())]

    data = [chunk for chunk in asyncio.run(relayed()) if chunk.startswith(b"data:")]
    assert len(data) == 1  # the first answer waited inside the batch: not sent alone
    assert [item["id"] for item in orjson.loads(data[0][5:])] == [1, 2, 3]
