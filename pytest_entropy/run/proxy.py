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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from pytest_entropy.core.artifact import effective_schema_for, is_quarantined_ref
from pytest_entropy.core.enforce import validate_call
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace
from pytest_entropy.run.proxy_artifact import ArtifactHolder, proxy_notice
from pytest_entropy.run.proxy_hub import HubState, ProxyStats
from pytest_entropy.run.proxy_recording import SessionRecording
from pytest_entropy.run.proxy_values import (
    accepts,
    as_listed,
    id_number,
    model_of,
    redacted,
    request_key,
    request_keys,
)

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
_HANDSHAKES: Final = ("initialize", "server/discover")
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_META_CLIENT: Final = "io.modelcontextprotocol/clientInfo"
_META_SERVER: Final = "io.modelcontextprotocol/serverInfo"


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value)


class ProxyHub(HubState):
    """What every connection of one proxy shares (:class:`HubState`), and its connections."""

    def connect(self, send_to_client: Callable[[bytes], None]) -> ProxyConnection:
        """A new client connection (one session file)."""
        return self.attach(lambda sequence: ProxyConnection(self, send_to_client, sequence))


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


@dataclass(slots=True)
class _HeldBatch:
    """A client batch some of whose requests the proxy answered itself: those answers wait
    for the server's, so the client gets one array in the batch's order (JSON-RPC 2.0 §6)."""

    slots: list[bytes | str]  # an answer, or the key of a request still waiting for one
    waiting: set[str]

    def fill(self, key: str, answer: bytes | None) -> None:
        """The answer to ``key`` (``None``: there will be none, it was cancelled)."""
        self.waiting.discard(key)
        if answer is None:
            self.slots = [slot for slot in self.slots if slot != key]
        else:
            self.slots = [answer if slot == key else slot for slot in self.slots]

    def array(self) -> bytes:
        return b"[" + b",".join(slot for slot in self.slots if type(slot) is bytes) + b"]"


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
        self.recording = SessionRecording(hub, sequence)
        # Client batches waiting for the server's answers to merge the proxy's into.
        self._held: dict[str, _HeldBatch] = {}
        self._released: list[bytes] = []  # held batches a cancellation completed

    @property
    def batched(self) -> bool:
        """Set by a transport that calls :meth:`flush` after each batch; alone, each line
        is flushed as it is written."""
        return self.recording.batched

    @batched.setter
    def batched(self, value: bool) -> None:
        self.recording.batched = value

    # ------------------------------------------------------------------ naming

    @property
    def prefix(self) -> str:
        if self.hub.ref_prefix is not None:
            return self.hub.ref_prefix
        return (self.server_name or "mcp") + "."

    def _prefix_known(self) -> bool:
        """Whether the prefix is settled: given, or no handshake is waiting for the
        server's answer (the one that names the server)."""
        if self.hub.ref_prefix is not None or self.server_name is not None:
            return True
        return all(pending.method not in _HANDSHAKES for pending in self.pending.values())

    def _ref_of(self, call: _Pending) -> str:
        if not call.ref:
            call.ref = self.prefix + call.name
        return call.ref

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
            self._client_batch(raw, message, routed)
        else:
            answer = self._client_item(message) if type(message) is dict else None
            if answer is None:
                routed.to_server.append(_dumps(message) if self._rewritten else raw)
            else:
                routed.to_client.append(answer)
        routed.to_client.extend(self._released)
        self._released.clear()
        return routed

    def _client_batch(self, raw: bytes, message: list[Any], routed: Routed) -> None:
        kept: list[Any] = []
        slots: list[bytes | str] = []  # the batch's answers, in its order
        for item in message:
            answer = self._client_item(item) if type(item) is dict else None
            if answer is not None:
                slots.append(answer)
                continue
            kept.append(item)
            key = request_key(item.get("id")) if type(item) is dict and "method" in item else None
            if key is not None and key in self.pending:
                slots.append(key)
        if len(kept) == len(message):
            routed.to_server.append(_dumps(kept) if self._rewritten else raw)
            return
        if kept:
            routed.to_server.append(_dumps(kept))
        held = _HeldBatch(slots, {slot for slot in slots if type(slot) is str})
        if not held.waiting:
            routed.to_client.append(held.array())
        for key in held.waiting:
            self._held[key] = held

    def _from_server(self, raw: bytes) -> Routed:
        routed = Routed()
        message = self._parse(raw, "server")
        if isinstance(message, list):
            items = [self._server_item(item) if type(item) is dict else None for item in message]
            batch: list[Any] = []
            changed = False
            for new, old in zip(items, message, strict=True):
                item = old if new is None else new
                if self._merged(item, None, routed):
                    changed = True
                else:
                    changed = changed or new is not None
                    batch.append(item)
            if not changed:
                routed.to_client.append(raw)
            elif batch:
                routed.to_client.insert(0, _dumps(batch))
            return routed
        changed_item = self._server_item(message) if type(message) is dict else None
        item = message if changed_item is None else changed_item
        if not self._merged(item, raw if changed_item is None else None, routed):
            routed.to_client.append(raw if changed_item is None else _dumps(changed_item))
        return routed

    def _merged(self, message: Any, raw: bytes | None, routed: Routed) -> bool:
        """Whether ``message`` answers a request of a held batch (it then waits there; the
        whole batch goes into ``routed`` when it was the last answer missing)."""
        if not self._held or type(message) is not dict or "method" in message:
            return False
        key = request_key(message.get("id"))
        held = self._held.pop(key, None) if key is not None else None
        if key is None or held is None:
            return False
        held.fill(key, raw if raw is not None else _dumps(message))
        if not held.waiting:
            routed.to_client.append(held.array())
        return True

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
            held = self._held.pop(cancelled, None) if cancelled is not None else None
            if cancelled is not None and held is not None:
                held.fill(cancelled, None)  # a cancelled request gets no answer
                if not held.waiting:
                    self._released.append(held.array())
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
        if method in _HANDSHAKES:
            self.pending[key] = _Pending(method)
        elif method == "tools/list":
            self.pending[key] = _Pending(method, cursor=params.get("cursor") is not None)
        elif method == "tools/call":
            name = params.get("name")
            if type(name) is not str:
                self.pending[key] = _Pending("")  # answered for if the server goes away
                return None
            sent = params.get("arguments", {})
            args = redacted(sent, "") if self.hub.redact else sent
            # Before the handshake's answer the server's name (the prefix) is not known: the
            # ref is made when the call is recorded (and the call is not enforced).
            ref = self.prefix + name if self._prefix_known() else ""
            call = _Pending(method, name, ref, args)
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
        else:
            # Every other request is only passed on, and answered for if the server goes away.
            self.pending[key] = _Pending(method)
        return None

    def _enforce(self, call: _Pending, sent: Any = None) -> tuple[str, str] | None:
        """``(stage, message)`` when the compiled surface refuses the call. Under metric v3
        the call's normal form (of ``sent``, the arguments as the client sent them) is kept
        in ``call.forward`` when a rule rewrote them."""
        if not call.ref:
            return None  # the ref is not known yet: nothing to enforce against
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
        if pending.method in _HANDSHAKES:
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
        known, declared = self._declared(self._ref_of(call))
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
            [ForeignCall(self._ref_of(call), call.args, outcome, stage)],
        )
        self.recording.write(trace)

    def flush(self) -> None:
        """Put what was recorded on disk (a transport calls it after each batch it read,
        before it forwards the batch's answers)."""
        self.recording.flush()

    def notify_list_changed(self) -> None:
        with contextlib.suppress(OSError):  # the client is gone
            self.send_to_client(LIST_CHANGED)

    def upstream_gone(self, reason: str, raw: bytes | None = None) -> list[bytes]:
        """The upstream ended: an error for every request still waiting (only those of the
        message ``raw``, when given), whatever its method, their calls aborted."""
        routed = Routed()
        keys = list(self.pending) if raw is None else request_keys(raw)
        for key in keys:
            pending = self.pending.pop(key, None)
            if pending is None:
                continue
            if pending.method == "tools/call":
                self._record(pending, "aborted", None)
            request_id: Any = key[2:] if key.startswith("s:") else id_number(key[2:])
            error = {"code": UPSTREAM_GONE, "message": f"the MCP server is gone: {reason}"}
            answer = {"jsonrpc": "2.0", "id": request_id, "error": error}
            if not self._merged(answer, None, routed):
                routed.to_client.append(_dumps(answer))
        return routed.to_client

    def close(self) -> None:
        """The client is gone: calls still waiting are recorded as aborted."""
        for key, pending in list(self.pending.items()):
            del self.pending[key]
            if pending.method == "tools/call":
                self._record(pending, "aborted", None)
        self._held.clear()
        self.recording.close()
        self.hub.disconnect(self)
