"""What the MCP proxy reads out of JSON-RPC messages: request keys, the client as a model,
the listed tools as ``export`` sees them, redacted arguments (issue 31)."""

from __future__ import annotations

from typing import Any

import orjson

__all__ = [
    "accepts",
    "as_listed",
    "id_number",
    "model_of",
    "redacted",
    "request_key",
    "request_keys",
]


def request_key(request_id: Any) -> str | None:
    """Ids are strings or numbers; ``1`` and ``"1"`` stay apart."""
    if isinstance(request_id, str):
        return "s:" + request_id
    if type(request_id) in (int, float):
        return f"n:{request_id!r}"
    return None


def model_of(info: Any) -> str | None:
    """``clientInfo`` as a model ``name/version`` (no model is known to an MCP proxy)."""
    if type(info) is not dict or type(info.get("name")) is not str or not info["name"]:
        return None
    version = info.get("version")
    return f"{info['name']}/{version if type(version) is str and version else 'unknown'}"


def request_keys(raw: bytes) -> list[str]:
    """The request keys of one message or batch."""
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return []
    items = message if isinstance(message, list) else [message]
    keys = []
    for item in items:
        key = request_key(item.get("id")) if type(item) is dict and "method" in item else None
        if key is not None:
            keys.append(key)
    return keys


def id_number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


def redacted(value: Any, key: str) -> Any:
    """``--redact-values``: every long or secret-like string (or one under a secret-like
    key) replaced by its digest before it is recorded, as the pool redacts values."""
    from pytest_entropy.core.redact import redact_observed_value

    if type(value) is dict:
        return {name: redacted(item, name) for name, item in value.items()}
    if type(value) is list:
        return [redacted(item, key) for item in value]
    return redact_observed_value(key, value)


def as_listed(tools: list[Any]) -> list[Any]:
    """The tools as ``export --mcp`` lists them: through the SDK's ``Tool`` model, so the
    tool fields come out in the order (and spelling) ``export`` writes. Without the SDK, or
    for a tool its model refuses, the entries as the server sent them."""
    try:
        from mcp.types import Tool
    except ImportError:
        return tools
    from pydantic import ValidationError

    from pytest_entropy.sources.mcp import tool_dicts

    try:
        return tool_dicts([Tool.model_validate(tool) for tool in tools])
    except ValidationError:
        return tools


def accepts(schema: Any, args: Any) -> bool:
    from pytest_entropy.core.validation import accepts

    try:
        return accepts(schema, args)
    except Exception:  # a schema the validator cannot evaluate classifies nothing
        return True
