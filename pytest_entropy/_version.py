"""The package version (single source for hatchling and ``--version``)."""

__version__ = "0.1.0"
