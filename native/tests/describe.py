"""The typed text of a parsed JSON value that the vectors record (``make_vectors.py``) and
compare (``check_wheel.py``; ``vectors.rs`` has its Rust twin). Needs nothing but Python."""

from __future__ import annotations

import json
import struct
from typing import Any


def describe(value: Any) -> str:
    """A typed, exact text of a parsed value: ``n``, ``t``, ``f``, ``i<int>``,
    ``d<16 hex digits of the double's bits>``, ``s<json.dumps ASCII>``, ``[a,b]``,
    ``{<key>:<value>,...}`` in the dict's own (insertion) order. Iterative: values nest
    deeper than Python's recursion limit."""
    out: list[str] = []
    stack: list[Any] = [(False, value)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            out.append(item)
        elif item is None:
            out.append("n")
        elif item is True:
            out.append("t")
        elif item is False:
            out.append("f")
        elif type(item) is int:
            out.append(f"i{item}")
        elif type(item) is float:
            out.append("d" + struct.pack(">d", item).hex())
        elif type(item) is str:
            out.append("s" + json.dumps(item))
        elif type(item) is list:
            stack.append((True, "]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append((False, item[index]))
                stack.append((True, "," if index else "["))
            if not item:
                stack.append((True, "["))
        elif type(item) is dict:
            stack.append((True, "}"))
            keys = list(item)
            for index in range(len(keys) - 1, -1, -1):
                stack.append((False, item[keys[index]]))
                stack.append((True, ("," if index else "{") + json.dumps(keys[index]) + ":"))
            if not keys:
                stack.append((True, "{"))
        else:
            raise TypeError(type(item).__name__)
    return "".join(out)
