"""Memos that live for one command.

Several pure functions keep a memo of what they computed (a schema's validator, a compiled
pattern, a key set's collation order, a signature's distance to another): within one
command that saves real work, as the same schemas and key sets come back on every line.
None of them may outlive the command, though: a second ``main()`` in the same process (a
benchmark's repeat, a test, the watch loop's next command) must do its own work and see no
trace of the first's inputs. :func:`command_memos` empties them when a command starts and
again when it ends. Memos that hold no input data (the ICU collator, RE2's options, the
validator classes) stay; they are the program's own set-up.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["INPUT_MEMOS", "command_memos", "forget_input_memos"]

# module -> the names of its memos of input data (an lru_cache'd function or a dict). A
# module that is not imported yet has nothing to forget; none is imported from here.
INPUT_MEMOS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    (
        "pytest_entropy.core.canonical",
        ("collation_sort_key", "_ordered_key_set", "_key_entries"),
    ),
    ("pytest_entropy.core.fingerprint", ("_distance",)),
    ("pytest_entropy.core.js_regex", ("js_regex_compiles", "re2_spelling", "_property_exists")),
    ("pytest_entropy.core.regex", ("_compiled",)),
    (
        "pytest_entropy.core.validation",
        ("_by_identity", "_by_digest", "_checks_by_identity", "_checks_by_digest"),
    ),
)


def forget_input_memos() -> None:
    """Empty every memo of input data in the modules imported so far."""
    for module_name, names in INPUT_MEMOS:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in names:
            memo: Any = getattr(module, name)
            if hasattr(memo, "cache_clear"):
                memo.cache_clear()
            else:
                memo.clear()


@contextmanager
def command_memos() -> Iterator[None]:
    """The block is one command: it starts with empty memos and leaves them empty."""
    forget_input_memos()
    try:
        yield
    finally:
        forget_input_memos()
