"""A Griffe extension: the package's docstrings, written for ``help()`` and doctest, read as
Markdown on the site.

The docstrings use reStructuredText habits: ``>>>`` examples, ``Example::`` literal blocks
and roles such as ``:func:`measure```. Markdown would turn a doctest into nested block quotes
(and a ``[...]`` in its output into a link), so :func:`markdown_docstring` fences each
doctest block as ``pycon`` and writes a role as a code span. mkdocs.yml names this file under
the Python handler's ``extensions``.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|data|attr|exc|obj|const):`~?([^`]+)`")


def markdown_docstring(text: str) -> str:
    """``text`` with every doctest block fenced and every reST role a code span.

    >>> print(markdown_docstring("Use :func:`x`.\\n\\n>>> x()\\n1"))
    Use `x`.
    <BLANKLINE>
    ```pycon
    >>> x()
    1
    ```
    """
    out: list[str] = []
    in_doctest = False
    indent = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if not in_doctest and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            in_doctest = True
        elif in_doctest and not stripped:
            out.append(f"{indent}```")
            in_doctest = False
        if not in_doctest:
            # reST's "Example::" introduces the indented literal block that follows; in
            # Markdown the indentation alone makes it code, so one colon is left.
            line = _ROLE.sub(r"`\1`", line)
            if line.endswith("::") and not line.lstrip().startswith("::"):
                line = line[:-1]
        out.append(line)
    if in_doctest:
        out.append(f"{indent}```")
    return "\n".join(out)


class MarkdownDocstrings(Extension):
    """Rewrites each object's docstring with :func:`markdown_docstring` before it is parsed."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
