"""Calls and their results, matched by call id, grouped into traces (prompt runs).

Conversation logs (Pi, Claude Code, OpenAI, Anthropic, MCP) record a call in one record and
its result in a later one. :class:`RunBuilder` keeps the calls of the current trace, matches
each result to the oldest unanswered call with the same id, and hands finished traces to the
:class:`~.native.NativeWriter` in order. A finished trace waits (at most
:data:`MAX_WAITING` of them) for results that arrive after the next prompt; what never gets a
result stays ``aborted`` and is counted as unanswered.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Iterator
from typing import Any, Final

from pytest_entropy.ingest.foreign import decode_arguments
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter

__all__ = ["MAX_WAITING", "RunBuilder"]

MAX_WAITING: Final = 64


class RunBuilder:
    """One file's traces: ``call`` and ``result`` as records arrive, ``boundary`` at a prompt.

    With ``dedupe`` a call whose id was already seen is a repeated record of the same call
    (counted as a duplicate, dropped); without it, as tau-bench's reused ids require, it is
    a new call and results match the oldest unanswered call of that id.
    """

    __slots__ = (
        "_answered",
        "_current",
        "_open",
        "_seen",
        "_waiting",
        "calls",
        "dedupe",
        "task_key",
        "writer",
    )

    def __init__(self, writer: NativeWriter, task_key: str, *, dedupe: bool = True) -> None:
        self.writer = writer
        self.task_key = task_key
        self.dedupe = dedupe
        self._current: ForeignTrace | None = None
        self._waiting: deque[ForeignTrace] = deque()
        self._open: dict[str, deque[ForeignCall]] = {}
        self._seen: set[str] = set()
        self._answered: set[str] = set()
        self.calls = 0

    def call(
        self,
        name: str,
        args: Any,
        *,
        call_id: str | None = None,
        model: str | None = None,
        outcome: str = "aborted",
        decoded: bool = True,
        stage: str | None = None,
        answered: bool = False,
    ) -> Generator[bytes, None, ForeignCall | None]:
        """Record a call; yields the lines of traces this call closes (a model change) and
        returns the call (``None``: a repeated record, dropped).

        ``outcome`` and ``stage`` are for a call the log records with its own verdict;
        ``answered`` says the log gives no later result for it."""
        diagnostics = self.writer.diagnostics
        if call_id is not None:
            if self.dedupe and call_id in self._seen:
                diagnostics.duplicate_records += 1
                return None
            self._seen.add(call_id)
        self.calls += 1
        if not decoded:
            diagnostics.undecodable_arguments += 1
        current = self._current
        if current is not None and current.model != model and current.calls:
            yield from self.boundary()
            current = None
        if current is None:
            current = self._current = ForeignTrace(self.task_key, model)
        current.model = model
        call = ForeignCall(name, args, outcome, stage, call_id=call_id, answered=answered)
        current.calls.append(call)
        if call_id is not None and not answered:
            self._open.setdefault(call_id, deque()).append(call)
        return call

    def recorded_call(
        self, name: Any, arguments: Any, call_id: Any, model: str | None
    ) -> Iterator[bytes]:
        """:meth:`call` from the raw fields of a log record: a name that is not a string is
        counted as an unknown record, arguments are decoded (JSON text or an object), and an
        id that is not a string is no id."""
        if type(name) is not str:
            self.writer.diagnostics.unknown_records += 1
            return
        args, decoded = decode_arguments(arguments)
        yield from self.call(
            name,
            args,
            call_id=call_id if type(call_id) is str else None,
            model=model,
            decoded=decoded,
        )

    def result(
        self, call_id: Any, outcome: str, stage: str | None = None, *, where: str | None = None
    ) -> bool:
        """Answer the oldest unanswered call with this id; False (counted) if there is none.

        With ``dedupe`` a second result for an answered id is a repeated record (counted as
        a duplicate); any other result without a call is counted as unmatched. ``where``
        (``file:line``) notes such a result in the diagnostics' samples.
        """
        queue = self._open.get(call_id) if type(call_id) is str else None
        if not queue:
            diagnostics = self.writer.diagnostics
            if self.dedupe and type(call_id) is str and call_id in self._answered:
                diagnostics.duplicate_records += 1
                problem = "a second result for an answered call"
            else:
                diagnostics.unmatched_results += 1
                problem = "a result without a call"
            if where is not None:
                diagnostics.note(where, problem)
            return False
        call = queue.popleft()
        if not queue:
            del self._open[call_id]
        if self.dedupe:
            self._answered.add(call_id)
        call.outcome = outcome
        call.stage = stage
        call.answered = True
        return True

    def boundary(self) -> Iterator[bytes]:
        """End the current trace (a new prompt); yields whatever is ready to be written."""
        current = self._current
        self._current = None
        if current is not None and current.calls:
            self._waiting.append(current)
        yield from self._drain(final=False)

    def new_numbering(self) -> None:
        """The ids that follow number afresh (a new connection): an id seen or answered
        before is new again, and the calls still open can no longer be answered (they stay
        aborted, counted as unanswered when written)."""
        self._seen.clear()
        self._answered.clear()
        self._open.clear()

    def finish(self) -> Iterator[bytes]:
        """End of the file: every remaining trace is written; unanswered calls stay aborted."""
        yield from self.boundary()
        yield from self._drain(final=True)
        self._open.clear()

    def _drain(self, *, final: bool) -> Iterator[bytes]:
        waiting = self._waiting
        while waiting:
            head = waiting[0]
            answered = all(call.call_id is None or call.answered for call in head.calls)
            if not (final or answered or len(waiting) > MAX_WAITING):
                return
            waiting.popleft()
            for call in head.calls:
                if not call.answered and call.call_id is not None:
                    queue = self._open.get(call.call_id)
                    if queue is not None and any(item is call for item in queue):
                        queue.remove(call)
                        if not queue:
                            del self._open[call.call_id]
                    self.writer.diagnostics.unanswered_calls += 1
            yield from self.writer.lines(head)
