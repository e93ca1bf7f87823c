"""Foreign tool lists -> surface snapshots ``{version: 1, actions: [{ref, inputSchema}]}``.

Each reader takes the parsed file (a JSON value; JSON Lines files and directories arrive as
the list of their values) and returns the tools in file order, refs being the tool names;
``load_surface`` adds the ref prefix. ``docs/formats.md`` lists the accepted shapes:

* ``mcp``: ``tools/list`` results (``{"tools": [...]}``, a JSON-RPC response holding one,
  or a bare array) and one-tool ``.snap`` objects; schema = ``inputSchema``;
* ``openai``: chat-completions ``{"type": "function", "function": {...}}``, the Responses
  form ``{"type": "function", "name", "parameters"}`` and legacy ``{"name", "parameters"}``
  functions, bare or under ``tools``/``functions``; a function without ``parameters`` takes
  none (``{"type": "object", "properties": {}}``);
* ``anthropic``: ``{"name", "input_schema"}`` tools, bare or under ``tools``;
* ``pi``: Pi tool lists ``{"name", "label", "parameters"}`` (refs ``pi.<name>``);
* ``bfcl``: BFCL function docs, bare, in test entries (``function``) or in JSON Lines;
  the dialect is mapped to JSON Schema (:mod:`.bfcl_schema`) and refs are the names with
  ``.`` written as ``_`` (as BFCL's FC handlers send them); one action per name, at its
  first position, with its last declaration;
* ``tau-bench``: ``{"domains": {name: [openai tools]}}``, domains in file order;
* ``openhands``: ``{"tools": [openai tools]}``;
* ``toolbench``: an answer file's ``answer_generation.function`` list;
* ``gemini``: ``functionDeclarations`` (or ``function_declarations``), bare, under
  ``tools`` or in a list of tools; ``parametersJsonSchema`` as it is, or ``parameters``
  with Gemini's upper-case types and ``nullable`` mapped to JSON Schema.
"""

from __future__ import annotations

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.inputs import TOOL_FIELDS, surface_from_value
from pytest_entropy.ingest.base import SurfaceFormat

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final, TypeAlias

__all__ = ["FORMATS", "NO_PARAMETERS", "SNAPSHOT_FORMAT", "detect_surface_format", "tool_array"]

# (name, schema, description or None, or a dict of MCP tool fields); what the third item
# holds is kept only for ``lint`` and ``export`` (``load_surface(..., tool_fields=True)``),
# so the surface hash never sees it.
Tools: TypeAlias = "list[tuple[str, Any, Any]]"

NO_PARAMETERS: Final = {"type": "object", "properties": {}}


def _snapshot(tools: Tools) -> dict[str, Any]:
    actions = []
    for name, schema, description in tools:
        action = {"ref": name, "inputSchema": schema}
        if type(description) is dict:
            action.update(description)
        elif type(description) is str:
            action["description"] = description
        actions.append(action)
    return {"version": 1, "actions": actions}


def _fail(source: str, problem: str) -> EntropyInputError:
    return EntropyInputError(problem, source=source)


def _named(entry: Any, position: int, source: str, what: str) -> dict[str, Any]:
    if type(entry) is not dict or type(entry.get("name")) is not str or not entry["name"]:
        raise _fail(source, f"{what} {position} has no name")
    return entry


def tool_array(value: Any, *keys: str) -> list[Any] | None:
    """The tool array: the value itself, or under one of ``keys`` (a JSON-RPC response's
    ``result`` unwrapped); ``None`` when there is none."""
    if type(value) is dict and type(value.get("result")) is dict and "jsonrpc" in value:
        value = value["result"]
    if type(value) is list:
        return value
    if type(value) is dict:
        for key in keys:
            items = value.get(key)
            if type(items) is list:
                return items
    return None


def _listed(value: Any, source: str, *keys: str) -> list[Any]:
    """:func:`tool_array`, or the error saying none was found."""
    found = tool_array(value, *keys)
    if found is None:
        raise _fail(source, f"no tool list found (expected an array or {', '.join(keys)})")
    return found


# ----------------------------------------------------------------------------- readers


def read_mcp(value: Any, source: str) -> dict[str, Any]:
    """MCP ``tools/list`` result, bare array, or one-tool snapshot(s)."""
    if type(value) is dict and "inputSchema" in value and "name" in value:
        value = [value]
    tools: Tools = []
    for position, entry in enumerate(_listed(value, source, "tools")):
        tool = _named(entry, position, source, "tool")
        name = tool["name"]
        if "inputSchema" not in tool:
            raise _fail(source, f"tool {position} ({name}) has no inputSchema")
        if type(tool["inputSchema"]) is not dict:
            kind = "null" if tool["inputSchema"] is None else type(tool["inputSchema"]).__name__
            raise _fail(source, f"tool {position} ({name}): inputSchema is not an object ({kind})")
        fields = {key: tool[key] for key in TOOL_FIELDS if key in tool}
        tools.append((name, tool["inputSchema"], fields))
    return _snapshot(tools)


def _openai_tools(items: list[Any], source: str) -> Tools:
    tools: Tools = []
    for position, entry in enumerate(items):
        if type(entry) is dict and type(entry.get("function")) is dict:
            entry = entry["function"]
        function = _named(entry, position, source, "function")
        schema = function.get("parameters", NO_PARAMETERS)
        tools.append((function["name"], schema, function.get("description")))
    return tools


def read_openai(value: Any, source: str) -> dict[str, Any]:
    """OpenAI chat-completions, Responses or legacy function tool lists."""
    return _snapshot(_openai_tools(_listed(value, source, "tools", "functions"), source))


def read_anthropic(value: Any, source: str) -> dict[str, Any]:
    """Anthropic tool arrays (``input_schema``)."""
    tools: Tools = []
    for position, entry in enumerate(_listed(value, source, "tools")):
        tool = _named(entry, position, source, "tool")
        if "input_schema" not in tool:
            raise _fail(source, f"tool {position} ({tool['name']}) has no input_schema")
        tools.append((tool["name"], tool["input_schema"], tool.get("description")))
    return _snapshot(tools)


def read_pi(value: Any, source: str) -> dict[str, Any]:
    """Pi tool lists (``parameters``); refs get ``pi.`` unless another prefix is given."""
    return _snapshot(_openai_tools(_listed(value, source, "tools"), source))


def _bfcl_functions(value: Any) -> list[Any]:
    """Function docs in order: bare, lists, JSON Lines, or test entries' ``function``."""
    out: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is list:
            stack.extend(reversed(item))
        elif type(item) is dict:
            if "function" in item and "name" not in item:
                stack.append(item["function"])
            elif type(item.get("name")) is str and "parameters" in item:
                out.append(item)
    return out


def read_bfcl(value: Any, source: str) -> dict[str, Any]:
    """BFCL function docs, dialect mapped to JSON Schema, one action per name."""
    from pytest_entropy.ingest.bfcl_schema import bfcl_to_json_schema  # only for BFCL docs

    schemas: dict[str, tuple[Any, Any]] = {}
    for function in _bfcl_functions(value):
        ref = function["name"].replace(".", "_")
        schemas[ref] = (bfcl_to_json_schema(function["parameters"]), function.get("description"))
    if not schemas:
        raise _fail(source, "no BFCL function docs found")
    return _snapshot([(ref, schema, text) for ref, (schema, text) in schemas.items()])


def read_tau_bench(value: Any, source: str) -> dict[str, Any]:
    """tau-bench tool lists: ``{"domains": {...}}`` or an OpenAI tool array."""
    if type(value) is dict and type(value.get("domains")) is dict:
        tools: Tools = []
        for items in value["domains"].values():
            if type(items) is list:
                tools.extend(_openai_tools(items, source))
        return _snapshot(tools)
    return read_openai(value, source)


def read_toolbench(value: Any, source: str) -> dict[str, Any]:
    """A ToolBench answer file's function list (or a bare function list)."""
    if type(value) is dict and type(value.get("answer_generation")) is dict:
        value = value["answer_generation"].get("function")
    if type(value) is not list:
        raise _fail(source, "no answer_generation.function list found")
    return _snapshot(_openai_tools(value, source))


_GEMINI_KEYS = ("functionDeclarations", "function_declarations")


def _gemini_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-subset ``Schema`` as JSON Schema: ``STRING`` types lower-cased and
    ``nullable: true`` as a ``null`` type; everything else kept (at any nesting depth)."""
    from pytest_entropy.core.tree_map import map_tree

    return map_tree(schema, _copy_gemini_node)


_GEMINI_MAPS = ("properties", "$defs", "definitions")
_GEMINI_SCHEMAS = ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "prefixItems")


def _copy_gemini_node(schema: Any, pending: list[tuple[Any, Any, Any]]) -> Any:
    from pytest_entropy.core.tree_map import later_list, later_map

    if type(schema) is list:
        return later_list(schema, pending)
    if type(schema) is not dict:
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and type(value) is str:
            out[key] = value.lower()
        elif key in _GEMINI_MAPS and type(value) is dict:
            out[key] = later_map(value, pending)
        elif key in _GEMINI_SCHEMAS:
            out[key] = None
            pending.append((out, key, value))
        elif key != "nullable":
            out[key] = value
    if schema.get("nullable") is True and type(out.get("type")) is str:
        out["type"] = [out["type"], "null"]
    return out


def _gemini_declarations(value: Any) -> list[Any] | None:
    """The function declarations of a Gemini tool list, in order (``None``: not one)."""
    if type(value) is dict:
        for key in _GEMINI_KEYS:
            if type(value.get(key)) is list:
                return list(value[key])
        tools = value.get("tools")
        return _gemini_declarations(tools) if type(tools) is list else None
    if type(value) is list and value:
        found: list[Any] = []
        for entry in value:
            declarations = _gemini_declarations(entry) if type(entry) is dict else None
            if declarations is None:
                return None
            found.extend(declarations)
        return found
    return None


def read_gemini(value: Any, source: str) -> dict[str, Any]:
    """Gemini ``functionDeclarations`` (bare, under ``tools``, or a list of tools); the
    schema is ``parametersJsonSchema`` or the mapped ``parameters``, else no parameters."""
    declarations = _gemini_declarations(value)
    if declarations is None:
        raise _fail(source, "no functionDeclarations found")
    tools: Tools = []
    for position, entry in enumerate(declarations):
        function = _named(entry, position, source, "function declaration")
        if "parametersJsonSchema" in function:
            schema = function["parametersJsonSchema"]
        elif "parameters" in function:
            schema = _gemini_schema(function["parameters"])
        else:
            schema = NO_PARAMETERS
        tools.append((function["name"], schema, function.get("description")))
    return _snapshot(tools)


# --------------------------------------------------------------------------- detection


def _element_format(entry: Any) -> str | None:
    if type(entry) is not dict:
        return None
    if "inputSchema" in entry:
        return "mcp"
    if "input_schema" in entry:
        return "anthropic"
    if "function" in entry and "question" in entry:
        return "bfcl"  # a BFCL test entry
    if entry.get("type") == "function" or type(entry.get("function")) is dict:
        return "openai"
    if "parameters" in entry and "name" in entry:
        from pytest_entropy.ingest.bfcl_schema import uses_bfcl_dialect  # (not for the others)

        if uses_bfcl_dialect(entry.get("parameters")):
            return "bfcl"
        return "pi" if "label" in entry else "openai"
    return None


def is_inspect_log(value: Any) -> bool:
    """A parsed Inspect ``.json`` eval log."""
    return type(value) is dict and type(value.get("eval")) is dict and "samples" in value


def is_otel_export(value: Any) -> bool:
    """A parsed OTLP/JSON trace export, or a JSON Lines file of them."""
    items = value if type(value) is list else [value]
    return bool(items) and all(
        type(item) is dict and type(item.get("resourceSpans")) is list for item in items
    )


def detect_surface_format(value: Any) -> str:
    """The surface format of a parsed file, or ``""`` when nothing matches."""
    if _gemini_declarations(value) is not None:
        return "gemini"
    if is_inspect_log(value):
        return "inspect"
    if is_otel_export(value):
        return "otel-genai"
    if type(value) is dict:
        if value.get("version") == 1 and type(value.get("actions")) is list:
            return "snapshot"
        if type(value.get("domains")) is dict:
            return "tau-bench"
        if type(value.get("answer_generation")) is dict:
            return "toolbench"
        if type(value.get("result")) is dict and "jsonrpc" in value:
            return detect_surface_format(value["result"])
        for key in ("tools", "functions"):
            if type(value.get(key)) is list:
                return detect_surface_format(value[key]) or ""
        return _element_format(value) or ""
    if type(value) is list:
        formats = [_element_format(entry) for entry in value]
        if "bfcl" in formats:
            return "bfcl"
        found = {name for name in formats if name is not None}
        return found.pop() if len(found) == 1 else ""
    return ""


def read_snapshot(value: Any, source: str) -> dict[str, Any]:
    """The native snapshot ``{version: 1, actions: [...]}``, validated (the MCP tool fields
    kept: the loader drops them unless asked)."""
    return surface_from_value(value, source=source, tool_fields=True)


# The surface formats this module reads, the native snapshot first; the registry lists them.
SNAPSHOT_FORMAT: Final = SurfaceFormat("snapshot", read_snapshot)
FORMATS: Final = (
    SurfaceFormat("mcp", read_mcp),
    SurfaceFormat("openai", read_openai),
    SurfaceFormat("anthropic", read_anthropic),
    SurfaceFormat("pi", read_pi, ref_prefix="pi."),
    SurfaceFormat("bfcl", read_bfcl),
    SurfaceFormat("tau-bench", read_tau_bench),
    SurfaceFormat("openhands", read_openai),
    SurfaceFormat("toolbench", read_toolbench),
    SurfaceFormat("gemini", read_gemini),
)
