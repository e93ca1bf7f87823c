"""The ``entropy_snapshot`` fixture without syrupy: the test fails naming the extra
(issue 32: syrupy is the ``syrupy`` extra, not a dependency of the plugin)."""

from __future__ import annotations

import pytest

pytest_plugins = ("pytester",)


def test_entropy_snapshot_without_syrupy_names_the_extra(pytester: pytest.Pytester) -> None:
    # syrupy's own plugin off, and its import blocked, as in a base install.
    pytester.makeconftest(
        "import sys\n"
        "for name in [m for m in sys.modules if m == 'syrupy' or m.startswith('syrupy.')]:\n"
        "    del sys.modules[name]\n"
        "sys.modules['syrupy'] = None\n"
    )
    pytester.makepyfile("def test_snapshot(entropy_snapshot):\n    assert {} == entropy_snapshot\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:syrupy")
    result.assert_outcomes(errors=1)
    result.stdout.re_match_lines([r'.*MissingExtraError: .*pip install "pytest-entropy\[syrupy\]"'])
