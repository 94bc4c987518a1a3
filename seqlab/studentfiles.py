"""Reading files a student handed in, on every path that reads them: never through a link, bounded.

Each function here refuses, with a ``StudentFileError`` that names the file, what a hand-in
may not do to the grader: make it read another file (a symbolic link, followed by an ordinary
``open``: to the key, the reference solution, another student's hand-in), read without end (a
huge file, a FIFO), or walk without end (a deep or wide tree). ``seqlab nbgrader autograde`` and
``seqlab exam grade-all`` read through it.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path

from .errors import SeqlabError

# A student's hand-in folder holds a few files and what a notebook wrote; deeper or larger trees
# are not a hand-in, and walking them would cost the class's run.
MAX_WALK_DEPTH = 16
MAX_WALK_ENTRIES = 10_000


class StudentFileError(SeqlabError, ValueError):
    """A file or folder of one student's hand-in that is refused; the message names it. Callers
    that turn a hand-in's problem into that student's row catch it beside their own errors."""


def shown(name: str) -> str:
    """A path for a message: as it is when it is printable text, else ``ascii()`` of it (a line
    break or a byte that is not UTF-8 can neither forge a line nor stop the print)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return ascii(name)
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        return ascii(name)
    return name


def read_bytes(path: Path, max_bytes: int, error: type[Exception] = StudentFileError) -> bytes:
    """The bytes of a regular file, never through a link (``O_NOFOLLOW``: the final name; the
    folders above it are checked by the caller's walk), at most ``max_bytes``. A refusal is an
    ``error`` naming the file: the caller's own error (an answers file's, a notebook's), raised
    here rather than re-wrapped from another by its text."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        if path.is_symlink():
            raise error(f"{shown(str(path))}: a symbolic link, not a file (hand in the file itself)")
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", -1):
            raise error(f"{shown(str(path))}: a symbolic link, not a file (hand in the file itself)") from None
        raise error(f"{shown(str(path))}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{shown(str(path))}: not a regular file")
        if info.st_size > max_bytes:
            raise error(f"{shown(str(path))}: {info.st_size} bytes, more than the {max_bytes} a hand-in may have")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:  # grew while read
                raise error(f"{shown(str(path))}: more than the {max_bytes} bytes a hand-in may have")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{shown(str(path))}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def links_under(folder: Path) -> list[str]:
    """The symbolic links under ``folder`` (itself included), as paths relative to its parent; none
    is followed. A tree deeper than ``MAX_WALK_DEPTH`` or with more than ``MAX_WALK_ENTRIES``
    entries is refused (``StudentFileError``): no hand-in looks like that."""
    folder = Path(folder)
    if folder.is_symlink():
        return [folder.name]
    found: list[str] = []
    count = 0
    stack = [(folder, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_WALK_DEPTH:
            raise StudentFileError(f"{shown(str(current))}: folders nested more than {MAX_WALK_DEPTH} deep")
        try:
            entries = list(os.scandir(current))
        except OSError as exc:
            raise StudentFileError(f"{shown(str(current))}: cannot be listed ({exc.strerror or exc})") from None
        for entry in entries:
            count += 1
            if count > MAX_WALK_ENTRIES:
                raise StudentFileError(f"{shown(str(folder))}: more than {MAX_WALK_ENTRIES} files and folders")
            if entry.is_symlink():
                found.append(os.path.relpath(entry.path, folder.parent))
            elif entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), depth + 1))
    return sorted(found)


def is_plain_file(path: Path) -> bool:
    """A regular file at ``path`` itself, not through a link."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_plain_dir(path: Path) -> bool:
    """A folder at ``path`` itself, not through a link."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
