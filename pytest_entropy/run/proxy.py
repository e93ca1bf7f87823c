"""The MCP proxy's message logic: record, enforce, forward (issue 31).

A transport (:mod:`pytest_entropy.run.proxy_stdio`, :mod:`pytest_entropy.run.proxy_http`)
hands every JSON-RPC message it reads to a :class:`ProxyConnection`, which says what to send
where. Everything the proxy does not need to change is forwarded as the very bytes it read:
requests, responses, notifications, batches, methods and protocol versions it does not know.
It looks at four things only:

* ``initialize`` (the client's ``clientInfo``, stamped as the model; the server's
  ``serverInfo.name``, the ref prefix and task key);
* ``tools/list`` responses: the live declared surface (kept as the state directory's
  ``surface.json``, the bytes ``export`` writes) and, under enforcement, rewritten with the
  effective schemas (overlays applied, quarantined tools removed);
* ``tools/call`` requests: recorded, and under enforcement refused by the proxy itself
  (a tool error naming the parameter and the allowed values; never forwarded) when the
  effective schema rejects them;
* responses to those calls: the call's outcome and failure stage.

Every call becomes one native trace line in the connection's session file, written and
flushed when the call ends, so a crash loses at most the line being written.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

import orjson

from pytest_entropy.core.artifact import effective_schema_for, is_quarantined_ref
from pytest_entropy.core.canonical import EXPORT_INDENT_DEPTH, file_text
from pytest_entropy.core.enforce import validate_call
from pytest_entropy.core.inputs import live_surface_snapshot
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter
from pytest_entropy.run.proxy_artifact import ArtifactHolder, proxy_notice
from pytest_entropy.run.proxy_values import (
    accepts,
    as_listed,
    id_number,
    model_of,
    redacted,
    request_key,
    request_keys,
)
from pytest_entropy.sources.agent_dir import state_surface_path
from pytest_entropy.state.store import StoreError, state_lock, write_file_atomic

__all__ = [
    "LIST_CHANGED",
    "NAVIGATION_REF",
    "ArtifactHolder",
    "ProxyConnection",
    "ProxyHub",
    "ProxyStats",
    "Routed",
]

# tools/list counts as navigation: the meter counts refs under fabric.discovery. (spec §3.1).
NAVIGATION_REF: Final = "fabric.discovery.list"
LIST_CHANGED: Final = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
INVALID_PARAMS: Final = -32602
METHOD_NOT_FOUND: Final = -32601
UPSTREAM_GONE: Final = -32000
_SURFACE_LOCK: Final = "surface.lock"
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_META_CLIENT: Final = "io.modelcontextprotocol/clientInfo"
_META_SERVER: Final = "io.modelcontextprotocol/serverInfo"


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value)


@dataclass(slots=True)
class ProxyStats:
    """What crossed the proxy, for stderr and tests."""

    messages: int = 0
    malformed: int = 0
    calls: int = 0
    refused: int = 0
    listings: int = 0


# ------------------------------------------------------------------------- the hub


class ProxyHub:
    """What every connection of one proxy shares: the live surface, the artifact, the
    recording directory, and the connections to tell when the surface changes."""

    def __init__(
        self,
        *,
        record_dir: Path | None,
        state_dir: Path,
        artifact: ArtifactHolder,
        ref_prefix: str | None = None,
        redact: bool = False,
        advertise_list_changed: bool = False,
    ) -> None:
        self.record_dir = record_dir
        self.state_dir = state_dir
        self.artifact = artifact
        self.ref_prefix = ref_prefix
        self.redact = redact
        self.advertise_list_changed = advertise_list_changed
        self.stats = ProxyStats()
        self.surface: dict[str, Any] | None = None  # {version, actions} with the refs
        self._surface_text: str | None = None
        self._lock = threading.Lock()
        self._connections: list[ProxyConnection] = []
        self._sequence = 0
        self.on_surface: Callable[[dict[str, Any]], None] | None = None

    def connect(self, send_to_client: Callable[[bytes], None]) -> ProxyConnection:
        """A new client connection (one session file)."""
        with self._lock:
            self._sequence += 1
            connection = ProxyConnection(self, send_to_client, self._sequence)
            self._connections.append(connection)
        return connection

    def disconnect(self, connection: ProxyConnection) -> None:
        with self._lock:
            if connection in self._connections:
                self._connections.remove(connection)

    def surface_changed(self) -> int:
        """Tell every initialized client to list its tools again; how many were told."""
        with self._lock:
            connections = [c for c in self._connections if c.initialized]
        for connection in connections:
            connection.notify_list_changed()
        return len(connections)

    def keep_surface(self, surface: dict[str, Any]) -> None:
        """The live declared surface: kept in memory and as ``STATE_DIR/surface.json``."""
        snapshot = live_surface_snapshot(surface["actions"])
        # The file keeps the tool fields, as `export` writes it; the surface compiled and
        # enforced against is the one `--surface surface.json` loads (ref and schema).
        exported = live_surface_snapshot(surface["actions"], tool_fields=True)
        text = file_text(exported, indent_depth=EXPORT_INDENT_DEPTH)
        with self._lock:
            self.surface = snapshot
            changed = text != self._surface_text
            self._surface_text = text
        if not changed:
            return
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            with state_lock(self.state_dir, _SURFACE_LOCK, "Timed out waiting for the surface"):
                write_file_atomic(state_surface_path(self.state_dir), text)
        except (OSError, StoreError) as error:
            proxy_notice(f"entropy: proxy: cannot keep the surface in {self.state_dir}: {error}")
        if self.on_surface is not None:
            self.on_surface(snapshot)

    def session_path(self, sequence: int) -> Path | None:
        if self.record_dir is None:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        return self.record_dir / f"proxy-{stamp}-{os.getpid()}-{sequence}.jsonl"


# ------------------------------------------------------------------ one connection


@dataclass(slots=True)
class Routed:
    """Where one incoming message goes: bytes for the upstream and for the client."""

    to_server: list[bytes] = field(default_factory=list)
    to_client: list[bytes] = field(default_factory=list)


@dataclass(slots=True)
class _Pending:
    method: str
    name: str = ""
    ref: str = ""
    args: Any = None
    cursor: bool = False
    # Metric v3: the arguments to forward when a normal form rewrote the call's.
    forward: Any = None


class ProxyConnection:
    """One client connection: its pending requests, its model and its session file."""

    def __init__(
        self, hub: ProxyHub, send_to_client: Callable[[bytes], None], sequence: int
    ) -> None:
        self.hub = hub
        self.send_to_client = send_to_client
        self.sequence = sequence
        self.pending: dict[str, _Pending] = {}
        self.model: str | None = None
        self.server_name: str | None = None
        self.initialized = False
        self._rewritten = False  # the client message being routed had its arguments rewritten
        self._tools: list[Any] = []  # the pages of the listing in progress
        self._diagnostics = ScanDiagnostics()
        self._writer = NativeWriter(ReadOptions(), self._diagnostics)
        self._file: IO[bytes] | None = None
        self._closed = False
        self._lock = threading.Lock()
        # A transport that calls flush() after each batch sets this; alone, each line is
        # flushed as it is written.
        self.batched = False

    # ------------------------------------------------------------------ naming

    @property
    def prefix(self) -> str:
        if self.hub.ref_prefix is not None:
            return self.hub.ref_prefix
        return (self.server_name or "mcp") + "."

    def _declared(self, ref: str) -> tuple[bool, Any]:
        surface = self.hub.surface
        if surface is None:
            return False, None
        for action in surface["actions"]:
            if action["ref"] == ref:
                return True, action.get("inputSchema")
        return False, None

    # ---------------------------------------------------------------- messages

    def from_client(self, raw: bytes) -> Routed:
        """A message the client sent: what to forward, what to answer. A fault of the proxy
        itself never blocks traffic: the message is then forwarded as it came."""
        try:
            return self._from_client(raw)
        except Exception as error:  # a bug of ours must not stop the conversation
            proxy_notice(f"entropy: proxy: internal error ({error!r}); message forwarded as is")
            return Routed(to_server=[raw])

    def from_server(self, raw: bytes) -> Routed:
        """A message the server sent: what to pass to the client (as it came, on a fault)."""
        try:
            return self._from_server(raw)
        except Exception as error:  # a bug of ours must not stop the conversation
            proxy_notice(f"entropy: proxy: internal error ({error!r}); message forwarded as is")
            return Routed(to_client=[raw])

    def _from_client(self, raw: bytes) -> Routed:
        routed = Routed()
        message = self._parse(raw, "client")
        self._rewritten = False
        if isinstance(message, list):
            kept = []
            for item in message:
                answer = self._client_item(item) if type(item) is dict else None
                if answer is None:
                    kept.append(item)
                else:
                    routed.to_client.append(answer)
            if len(kept) == len(message) and not self._rewritten:
                routed.to_server.append(raw)
            elif kept:
                routed.to_server.append(_dumps(kept))
            return routed
        answer = self._client_item(message) if type(message) is dict else None
        if answer is None:
            routed.to_server.append(_dumps(message) if self._rewritten else raw)
        else:
            routed.to_client.append(answer)
        return routed

    def _from_server(self, raw: bytes) -> Routed:
        routed = Routed()
        message = self._parse(raw, "server")
        if isinstance(message, list):
            items = [self._server_item(item) if type(item) is dict else None for item in message]
            if all(item is None for item in items):
                routed.to_client.append(raw)
            else:
                batch = [
                    new if new is not None else old for new, old in zip(items, message, strict=True)
                ]
                routed.to_client.append(_dumps(batch))
            return routed
        changed = self._server_item(message) if type(message) is dict else None
        routed.to_client.append(raw if changed is None else _dumps(changed))
        return routed

    def _parse(self, raw: bytes, side: str) -> Any:
        self.hub.stats.messages += 1
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.hub.stats.malformed += 1
            proxy_notice(f"entropy: proxy: a malformed message from the {side}, passed through")
            return None

    def _client_item(self, message: dict[str, Any]) -> bytes | None:
        """Note a client message; the proxy's own answer when it must not be forwarded."""
        method = message.get("method")
        if type(method) is not str:
            return None  # a response to a server request (sampling, elicitation, roots)
        key = request_key(message.get("id"))
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            params = message.get("params")
            cancelled = request_key(params.get("requestId")) if type(params) is dict else None
            pending = self.pending.pop(cancelled, None) if cancelled is not None else None
            if pending is not None and pending.method == "tools/call":
                self._record(pending, "aborted", None)
        if key is None:
            return None
        params = message.get("params")
        params = params if type(params) is dict else {}
        if self.model is None:
            # The handshake's clientInfo, or (protocol 2026-07-28) the one in every _meta.
            meta = params.get("_meta")
            info = params.get("clientInfo") if method == "initialize" else None
            if info is None and type(meta) is dict:
                info = meta.get(_META_CLIENT)
            self.model = model_of(info)
        if method in ("initialize", "server/discover"):
            self.pending[key] = _Pending(method)
        elif method == "tools/list":
            self.pending[key] = _Pending(method, cursor=params.get("cursor") is not None)
        elif method == "tools/call":
            name = params.get("name")
            if type(name) is not str:
                return None
            sent = params.get("arguments", {})
            args = redacted(sent, "") if self.hub.redact else sent
            call = _Pending(method, name, self.prefix + name, args)
            self.hub.stats.calls += 1
            refusal = self._enforce(call, sent)
            if refusal is not None:
                stage, text = refusal
                self.hub.stats.refused += 1
                self._record(call, "failed", stage)
                result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
                result["isError"] = True
                meta = params.get("_meta")
                if type(meta) is dict and _META_VERSION in meta:
                    result["resultType"] = "complete"  # protocol 2026-07-28 results say so
                return _dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
            self.pending[key] = call
            if call.forward is not None:
                # A normal form rewrote the arguments: the server gets the rewritten call.
                message["params"] = {**params, "arguments": call.forward}
                self._rewritten = True
        return None

    def _enforce(self, call: _Pending, sent: Any = None) -> tuple[str, str] | None:
        """``(stage, message)`` when the compiled surface refuses the call. Under metric v3
        the call's normal form (of ``sent``, the arguments as the client sent them) is kept
        in ``call.forward`` when a rule rewrote them."""
        artifact = self.hub.artifact.current()
        surface = self.hub.surface
        if artifact is None or surface is None:
            return None
        if self.hub.artifact.metric_version >= 3:
            verdict = validate_call(call.ref, sent, surface, artifact, metric_version=3)
            if verdict.accepted and verdict.witness is not None:
                call.forward = verdict.args
        else:
            verdict = validate_call(call.ref, call.args, surface, artifact)
        if verdict.accepted:
            return None
        if verdict.stage == "resolve":
            return "resolve", f"entropy: unknown tool {call.name!r} (not in the compiled surface)"
        where = verdict.path.lstrip("/").replace("/", ".") if verdict.path else ""
        subject = f"parameter {where!r}" if where else "the arguments"
        return "validate", (
            f"entropy: {call.name}: {subject} refused by the compiled surface: {verdict.message}"
        )

    def _server_item(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Note a server message; a changed copy when the client must see another one."""
        if "method" in message:
            return None  # a server request or notification: passed through
        key = request_key(message.get("id"))
        pending = self.pending.pop(key, None) if key is not None else None
        if pending is None:
            return None
        result = message.get("result")
        if self.server_name is None and type(result) is dict:
            meta = result.get("_meta")
            info = result.get("serverInfo")
            if info is None and type(meta) is dict:
                info = meta.get(_META_SERVER)
            if type(info) is dict and type(info.get("name")) is str and info["name"]:
                self.server_name = info["name"]
        if pending.method in ("initialize", "server/discover"):
            return self._initialized(message, result)
        if pending.method == "tools/list":
            return self._listed(message, result, pending)
        if pending.method == "tools/call":
            self._answered(pending, message, result)
        return None

    def _initialized(self, message: dict[str, Any], result: Any) -> dict[str, Any] | None:
        if type(result) is not dict:
            return None
        self.initialized = True
        capabilities = result.get("capabilities")
        if not self.hub.advertise_list_changed or type(capabilities) is not dict:
            return None
        tools = capabilities.get("tools")
        if type(tools) is not dict or tools.get("listChanged") is True:
            return None
        # --compile: the proxy itself announces a changed surface, so it says it will.
        changed = {**capabilities, "tools": {**tools, "listChanged": True}}
        return {**message, "result": {**result, "capabilities": changed}}

    def _listed(
        self, message: dict[str, Any], result: Any, pending: _Pending
    ) -> dict[str, Any] | None:
        self.hub.stats.listings += 1
        self._record(_Pending("tools/list", ref=NAVIGATION_REF, args={}), "succeeded", None)
        tools = result.get("tools") if type(result) is dict else None
        if type(tools) is not list:
            return None
        if not pending.cursor:
            self._tools = []
        self._tools.extend(tools)
        if not (type(result) is dict and result.get("nextCursor")):
            self._keep_listing(self._tools)
        artifact = self.hub.artifact.current()
        if artifact is None or self.hub.artifact.metric_version >= 3:
            return None  # metric v3 never restricts or hides a listed tool
        shown = []
        changed = False
        for tool in tools:
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is not str:
                shown.append(tool)
                continue
            ref = self.prefix + name
            declared = tool.get("inputSchema")
            # Proved against the schema the surface holds (what a compile pinned its digest to).
            known, kept = self._declared(ref)
            if known:
                declared = kept
            if is_quarantined_ref(ref, declared, artifact):
                changed = True
                continue
            effective = effective_schema_for(ref, declared, artifact)
            if effective is not declared and effective != tool.get("inputSchema"):
                changed = True
                tool = {**tool, "inputSchema": effective}
            shown.append(tool)
        if not changed:
            return None
        return {**message, "result": {**result, "tools": shown}}

    def _keep_listing(self, tools: list[Any]) -> None:
        from pytest_entropy.core.errors import EntropyInputError
        from pytest_entropy.sources.surface import load_surface

        try:
            surface = load_surface(
                {"tools": as_listed(tools)}, ref_prefix=self.prefix, tool_fields=True
            )
        except EntropyInputError as error:
            proxy_notice(f"entropy: proxy: the server's tool list is not a surface: {error}")
            return
        self.hub.keep_surface(surface)

    def _answered(self, call: _Pending, message: dict[str, Any], result: Any) -> None:
        error = message.get("error")
        if error is None and not (type(result) is dict and result.get("isError") is True):
            self._record(call, "succeeded", None)
            return
        known, declared = self._declared(call.ref)
        code = error.get("code") if type(error) is dict else None
        if (self.hub.surface is not None and not known) or code == METHOD_NOT_FOUND:
            stage = "resolve"
        elif (known and not accepts(declared, call.args)) or code == INVALID_PARAMS:
            stage = "validate"
        else:
            stage = "invoke"
        self._record(call, "failed", stage)

    # --------------------------------------------------------------- recording

    def _record(self, call: _Pending, outcome: str, stage: str | None) -> None:
        if self.hub.record_dir is None:
            return
        trace = ForeignTrace(
            self.server_name or "mcp",
            self.model,
            [ForeignCall(call.ref, call.args, outcome, stage)],
        )
        with self._lock:
            if self._closed:
                return
            try:
                if self._file is None:
                    path = self.hub.session_path(self.sequence)
                    if path is None:
                        return
                    path.parent.mkdir(parents=True, exist_ok=True)
                    self._file = open(path, "ab")  # noqa: SIM115 - kept open for the connection
                self._file.write(b"".join(line + b"\n" for line in self._writer.lines(trace)))
                if not self.batched:
                    self._file.flush()
            except OSError as error:
                proxy_notice(f"entropy: proxy: cannot record to {self.hub.record_dir}: {error}")

    def flush(self) -> None:
        """Put what was recorded on disk (a transport calls it after each batch it read,
        before it forwards the batch's answers)."""
        with self._lock:
            if self._file is not None:
                try:
                    self._file.flush()
                except OSError as error:
                    proxy_notice(f"entropy: proxy: cannot record to {self.hub.record_dir}: {error}")

    def notify_list_changed(self) -> None:
        with contextlib.suppress(OSError):  # the client is gone
            self.send_to_client(LIST_CHANGED)

    def upstream_gone(self, reason: str, raw: bytes | None = None) -> list[bytes]:
        """The upstream ended: an error for every request still waiting (only those of the
        message ``raw``, when given), their calls aborted."""
        answers = []
        keys = list(self.pending) if raw is None else request_keys(raw)
        for key in keys:
            pending = self.pending.pop(key, None)
            if pending is None:
                continue
            if pending.method == "tools/call":
                self._record(pending, "aborted", None)
            request_id: Any = key[2:] if key.startswith("s:") else id_number(key[2:])
            error = {"code": UPSTREAM_GONE, "message": f"the MCP server is gone: {reason}"}
            answers.append(_dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))
        return answers

    def close(self) -> None:
        """The client is gone: calls still waiting are recorded as aborted."""
        for key, pending in list(self.pending.items()):
            del self.pending[key]
            if pending.method == "tools/call":
                self._record(pending, "aborted", None)
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None
        self.hub.disconnect(self)
