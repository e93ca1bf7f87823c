"""Links from a docs page to a repository file outside ``docs/`` (an example workflow, a hook
definition): MkDocs would report them as dangling, and the site has no copy of the file. This
hook gives each such file a generated page under ``files/`` that shows it, and points the
links there; on a code host the same links still lead to the file itself."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# A relative Markdown link, ``[text](target)`` or ``[text](target#anchor)``.
_LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")
# Where a repository file that a page links to is shown (the site has no other copy of it).
FILES_DIR = "files"


def repository_links(page: str, text: str, docs: Path) -> dict[str, str]:
    """The links of the page ``page`` (its path under ``docs``) that leave the docs folder
    for a file of the repository (an example workflow, a hook definition): ``{link target:
    the file's path in the repository}``."""
    out = {}
    for match in _LINK.finditer(text):
        target = match["target"]
        if "://" in target or target.startswith(("/", "mailto:")):
            continue
        resolved = ((docs / page).parent / target).resolve()
        if resolved.is_relative_to(docs.resolve()) or not resolved.is_relative_to(REPO):
            continue
        if resolved.is_file():
            out[target] = resolved.relative_to(REPO).as_posix()
    return out


def file_page(path: str) -> str:
    """A page that shows the repository file ``path``."""
    text = (REPO / path).read_text(encoding="utf-8")
    language = {".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".py": "python"}.get(
        Path(path).suffix, "text"
    )
    fence = "~~~~" if "```" in text else "```"
    return (
        f"# {path}\n\nThe file `{path}` of the repository.\n\n"
        f"{fence}{language}\n{text.rstrip()}\n{fence}\n"
    )


def _file_uri(path: str) -> str:
    # MkDocs leaves out files whose name starts with a dot (.pre-commit-hooks.yaml).
    return f"{FILES_DIR}/{path.replace('/', '--').lstrip('.')}.md"


def _docs_dir(config: Any) -> Path:
    return Path(config["docs_dir"])


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add a page for each repository file a page links to."""
    from mkdocs.structure.files import File

    docs = _docs_dir(config)
    shown: set[str] = set()
    for page in sorted(docs.rglob("*.md")):
        relative = page.relative_to(docs).as_posix()
        if relative.startswith("_"):
            continue
        shown.update(repository_links(relative, page.read_text(encoding="utf-8"), docs).values())
    for path in sorted(shown):
        files.append(File.generated(config, _file_uri(path), content=file_page(path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs hook: a link to a repository file outside docs/ points at its page."""
    links = repository_links(page.file.src_uri, markdown, _docs_dir(config))
    if not links:
        return markdown
    depth = page.file.src_uri.count("/")

    def replace(match: re.Match[str]) -> str:
        path = links.get(match["target"])
        if path is None:
            return match[0]
        target = "../" * depth + _file_uri(path)
        return f"]({target}{match['anchor'] or ''})"

    return _LINK.sub(replace, markdown)
