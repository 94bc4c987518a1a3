"""A submission as handed in -> one plain folder holding ``exercises/<module>.py``.

Every way into grading (``seqlab grade``, ``grade-all``, the Gradescope autograder's ``seqlab
grade`` of its staged upload, nbgrader's exports through ``grade-all``) reads a submission here,
so each accepts the same shapes and says the same thing about the same problem:

* a folder holding ``exercises/``;
* a folder of the module files themselves (``rnn.py``, ``attention.py``, ... at its top);
* a ``.zip`` of either;
* either inside one folder (a checkout, ``alice-main/exercises/``), one or two levels down.

What is graded is always a fresh copy of the regular files only. A symbolic link is never
followed (the ``exercises`` folder itself included: a link to ``../../solutions`` beside the
student's checkout would hand the references in as the student's work), and a link, a FIFO
(reading one blocks), a device or a socket among the files read refuses the submission, with the
entry named. The copy is bounded by what the fork server copies into its sandbox, a zip by what
the Gradescope autograder extracts from an upload.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from .contract import MODULES
from .errors import SeqlabError
from .gradescope.upload import MAX_ENTRIES, MAX_EXTRACTED_BYTES, SKIPPED_DIRS
from .student.forkserver.protocol import COPY_LIMIT_BYTES, COPY_LIMIT_ENTRIES

MODULE_FILES = tuple(f"{module}.py" for module in MODULES)
NESTING = 2  # folders around exercises/: a checkout (alice-main/) inside a hand-in folder
# A copy's own files are never read from the hand-in: Python would run a stale or forged .pyc
# in place of the source the code policy read.
NOT_COPIED = {"__pycache__"}


class SubmissionError(SeqlabError, ValueError):
    """A submission that cannot be read: the message names the path and what is wrong."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _refuse(path: Path, mode: int) -> SubmissionError:
    return SubmissionError(f"{path}: {_kind(mode)}, not followed: a submission holds only regular files and folders")


class _Budget:
    """The caps on one copy: files and bytes."""

    def __init__(self, source: Path) -> None:
        self.source, self.files, self.bytes = source, 0, 0

    def take(self, size: int) -> None:
        self.files, self.bytes = self.files + 1, self.bytes + size
        if self.files > COPY_LIMIT_ENTRIES:
            raise SubmissionError(f"{self.source}: more than {COPY_LIMIT_ENTRIES} files in its exercises")
        if self.bytes > COPY_LIMIT_BYTES:
            raise SubmissionError(f"{self.source}: its exercises hold more than {COPY_LIMIT_BYTES >> 20} MB")


def _copy_file(path: Path, target: Path, budget: _Budget) -> None:
    """One regular file, opened without following a link and checked on the open descriptor (a
    file swapped for a link or a FIFO after the look is still refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        info = _lstat(path)
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise _refuse(path, info.st_mode) from None
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, info.st_mode)
        data = handle.read(COPY_LIMIT_BYTES - budget.bytes + 1)  # bounded even if the file grows
    budget.take(len(data))
    target.write_bytes(data)


def _copy_tree(folder: Path, target: Path, budget: _Budget) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = Path(entry.path)
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            if entry.name not in NOT_COPIED:
                _copy_tree(path, target / entry.name, budget)
        elif stat.S_ISREG(mode):
            _copy_file(path, target / entry.name, budget)
        else:
            raise _refuse(path, mode)


def _root(folder: Path, depth: int = 0) -> tuple[Path, bool] | None:
    """``(folder, flat)``: the folder holding exercises/ (flat False) or the module files (flat
    True), looking into a lone inner folder NESTING times at most; None when there is neither."""
    exercises = folder / "exercises"
    info = _lstat(exercises)
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            return folder, False
        if stat.S_ISREG(info.st_mode):
            raise SubmissionError(f"{exercises}: a file, not a folder")
        raise _refuse(exercises, info.st_mode)
    if any(_lstat(folder / name) is not None for name in MODULE_FILES):
        return folder, True
    inner = [e for e in os.scandir(folder) if _visible(e.name) and e.is_dir(follow_symlinks=False)]
    if len(inner) == 1 and depth < NESTING:
        return _root(Path(inner[0].path), depth + 1)
    return None


def _visible(name: str) -> bool:
    return not name.startswith(".") and name not in SKIPPED_DIRS


def _member_path(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or not path.parts or ".." in path.parts or ":" in path.parts[0]:
        return None
    return path


def _unzip(archive: Path, target: Path) -> None:
    """Extract member by member: no path out of ``target``, no link or other special member, at
    most MAX_ENTRIES members and MAX_EXTRACTED_BYTES read (whatever the headers claim)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            if len(members) > MAX_ENTRIES:
                raise SubmissionError(f"{archive}: more than {MAX_ENTRIES} entries in the zip")
            total = 0
            for info in members:
                member = _member_path(info.filename)
                if member is None:
                    raise SubmissionError(f"{archive}: unsafe path in zip ({info.filename!r})")
                mode = info.external_attr >> 16
                if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise _refuse(Path(f"{archive}/{member}"), mode)
                out = target.joinpath(*member.parts)
                if info.is_dir():
                    out.mkdir(parents=True, exist_ok=True)
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(out, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        total += len(chunk)
                        if total > MAX_EXTRACTED_BYTES:
                            raise SubmissionError(f"{archive}: unzips to more than {MAX_EXTRACTED_BYTES >> 20} MB")
                        dst.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError) as exc:
        raise SubmissionError(f"{archive}: not a readable zip ({exc})") from None


def is_submission(path: Path) -> bool:
    """Whether a class folder's entry is handed in as a submission (a folder, a .zip, or a link
    to be refused when read) rather than something else there (notes.txt, .DS_Store)."""
    info = _lstat(path)
    if info is None or path.name.startswith("."):
        return False
    if stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode):
        return True
    return stat.S_ISREG(info.st_mode) and path.suffix.lower() == ".zip"


def read_submission(source: Path, dest: Path) -> Path:
    """Copy ``source`` (any shape above) to ``dest/exercises/`` and return ``dest``; ``dest`` is
    emptied first. Raises SubmissionError, naming the path, for anything that cannot be graded."""
    source, dest = Path(source), Path(dest)
    info = _lstat(source)
    if info is None:
        raise SubmissionError(f"{source}: does not exist")
    shutil.rmtree(dest, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="seqlab-unzip-") as unzipped:
        try:
            _copy_submission(source, info.st_mode, Path(unzipped), dest)
        except SubmissionError as exc:
            shutil.rmtree(dest, ignore_errors=True)
            # a zip's member is named as inside the zip, not by the scratch folder it went to
            raise SubmissionError(str(exc).replace(f"{unzipped}/", f"{source}:")) from None
    (dest / "exercises" / "__init__.py").touch()
    return dest


def _copy_submission(source: Path, mode: int, unzipped: Path, dest: Path) -> None:
    if stat.S_ISREG(mode) and source.suffix.lower() == ".zip":
        _unzip(source, unzipped)
        folder = unzipped
    elif stat.S_ISDIR(mode):
        folder = source
    elif stat.S_ISREG(mode):
        raise SubmissionError(f"{source}: not a folder or a .zip")
    else:
        raise _refuse(source, mode)
    found = _root(folder)
    if found is None:
        held = ", ".join(sorted(name for name in os.listdir(folder) if _visible(name))[:8]) or "nothing"
        raise SubmissionError(
            f"{source}: no exercises/ folder and none of {', '.join(MODULE_FILES)} in it (it holds: {held})"
        )
    root, flat = found
    budget = _Budget(source)
    exercises = dest / "exercises"
    if not flat:
        _copy_tree(root / "exercises", exercises, budget)
        return
    exercises.mkdir(parents=True)
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.name.endswith(".py"):
            _copy_file(Path(entry.path), exercises / entry.name, budget)


_copies: dict[Path, Path] = {}  # copy made here -> what it was read from


@contextlib.contextmanager
def opened(source: str | Path) -> Iterator[Path]:
    """``source`` read into a temporary copy for the length of the block. A copy this process made
    and still holds is its own copy: the one a command prespawned a child for is the one graded."""
    source = Path(source)
    if source in _copies:
        yield source
        return
    with tempfile.TemporaryDirectory(prefix="seqlab-submission-") as work:
        copy = read_submission(source, Path(work) / "submission")
        _copies[copy] = source
        try:
            yield copy
        finally:
            del _copies[copy]


def source_of(copy: Path) -> Path:
    """What a copy made by :func:`opened` was read from (the path itself otherwise)."""
    return _copies.get(Path(copy), Path(copy))
