"""The one error family of seqlab: a problem the user can fix, reported without a traceback.

Every module raises a subclass of :class:`SeqlabError` for bad input (a missing folder, a
malformed config, a solution file whose regions do not pair up, a bad student id, a sandbox that
cannot run here); its message names the input (the file, the field, the option, the student id)
and what is wrong. ``seqlab.cli.main`` catches the base class once, prints
``seqlab COMMAND: error: MESSAGE`` and exits 2; the commands let it pass as it is, never
re-wrapping it. Anything else that escapes is a bug in seqlab and keeps its traceback.
``tests/project/test_errors.py`` holds the package to this.
"""

from __future__ import annotations


class SeqlabError(Exception):
    """A problem the user can fix; its message names the file or option and what is wrong."""


class UserError(SeqlabError):
    """Bad command-line input (a path that is not a folder, an option out of range)."""
