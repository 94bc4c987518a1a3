"""Copying a hand-in's files: regular files only, opened without following a link, bounded."""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ..errors import SeqlabError
from ..student.forkserver.protocol import COPY_LIMIT_BYTES, COPY_LIMIT_ENTRIES

# Bounds on reading a hand-in. Each is far above an honest one and low enough that a hostile or
# accidental one (a whole home folder, a zip bomb) cannot stall or fill the grader's disk.
MAX_ENTRIES = 20_000  # files and folders looked at, zip members included (a checkout has ~60)
MAX_EXTRACTED_BYTES = 128 << 20  # everything extracted from the zips of one hand-in
# A zip file larger than this is refused before it is parsed: what it holds could not be
# extracted under MAX_EXTRACTED_BYTES anyway (stored members are as large as their contents),
# and parsing a huge central directory is itself a cost (every entry becomes an object).
MAX_ZIP_BYTES = MAX_EXTRACTED_BYTES + (16 << 20)
# Folder depth copied or extracted. The walk (find.py) looks 12 folders deep into the hand-in and
# into each zip; nothing deeper is ever graded, so it is left unread: a 1000-deep tree, copied or
# unzipped, stopped the whole class on a RecursionError (pathlib's mkdir, shutil.rmtree).
MAX_COPY_DEPTH = 16
# A copy's own files are never read from the hand-in: Python would run a stale or forged .pyc
# in place of the source the code policy read.
NOT_COPIED = {"__pycache__"}


class SubmissionError(SeqlabError, ValueError):
    """A submission that cannot be read: the message names the path and what is wrong."""


def kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def refuse(path: Path | str, mode: int) -> SubmissionError:
    return SubmissionError(f"{path}: {kind(mode)}, not followed: a submission holds only regular files and folders")


class Budget:
    """The caps on one copy: files and bytes (what the fork server copies into its sandbox)."""

    def __init__(self, source: Path) -> None:
        self.source, self.files, self.bytes = source, 0, 0

    def take(self, size: int) -> None:
        self.files, self.bytes = self.files + 1, self.bytes + size
        if self.files > COPY_LIMIT_ENTRIES:
            raise SubmissionError(f"{self.source}: more than {COPY_LIMIT_ENTRIES} files in its exercises")
        if self.bytes > COPY_LIMIT_BYTES:
            raise SubmissionError(f"{self.source}: its exercises hold more than {COPY_LIMIT_BYTES >> 20} MB")


def copy_file(path: Path, target: Path, budget: Budget) -> None:
    """One regular file, opened without following a link and checked on the open descriptor (a
    file swapped for a link or a FIFO after the look is still refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        info = lstat(path)
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise refuse(path, info.st_mode) from None
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise refuse(path, info.st_mode)
        data = handle.read(COPY_LIMIT_BYTES - budget.bytes + 1)  # bounded even if the file grows
    budget.take(len(data))
    target.write_bytes(data)


def copy_tree(folder: Path, target: Path, budget: Budget, depth: int = 0) -> None:
    """The regular files of ``folder`` into ``target``; subfolders deeper than MAX_COPY_DEPTH are
    left out (no module file is graded from one)."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = Path(entry.path)
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            if entry.name not in NOT_COPIED and depth < MAX_COPY_DEPTH:
                copy_tree(path, target / entry.name, budget, depth + 1)
        elif stat.S_ISREG(mode):
            copy_file(path, target / entry.name, budget)
        else:
            raise refuse(path, mode)


def _member_path(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or not path.parts or ".." in path.parts or ":" in path.parts[0]:
        return None
    return path


class Unzipper:
    """Extracts the zips of one hand-in, each into its own folder under ``scratch``, member by
    member: no path out of its folder, no link or other special member, at most MAX_ENTRIES
    members and MAX_EXTRACTED_BYTES read over all of them (whatever the headers claim)."""

    def __init__(self, scratch: Path) -> None:
        self.scratch, self.count, self.members, self.total = scratch, 0, 0, 0

    def extract(self, archive: Path, shown: str) -> Path:
        self.count += 1
        target = self.scratch / f"zip{self.count}"
        target.mkdir(parents=True)
        try:
            # opened once, never through a link, and checked on the descriptor: an archive swapped
            # for a link or a FIFO after the walk looked at it is still refused
            fd = os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            seen = lstat(archive)
            if seen is not None and not stat.S_ISREG(seen.st_mode):
                raise refuse(shown, seen.st_mode) from None
            raise SubmissionError(f"{shown}: not a readable zip ({exc.strerror or exc})") from None
        try:
            with os.fdopen(fd, "rb") as handle:
                mode = os.fstat(handle.fileno()).st_mode
                if not stat.S_ISREG(mode):
                    raise refuse(shown, mode)
                _check_directory(handle, shown)
                with zipfile.ZipFile(handle) as zf:
                    for info in zf.infolist():
                        self._member(zf, info, target, shown)
        except SubmissionError:
            raise
        except OSError as exc:
            raise SubmissionError(f"{shown}: not a readable zip ({exc.strerror or exc})") from None
        except Exception as exc:
            # A hostile or damaged archive makes zipfile raise far more than BadZipFile: zlib.error
            # for a corrupt deflate stream, UnicodeDecodeError for a name flagged UTF-8 that is
            # not, struct.error, ValueError, EOFError, NotImplementedError (an unknown method),
            # RuntimeError (encryption). Each means the same to the student: it cannot be read.
            raise SubmissionError(f"{shown}: not a readable zip ({_kind_of(exc)}: {exc})") from None
        return target

    def _member(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, shown: str) -> None:
        self.members += 1
        if self.members > MAX_ENTRIES:
            raise SubmissionError(f"{shown}: more than {MAX_ENTRIES} entries in its zips")
        member = _member_path(info.filename)
        if member is None:
            raise SubmissionError(f"{shown}: unsafe path in zip ({info.filename!r})")
        if len(member.parts) > MAX_COPY_DEPTH + 1:
            return  # deeper than anything graded: left in the zip (see MAX_COPY_DEPTH)
        # The Unix mode in the high bits, when there is one; a member with no file type there
        # (zipfile's writestr, tools that leave it out) is a plain file or, by its "/", a folder.
        mode = info.external_attr >> 16
        if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise refuse(f"{shown}/{member}", mode)
        out = target.joinpath(*member.parts)
        if info.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as src, open(out, "wb") as dst:
            while chunk := src.read(1 << 20):
                self.total += len(chunk)
                if self.total > MAX_EXTRACTED_BYTES:
                    raise SubmissionError(f"{shown}: unzips to more than {MAX_EXTRACTED_BYTES >> 20} MB")
                dst.write(chunk)


def _kind_of(exc: Exception) -> str:
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _check_directory(handle: BinaryIO, shown: str) -> None:
    """Refuse, before zipfile parses it, a zip too large to be a hand-in or whose end record
    claims more entries than MAX_ENTRIES: zipfile reads the whole central directory into memory
    before the first member is looked at. A record that cannot be found or read is left to
    zipfile, which then says why the archive is unreadable."""
    size = os.fstat(handle.fileno()).st_size
    if size > MAX_ZIP_BYTES:
        raise SubmissionError(f"{shown}: a zip of {size >> 20} MB, more than {MAX_ZIP_BYTES >> 20} MB")
    try:
        handle.seek(max(0, size - (1 << 16) - 22))  # the end record: 22 bytes, a comment < 64 KiB
        tail = handle.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + 22 > len(tail):
            return
        entries = struct.unpack_from("<H", tail, at + 10)[0]
        if entries == 0xFFFF and at >= 20 and tail[at - 20 : at - 16] == b"PK\x06\x07":  # zip64
            handle.seek(struct.unpack_from("<Q", tail, at - 20 + 8)[0])
            record = handle.read(56)
            if len(record) == 56 and record[:4] == b"PK\x06\x06":
                entries = struct.unpack_from("<Q", record, 32)[0]
    except OSError as exc:
        raise SubmissionError(f"{shown}: not a readable zip ({exc.strerror or exc})") from None
    except (OverflowError, struct.error):  # a forged zip64 offset: zipfile says what is wrong
        return
    if entries > MAX_ENTRIES:
        raise SubmissionError(f"{shown}: a zip of {entries} entries, more than {MAX_ENTRIES}")
