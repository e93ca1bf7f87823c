"""``python -m pytest_entropy``."""

from __future__ import annotations

import sys

from pytest_entropy.cli import console_main

if __name__ == "__main__":
    sys.exit(console_main())
