"""The plugin's per-run machinery: certification items, xdist transport, report, gate, summary.

One :class:`EntropySession` is registered per run (it stays idle unless asked for
something). With ``--entropy-certify`` it adds one item per check,
``entropy-certify::<check-id>``, after the project's own tests (``--entropy-certify-only``:
instead of them); items may run on pytest-xdist workers, which send their outcomes
to the controller in ``workeroutput``; the controller (or the only process)
assembles the report, writes ``--entropy-json``/``--entropy-markdown``/``--entropy-html``,
applies the sessions gate (``--entropy-max-score``, ``--entropy-baseline``) and ORs any failure into
the exit status in ``pytest_sessionfinish``. The terminal summary never raises.

Importing this module is cheap; the metric is imported when a check or the gate runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_entropy.pytest.stash import GATE_LINE, RATCHET_NOTE
from pytest_entropy.state.option_table import EntropySettings

if TYPE_CHECKING:
    from pytest_entropy.run.certification import Certification, CheckOutcome

__all__ = [
    "SESSION_KEY",
    "CertificationCollector",
    "CheckFailed",
    "CheckItem",
    "EntropySession",
]

NODE: Final = "entropy-certify"
WORKER_OUTPUT_KEY: Final = "pytest_entropy"

# The run's session object, for items that need it (typed: the class is defined below).
SESSION_KEY: pytest.StashKey[EntropySession] = pytest.StashKey()


class CheckFailed(Exception):
    """A certification check did not pass; carries its outcome for the failure text."""

    def __init__(self, outcome: CheckOutcome) -> None:
        super().__init__(outcome.result.evidence)
        self.outcome = outcome

    def explain(self) -> str:
        from pytest_entropy.core.certify import CHECKS
        from pytest_entropy.report.names import terminal_line

        result = self.outcome.result
        described = {check.id: check for check in CHECKS}.get(result.id)
        lines = [f"certification check {result.id} failed"]
        if described is not None:
            lines[0] += f" ({described.vector}: {described.asserts})"
        lines += [f"  {line}" for line in (result.details or (result.evidence,))]
        if self.outcome.corpus:
            lines[0] = f"corpus check {result.id} failed (your corpus, not the meter)"
            if self.outcome.reason:
                lines.append(f"  reason: {self.outcome.reason}")
        return "\n".join(map(terminal_line, lines))


class CheckItem(pytest.Item):
    """One certification check."""

    def runtest(self) -> None:
        outcome = self.config.stash[SESSION_KEY].run_check(self.name)
        self.user_properties.extend(outcome.properties)
        if outcome.skipped is not None:
            pytest.skip(outcome.skipped)
        if not outcome.result.passed:
            if outcome.corpus and not outcome.gating:
                # Reported, never gating (ratchet-holding by default, --entropy-lenient).
                pytest.xfail(f"{outcome.result.id}: {outcome.reason or outcome.result.evidence}")
            raise CheckFailed(outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CheckFailed):
            return excinfo.value.explain()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{NODE}::{self.name}"


class CertificationCollector(pytest.Collector):
    """The collector of the check items (there may be no test file at all)."""

    def collect(self) -> list[pytest.Item]:
        certification = self.config.stash[SESSION_KEY].certification
        ids = (*certification.planned_check_ids(), *certification.planned_corpus_check_ids())
        return [CheckItem.from_parent(self, name=check_id) for check_id in ids]


class _State:
    """What one run gathered (a plain class: a dataclass costs every pytest start its
    generated methods, and this one needs none of them)."""

    __slots__ = ("gate_lines", "notes", "outcomes", "problems", "report")

    def __init__(self) -> None:
        self.outcomes: dict[str, CheckOutcome] = {}
        self.report: dict[str, Any] | None = None
        self.notes: list[str] = []
        self.problems: list[str] = []
        self.gate_lines: list[str] = []


class EntropySession:
    """Hooks of one run; registered by ``plugin.pytest_configure``."""

    def __init__(self, config: pytest.Config, settings: EntropySettings) -> None:
        self.config = config
        self.settings = settings
        self.state = _State()
        self._certification: Certification | None = None

    # ---- roles

    @property
    def is_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    @property
    def is_controller(self) -> bool:
        return self.config.pluginmanager.has_plugin("dsession")

    @property
    def certification(self) -> Certification:
        if self._certification is None:
            if self.settings.metric_version == 3:
                from pytest_entropy.run.certification_v3 import v3_certification_of

                # The v3 list has the interface of Certification the items use.
                self._certification = v3_certification_of(self.settings)
                return self._certification
            from pytest_entropy.run.certification import Certification, CertificationOptions

            options = CertificationOptions(**self.settings.certification_arguments())
            self._certification = Certification(options)
        return self._certification

    def run_check(self, check_id: str) -> CheckOutcome:
        outcome = self.certification.run(check_id)
        self.state.outcomes[check_id] = outcome
        return outcome

    # ---- collection: the checks beside the project's tests (--entropy-certify-only: instead)

    def _check_items(self, session: pytest.Session) -> list[pytest.Item]:
        collector = CertificationCollector.from_parent(session, name=NODE, nodeid=NODE)
        hook = session.ihook
        hook.pytest_collectstart(collector=collector)
        report = hook.pytest_make_collect_report(collector=collector)
        hook.pytest_collectreport(report=report)
        items = [node for node in report.result if isinstance(node, pytest.Item)]
        return items if report.passed else []

    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if not self.settings.certify_only or self.is_controller:
            return None
        session.items = self._check_items(session)
        try:
            self.config.hook.pytest_collection_modifyitems(
                session=session, config=self.config, items=session.items
            )
        finally:
            self.config.hook.pytest_collection_finish(session=session)
        session.testscollected = len(session.items)
        return True

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """``--entropy-lint`` without ``--entropy-certify``: one more item per tool; the
        sessions gate: ``entropy-gate::max-score`` and ``entropy-gate::baseline``, last;
        ``--entropy-certify``: the check items after the project's own tests."""
        if self.settings.certify and not self.settings.certify_only:
            items.extend(self._check_items(session))
        if self.settings.lint is not None and not self.settings.certify:
            from pytest_entropy.pytest.lint_items import lint_items

            items.extend(lint_items(session, self.settings))
        if self.settings.gate:
            from pytest_entropy.pytest.gate_items import gate_items

            items.extend(gate_items(session, self.settings))

    # ---- results from everywhere

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """Controller: take the outcomes a pytest-xdist worker ran."""
        from pytest_entropy.run.certification import CheckOutcome

        output = getattr(node, "workeroutput", None) or {}
        for data in output.get(WORKER_OUTPUT_KEY) or ():
            outcome = CheckOutcome.from_json(data)
            self.state.outcomes.setdefault(outcome.result.id, outcome)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == RATCHET_NOTE and str(value) not in self.state.notes:
                self.state.notes.append(str(value))
            elif name == GATE_LINE and str(value) not in self.state.gate_lines:
                self.state.gate_lines.append(str(value))

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes its file
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker:
            if self.state.outcomes:
                workeroutput = self.config.workeroutput  # type: ignore[attr-defined]
                workeroutput[WORKER_OUTPUT_KEY] = [
                    outcome.to_json() for outcome in self.state.outcomes.values()
                ]
            return
        failed = False
        if self.settings.certify:
            failed |= not self._finish_certification()
        # The sessions gate is items of its own (pytest/gate_items.py): pytest counts them.
        if failed:
            # OR, never overwrite: a run that already failed keeps its own status.
            session.exitstatus = int(session.exitstatus) | int(pytest.ExitCode.TESTS_FAILED)

    # ---- certification report

    def _finish_certification(self) -> bool:
        """Assemble and write the report; False when writing failed."""
        from pytest_entropy.run.certification import build_report

        outcomes = list(self.state.outcomes.values())
        try:
            if self.settings.metric_version == 3:
                report = self.certification.report(outcomes)
            else:
                report = build_report(
                    self.certification.fixture_summary(),
                    outcomes,
                    self.certification.planned_check_ids(),
                    self.certification.planned_corpus_check_ids(),
                )
        except Exception as error:
            self.state.problems.append(f"the certification report failed: {error}")
            return False
        self.state.report = report
        ok = True
        for path, text in self._report_files(report):
            try:
                from pytest_entropy.state.store import write_file_atomic

                write_file_atomic(path, text, mode=0o644)
            except Exception as error:
                self.state.problems.append(f"cannot write {path}: {error}")
                ok = False
        self._junit_properties(report)
        return ok

    def _report_files(self, report: dict[str, Any]) -> list[tuple[Path, str]]:
        from pytest_entropy.core.canonical import file_text

        files = []
        if self.settings.json is not None:
            files.append((self.settings.json, file_text(report)))
        if self.settings.markdown is not None:
            # The certification summary first, byte for byte as before; the corpus and trial
            # sections follow when the run had them.
            from pytest_entropy.report.markdown import render_markdown

            files.append((self.settings.markdown, render_markdown(report, kind="certify")))
        if self.settings.html is not None:
            try:
                from pytest_entropy.report.html import render_html

                files.append((self.settings.html, render_html(report, kind="certify")))
            except Exception as error:  # pygal missing, say: a problem, never a crash
                self.state.problems.append(f"cannot render {self.settings.html}: {error}")
        return files

    def _junit_properties(self, report: dict[str, Any]) -> None:
        try:
            from _pytest.junitxml import xml_key
        except ImportError:  # pragma: no cover - a pytest without the junitxml stash key
            return
        xml = self.config.stash.get(xml_key, None)
        if xml is None:
            return
        from pytest_entropy.core.canonical import stable_json_hash
        from pytest_entropy.core.certify.scopes import spec_part

        xml.add_global_property("entropy_certification", str(report["evaluation"]["passed"]))
        xml.add_global_property("entropy_certification_hash", stable_json_hash(spec_part(report)))
        if "corpusChecks" in report:
            xml.add_global_property(
                "entropy_corpus_certification", str(report["corpusChecks"]["passed"])
            )
        corpus = report.get("corpus")
        if corpus is not None:
            from pytest_entropy.core.meter import report_hash

            xml.add_global_property("entropy_score", corpus["score"])
            xml.add_global_property("entropy_report_hash", report_hash(corpus))

    # ---- terminal summary

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        try:
            lines = self.summary_lines()
        except Exception as error:  # never raise from the summary (STYLE.md)
            lines = [f"entropy: the summary failed: {type(error).__name__}: {error}"]
        if lines:
            from pytest_entropy.report.names import terminal_line  # only when there is a line

            terminalreporter.write_sep("=", "entropy")
            encoding = getattr(getattr(terminalreporter, "_tw", None), "_file", None)
            encoding = getattr(encoding, "encoding", None) or "utf-8"
            for line in lines:
                # Names reach these lines raw: controls and lone surrogates escaped.
                terminalreporter.write_line(_encodable(terminal_line(line), encoding))

    def summary_lines(self) -> list[str]:
        lines: list[str] = []
        if self.settings.trial and self.settings.sessions is None and self.settings.certify:
            lines.append("warning: --trial ignored: the trial needs --sessions (spec §14 #13)")
        if self.settings.certify_only and self.config.args_source == pytest.Config.ArgsSource.ARGS:
            ignored = " ".join(self.config.args)
            lines.append(
                f"note: --entropy-certify-only runs only the certification; not run: {ignored}"
            )
        report = self.state.report
        if report is not None:
            lines += _certification_lines(report, self.settings)
        lines += self.state.problems
        lines += self.state.gate_lines
        lines += [f"entropy ratchet: {note}" for note in self.state.notes]
        return lines


def _encodable(line: str, encoding: str) -> str:
    """``line``, or its ASCII stand-ins when the terminal cannot encode it (``✗`` as ``x``,
    not pytest's ``\\u2717`` escape)."""
    try:
        line.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        from pytest_entropy.report.encoding import ascii_fallback

        return ascii_fallback(line)
    return line


def _certification_lines(report: dict[str, Any], settings: EntropySettings) -> list[str]:
    from pytest_entropy.core.canonical import stable_json_hash
    from pytest_entropy.core.certify.scopes import corpus_line, spec_part
    from pytest_entropy.core.jscompat import js_string

    evaluation = report["evaluation"]
    checks = evaluation["checks"]
    failed = evaluation["failed"]
    verdict = "PASS" if evaluation["passed"] else "FAIL"
    lines = [
        f"entropy certification (metric v{report.get('metricVersion', 2)}): {verdict} ·"
        f" {len(checks) - len(failed)} of"
        f" {len(checks)} checks passed · report {stable_json_hash(spec_part(report))[:12]}"
    ]
    for check in checks:
        if not check["passed"]:
            lines.append(f"  ✗ {check['id']} — {check['evidence']}")
    corpus = report.get("corpus")
    if corpus is not None:
        lines.append(
            f"  corpus: {corpus['totals']['operations']} operations · score"
            f" {js_string(corpus['score'])} · rejections/1k"
            f" {js_string(corpus['totals']['invocationRejectionsPer1k'])}"
        )
    trial = report.get("trial")
    if trial is not None:
        lines.append(
            f"  trial: {trial['verdict']} · tightening costs {trial['totals']['tighteningCost']}"
        )
    corpus_summary = corpus_line(report)
    if corpus_summary is not None:
        lines.append(f"  {corpus_summary}")
    for label, path in (
        ("JSON report", settings.json),
        ("Markdown", settings.markdown),
        ("HTML report", settings.html),
    ):
        if path is not None:
            lines.append(f"  {label}: {path}")
    return lines
