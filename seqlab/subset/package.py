"""The name of the package a submission's own modules live in, alone in a module so that the
rules and the shims both read it without importing each other."""

from __future__ import annotations

PACKAGE = "exercises"
