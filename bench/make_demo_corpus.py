"""Write the bundled demo corpus (``corpora/demo``): three sessions, a surface, a repair table.

The demo is a small notes service (an MCP server) used by an agent that also reads, edits
and runs code. It is built to show every term of the meter and the compiler at work:

* ``mcp.report.render`` is called with a concentrated vocabulary (mostly ``pdf``) beneath a
  five-value declared enum: evidence for an enum tightening;
* ``mcp.flaky.sync`` fails more often than it succeeds, at several stages: quarantine
  evidence (it has no audits, so the replay gate lets a quarantine through);
* ``mcp.notes.search`` is called in two disjoint argument shapes: an overload signal;
* ``pi.read`` wobbles between argument shapes after a validation failure: churn;
* discovery calls add navigation cost; two models share the sessions.

Run from the repository root:  python bench/make_demo_corpus.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1] / "corpora" / "demo"

STR = {"type": "string"}
INT = {"type": "integer"}


def closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "properties": properties,
    }


SURFACE = {
    "version": 1,
    "actions": [
        {
            "ref": "mcp.flaky.sync",
            "inputSchema": closed({"mode": STR}, ["mode"]),
        },
        {
            "ref": "mcp.notes.create",
            "inputSchema": closed(
                {"title": STR, "body": STR, "tags": {"type": "array", "items": STR}},
                ["title", "body"],
            ),
        },
        {
            "ref": "mcp.notes.search",
            "inputSchema": {
                "type": "object",
                "required": [],
                "properties": {
                    "query": STR,
                    "limit": INT,
                    "tag": STR,
                    "since": STR,
                },
            },
        },
        {
            "ref": "mcp.report.render",
            "inputSchema": closed(
                {
                    "format": {"type": "string", "enum": ["pdf", "html", "docx", "md", "web"]},
                    "title": STR,
                },
                ["format"],
            ),
        },
        {
            "ref": "pi.bash",
            "inputSchema": closed({"command": STR, "timeout": INT}, ["command"]),
        },
        {
            "ref": "pi.edit",
            "inputSchema": closed(
                {"path": STR, "oldText": STR, "newText": STR}, ["path", "oldText", "newText"]
            ),
        },
        {
            "ref": "pi.read",
            "inputSchema": closed({"path": STR, "offset": INT, "limit": INT}, ["path"]),
        },
    ],
}

REPAIRS = {
    "version": 1,
    "catalogDigest": "demo",
    "repairs": [
        {"kind": "keyAlias", "ref": "mcp.notes.search", "from": "q", "to": "query"},
        {"kind": "actionAlias", "provider": "mcp.notes", "from": "find", "to": "search"},
    ],
    "createdAt": "2026-01-05T09:00:00.000Z",
    "updatedAt": "2026-01-05T09:00:00.000Z",
}

COUNTS = {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0, "droppedOperations": 0}


def project(ref: str, args: dict[str, Any]) -> dict[str, Any]:
    """The trace writer's privacy projection: Pi refs keep a few keys, MCP refs keep none."""
    keep: dict[str, tuple[str, ...]] = {
        "pi.read": ("path", "offset", "limit"),
        "pi.edit": ("path",),
        "pi.bash": ("command",),
        "fabric.discovery.search": ("query", "limit"),
    }
    kept = {key: args[key] for key in keep.get(ref, ()) if key in args}
    return {key: kept[key] for key in sorted(kept)}


class Session:
    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[dict[str, Any]] = []
        self.entry = 0

    def add(self, record: dict[str, Any]) -> None:
        self.entry += 1
        self.lines.append({"id": f"{self.name}-{self.entry}", **record})

    def model(self, provider: str, model_id: str) -> None:
        self.add({"type": "model_change", "provider": provider, "modelId": model_id})

    def user(self, text: str) -> None:
        self.add({"type": "message", "message": {"role": "user", "content": text}})

    def turn(
        self,
        provider: str,
        model: str,
        phase: str,
        calls: list[tuple[str, dict[str, Any], str, str | None]],
    ) -> None:
        self.add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "provider": provider,
                    "model": model,
                    "content": [{"type": "toolCall", "name": "fabric_exec"}],
                },
            }
        )
        operations = []
        audits = []
        for sequence, (ref, args, outcome, stage) in enumerate(calls):
            provider_name, _, action = ref.partition(".")
            op: dict[str, Any] = {
                "type": "call",
                "sequence": sequence,
                "ref": ref,
                "provider": provider_name,
                "action": action,
                "args": project(ref, args),
                "outcome": outcome,
            }
            if stage is not None:
                op["failureStage"] = stage
                op["error"] = f"Call failed during {stage}"
            operations.append(op)
            if not ref.startswith("fabric.") and ref != "mcp.flaky.sync":
                audits.append(
                    {"ref": ref, "tool": action, "success": outcome == "succeeded", "args": args}
                )
        failed = any(op["outcome"] == "failed" for op in operations)
        trace = {
            "kind": "pi-fabric.execution",
            "version": 1,
            "outcome": "failed" if failed else "succeeded",
            "phases": [phase],
            "operations": operations,
            "counts": COUNTS,
        }
        self.add(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"call-{self.entry}",
                    "toolName": "fabric_exec",
                    "content": [{"type": "text", "text": f"{len(operations)} calls done"}],
                    "details": {
                        "success": not failed,
                        "trace": trace,
                        "audits": audits,
                        "phases": [phase],
                    },
                },
            }
        )

    def write(self, directory: Path) -> None:
        text = "".join(
            json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"
            for line in self.lines
        )
        (directory / f"{self.name}.jsonl").write_text(text, encoding="utf-8")


OK = "succeeded"


def ok(ref: str, **args: Any) -> tuple[str, dict[str, Any], str, None]:
    return (ref, args, OK, None)


def failed(ref: str, stage: str, **args: Any) -> tuple[str, dict[str, Any], str, str]:
    return (ref, args, "failed", stage)


def build() -> list[Session]:
    a = Session("2026-01-05-notes-release")
    a.user("Render the weekly report and fix the flaky sync.")
    a.model("anthropic", "claude-sonnet-4-5")
    a.turn(
        "anthropic",
        "claude-sonnet-4-5",
        "triage",
        [
            ("fabric.discovery.search", {"query": "report", "limit": 5}, OK, None),
            ok("mcp.report.render", format="pdf", title="Weekly"),
            ok("mcp.report.render", format="pdf", title="Weekly (draft)"),
            ok("mcp.notes.search", query="release notes", limit=10),
            failed("mcp.flaky.sync", "validate", mode="fast"),
            failed("mcp.flaky.sync", "invoke", mode="slow"),
        ],
    )
    a.turn(
        "anthropic",
        "claude-sonnet-4-5",
        "fix",
        [
            failed("pi.read", "validate", path="src/sync.py", limit="40"),
            ok("pi.read", path="src/sync.py", limit=40),
            ok("pi.read", path="src/sync.py", offset=40, limit=40),
            ok("pi.edit", path="src/sync.py", oldText="retry=1", newText="retry=3"),
            failed("pi.bash", "invoke", command="pytest -q tests/test_sync.py"),
            ok("pi.bash", command="pytest -q tests/test_sync.py"),
        ],
    )
    a.turn(
        "anthropic",
        "claude-sonnet-4-5",
        "verify",
        [
            ok("mcp.report.render", format="pdf", title="Weekly"),
            ok("mcp.report.render", format="html", title="Weekly"),
            failed("mcp.flaky.sync", "invoke", mode="fast"),
            ok("mcp.notes.create", title="Sync fix", body="retry=3", tags=["ops"]),
        ],
    )

    b = Session("2026-01-06-notes-triage")
    b.model("openai", "gpt-5")
    b.user("Find last week's incident notes and summarise them.")
    b.turn(
        "openai",
        "gpt-5",
        "triage",
        [
            ("fabric.discovery.search", {"query": "notes", "limit": 5}, OK, None),
            ("fabric.discovery.describe", {"ref": "mcp.notes.search"}, OK, None),
            ok("mcp.notes.search", tag="incident", since="2026-01-01"),
            ok("mcp.notes.search", tag="incident", since="2025-12-25"),
            ok("mcp.notes.search", query="postmortem", limit=5),
            failed("mcp.flaky.sync", "prepare", mode="fast"),
        ],
    )
    b.turn(
        "openai",
        "gpt-5",
        "summarise",
        [
            ok("mcp.report.render", format="pdf", title="Incidents"),
            ok("mcp.report.render", format="pdf", title="Incidents v2"),
            ok("mcp.report.render", format="pdf", title="Incidents v3"),
            ok("mcp.notes.create", title="Incident summary", body="three incidents"),
            failed("mcp.flaky.sync", "invoke", mode="slow"),
        ],
    )

    c = Session("2026-01-07-notes-cleanup")
    c.model("anthropic", "claude-sonnet-4-5")
    c.user("Tidy the notes module and re-render the report.")
    c.turn(
        "anthropic",
        "claude-sonnet-4-5",
        "fix",
        [
            ok("pi.read", path="src/notes.py"),
            ok("pi.edit", path="src/notes.py", oldText="def  find", newText="def find"),
            ok("pi.bash", command="ruff check src"),
            ok("mcp.notes.search", tag="cleanup", since="2026-01-06"),
        ],
    )
    c.turn(
        "anthropic",
        "claude-sonnet-4-5",
        "verify",
        [
            ok("mcp.report.render", format="pdf", title="Weekly"),
            ok("mcp.report.render", format="pdf", title="Weekly final"),
            ok("pi.bash", command="pytest -q"),
        ],
    )
    return [a, b, c]


def main() -> None:
    sessions_dir = ROOT / "sessions"
    sessions_dir.mkdir(parents=True, exist_ok=True)
    for session in build():
        session.write(sessions_dir)
    (ROOT / "surface.json").write_text(json.dumps(SURFACE, indent=2) + "\n", encoding="utf-8")
    (ROOT / "repairs.json").write_text(json.dumps(REPAIRS, indent=2) + "\n", encoding="utf-8")
    print(f"wrote the demo corpus to {ROOT}")


if __name__ == "__main__":
    main()
