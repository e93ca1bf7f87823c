"""The ``pytest-entropy`` command line (console script ``pytest_entropy.cli:main``)."""

from __future__ import annotations

from pytest_entropy.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
