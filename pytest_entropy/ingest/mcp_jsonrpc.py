"""MCP JSON-RPC logs: ``tools/call`` requests and their responses.

A file is JSON Lines of JSON-RPC 2.0 messages in the order they crossed the wire; a line may
also wrap one as ``{"message": {...}}`` (with any other keys, such as a direction or a
timestamp) or hold a batch array. Requests and responses pair by ``id``.

* call: a ``tools/call`` request, ``params.name`` with ``params.arguments``;
* outcome: a ``result`` answers it, failed when ``result.isError`` is true; an ``error``
  answers it failed, typed by its code: ``-32601`` (method not found) is ``resolve``,
  ``-32602`` (invalid params) is ``validate``, or ``resolve`` when a surface is given and
  does not declare the tool (MCP servers answer unknown tools with ``-32602``); other codes
  leave the stage to the surface replay. A ``notifications/cancelled`` for the request
  makes it ``aborted``; a request never answered stays ``aborted``;
* trace: the calls of one connection (an ``initialize`` request starts a new one, whose
  request ids number afresh: a call the last one left unanswered stays ``aborted``); task
  key: the server's ``serverInfo.name`` from the ``initialize`` response, else ``mcp``;
* model: MCP does not record one, so traces carry none;
* counted, not read: a second response to a ``tools/call`` already answered (a repeated
  record) and a response to no request of the log (a result without a call); responses to
  the log's other requests (``tools/list``, ``ping``, ...) are passed over quietly.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detectors import detect_mcp
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import decode_arguments, iter_json_lines
from pytest_entropy.ingest.runs import RunBuilder
from pytest_entropy.ingest.writer import NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "JSONRPC_STAGES", "detect_mcp", "read_mcp_log"]

JSONRPC_STAGES: Final = {-32601: "resolve", -32602: "validate"}


def _key(request_id: Any) -> str | None:
    """Ids are strings or numbers; keep ``1`` and ``"1"`` apart."""
    if isinstance(request_id, str):
        return "s:" + request_id
    t = type(request_id)
    if t is int or t is float:
        return f"n:{request_id!r}"
    return None


class _Connection:
    __slots__ = ("calls", "initialize", "others", "runs", "writer")

    def __init__(self, writer: NativeWriter) -> None:
        self.writer = writer
        self.runs = RunBuilder(writer, "mcp")
        self.calls: dict[str, str] = {}  # request key -> tool name
        self.initialize: set[str] = set()
        self.others: set[str] = set()  # keys of the other requests not yet answered

    def message(self, message: dict[str, Any], where: str) -> Iterator[bytes]:
        diagnostics = self.writer.diagnostics
        method = message.get("method")
        key = _key(message.get("id"))
        if type(method) is str:
            if method == "initialize":
                yield from self.runs.boundary()
                self.runs.task_key = "mcp"
                # A new connection numbers its requests afresh: a call of the last one
                # still open is never answered.
                self.runs.new_numbering()
                self.calls.clear()
                self.others.clear()
                self.initialize.clear()
                if key is not None:
                    self.initialize.add(key)
            elif method == "tools/call" and key is not None:
                params = message.get("params")
                name = params.get("name") if type(params) is dict else None
                if type(name) is not str:
                    diagnostics.unknown_records += 1
                    return
                arguments = params.get("arguments", {}) if type(params) is dict else {}
                args, decoded = decode_arguments(arguments)
                self.calls[key] = name
                yield from self.runs.call(name, args, call_id=key, decoded=decoded)
            elif method == "notifications/cancelled":
                params = message.get("params")
                cancelled = _key(params.get("requestId")) if type(params) is dict else None
                if cancelled is not None and self.calls.pop(cancelled, None) is not None:
                    self.runs.result(cancelled, "aborted")
                    self.others.add(cancelled)  # a late response to it is no news
            elif key is not None:
                self.others.add(key)
            return
        if key is None or ("result" not in message and "error" not in message):
            diagnostics.unknown_records += 1
            return
        if key in self.initialize:
            self.initialize.discard(key)
            result = message.get("result")
            info = result.get("serverInfo") if type(result) is dict else None
            if type(info) is dict and type(info.get("name")) is str and info["name"]:
                self.runs.task_key = info["name"]
            return
        name = self.calls.pop(key, None)
        if name is None:
            if key in self.others:
                self.others.discard(key)  # the response to tools/list, ping, ...
            else:  # no open call: counted (and noted) as repeated or unmatched there
                self.runs.result(key, "aborted", where=where)
            return
        if "error" in message:
            error = message.get("error")
            code = error.get("code") if type(error) is dict else None
            stage = JSONRPC_STAGES.get(code) if type(code) is int else None
            if stage == "validate" and not self.writer.declares(self.writer.ref(name)):
                stage = "resolve"
            self.runs.result(key, "failed", stage)
        else:
            result = message.get("result")
            failed = type(result) is dict and result.get("isError") is True
            self.runs.result(key, "failed" if failed else "succeeded")


def read_mcp_log(path: Path, options: ReadOptions, diagnostics: ScanDiagnostics) -> Iterator[bytes]:
    """Native lines of one MCP JSON-RPC log."""
    writer = NativeWriter(options, diagnostics)
    connection = _Connection(writer)
    where = str(path)
    for number, record in iter_json_lines(path, diagnostics, name=where):
        batch = record if type(record) is list else [record]
        for item in batch:
            if type(item) is dict and type(item.get("message")) is dict and "jsonrpc" not in item:
                item = item["message"]
            if type(item) is not dict or item.get("jsonrpc") != "2.0":
                diagnostics.unknown_records += 1
                diagnostics.note(f"{where}:{number}", "not a JSON-RPC 2.0 message")
                continue
            yield from connection.message(item, f"{where}:{number}")
    yield from connection.runs.finish()


FORMAT: Final = SessionFormat("mcp", read_mcp_log, detector=detect_mcp)
