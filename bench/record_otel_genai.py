"""Record a small OpenTelemetry GenAI trace as OTLP/JSON, for the ``otel-genai`` reader's tests.

No public file of gen_ai spans was found, so this script makes one, the way an instrumented
agent would: an OpenAI client instrumented by ``opentelemetry-instrumentation-openai-v2``
(the ``chat`` spans) talks to a stub OpenAI-compatible server on 127.0.0.1; the agent loop
runs each tool call the model asks for inside ``opentelemetry-util-genai``'s
``TelemetryHandler.tool`` (the ``execute_tool`` spans) under one
``invoke_local_agent`` span that records the tools offered (``gen_ai.tool.definitions``).
The spans are encoded with the SDK's OTLP encoder and written as one OTLP/JSON line, the
layout the collector's file exporter writes (ids in hex, as OTLP/JSON requires).

Run it in its own virtual environment, never the project's::

    python3 -m venv /tmp/otel-venv
    /tmp/otel-venv/bin/pip install opentelemetry-sdk opentelemetry-instrumentation-openai-v2 \\
        openai opentelemetry-exporter-otlp-proto-common
    /tmp/otel-venv/bin/python bench/record_otel_genai.py tests/data/otel-genai/agent-trace.jsonl

The model's answers are scripted (the stub returns them in order), so the trace holds, by
design: turn 1 ``get_weather`` (succeeds) and ``lookup_user`` (raises ``KeyError``); turn 2
``send_email`` (no such tool: the loop fails it with ``error.type`` ``tool_not_found``) and
``get_weather`` with arguments that are not JSON (``JSONDecodeError``); turn 3 a text answer.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"

from google.protobuf.json_format import MessageToDict
from openai import OpenAI
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.util.genai.handler import TelemetryHandler
from opentelemetry.util.genai.types import Error, FunctionToolDefinition

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "lookup_user",
            "description": "A user's profile by id.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
        },
    },
]

# What the stub model answers, in order: tool calls twice, then text.
SCRIPT: list[list[tuple[str, str, str]] | str] = [
    [
        ("call_w1", "get_weather", '{"city": "Paris"}'),
        ("call_u1", "lookup_user", '{"id": 7}'),
    ],
    [
        ("call_e1", "send_email", '{"to": "a@example.com"}'),
        ("call_w2", "get_weather", "{city: Paris"),
    ],
    "It is sunny in Paris.",
]


class StubModel(BaseHTTPRequestHandler):
    turn = 0

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        json.loads(self.rfile.read(length))
        step = SCRIPT[min(StubModel.turn, len(SCRIPT) - 1)]
        StubModel.turn += 1
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "tool_calls"
        if isinstance(step, str):
            message["content"] = step
            finish = "stop"
        else:
            message["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
                for call_id, name, args in step
            ]
        body = json.dumps(
            {
                "id": f"chatcmpl-{StubModel.turn}",
                "object": "chat.completion",
                "created": 1767225600,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def run_tool(name: str, arguments: str) -> str:
    values = json.loads(arguments)  # raises on arguments that are not JSON
    if name == "get_weather":
        return json.dumps({"city": values["city"], "sky": "sunny"})
    if name == "lookup_user":
        users: dict[int, str] = {}
        return users[values["id"]]  # raises KeyError: there is no user 7
    raise LookupError(name)


def hex_ids(value: Any) -> Any:
    """OTLP/JSON writes trace and span ids as hex; protobuf's JSON mapping writes base64."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                out[key] = base64.b64decode(item).hex()
            else:
                out[key] = hex_ids(item)
        return out
    if isinstance(value, list):
        return [hex_ids(item) for item in value]
    return value


def main(out: str) -> None:
    server = HTTPServer(("127.0.0.1", 0), StubModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    handler = TelemetryHandler(tracer_provider=provider)
    client = OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="stub")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather for user 7?"}]
    with handler.invoke_local_agent(
        request_model="gpt-4o-mini", agent_name="weather-agent"
    ) as agent:
        agent.tool_definitions = [
            FunctionToolDefinition(
                name=tool["function"]["name"],
                description=tool["function"]["description"],
                parameters=tool["function"]["parameters"],
            )
            for tool in TOOLS
        ]
        while True:
            reply = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=TOOLS
            )
            choice = reply.choices[0].message
            if not choice.tool_calls:
                break
            messages.append(choice.model_dump(exclude_none=True))
            known = {tool["function"]["name"] for tool in TOOLS}
            for call in choice.tool_calls:
                invocation = handler.tool(call.function.name, agent_name="weather-agent")
                invocation.tool_call_id = call.id
                invocation.arguments = call.function.arguments
                try:
                    if call.function.name not in known:
                        invocation.fail(Error(message="no such tool", type="tool_not_found"))
                        result = f"error: no tool {call.function.name}"
                    else:
                        result = run_tool(call.function.name, call.function.arguments)
                        invocation.tool_result = result
                        invocation.stop()
                except Exception as error:  # the agent reports every tool failure to the model
                    invocation.fail(error)
                    result = f"error: {type(error).__name__}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    server.shutdown()
    request = encode_spans(exporter.get_finished_spans())
    document = hex_ids(MessageToDict(request))
    with open(out, "w", encoding="utf-8") as stream:
        stream.write(json.dumps(document, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
