"""Find the student's exercise files in a Gradescope upload, whatever shape it came in.

Students upload the seven ``<topic>.py`` files flat, an ``exercises/`` folder (at any depth, e.g.
inside a GitHub repository checkout), or a zip of either. This module reads the upload in the
trusted autograder process, before any student code runs, and copies the chosen files into a
fresh ``exercises/`` folder for ``seqlab grade``. It never follows a symbolic link (a link to
``/autograder/source`` would hand the reference solutions to the grader as the student's work)
and never extracts a zip member outside its own folder.
"""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..contract import MODULES

EXPECTED_FILES = tuple(f"{module}.py" for module in MODULES)

# Bounds on reading an upload. Each is far above an honest upload and low enough that a hostile
# or accidental one (a whole home folder, a zip bomb) cannot stall or fill the autograder.
MAX_SOURCE_BYTES = 1 << 20  # one exercise file: the largest reference module is ~20 KB
MAX_ZIP_BYTES = 64 << 20  # one zip inside the upload (a repository zip with its history)
MAX_EXTRACTED_BYTES = 128 << 20  # everything extracted from every zip of one upload
MAX_ENTRIES = 20_000  # files and folders looked at (a student repository has ~60)
MAX_DEPTH = 12  # folder depth looked into (exercises/ sits at depth 1 or 2)
MAX_ZIP_NESTING = 2  # a zip inside a zip (an LMS bulk download of a zip) is the deepest
# Folders that never hold a student's exercise files but can hold thousands of entries.
SKIPPED_DIRS = {"__pycache__", "__MACOSX", "node_modules", "site-packages", "venv", "env"}


@dataclass
class Upload:
    """What was found: the chosen file per module, notes for the student, and (when nothing can
    be graded) the problem, in words the student can act on."""

    files: dict[str, Path] = field(default_factory=dict)  # module -> file on disk
    chosen_from: str = ""  # the folder they came from, as uploaded
    notes: list[str] = field(default_factory=list)
    problem: str = ""
    seen: list[str] = field(default_factory=list)  # a few uploaded names, for the message


@dataclass
class _Walk:
    scratch: Path
    entries: int = 0
    extracted_bytes: int = 0
    zips: int = 0
    candidates: dict[tuple[str, Path], dict[str, Path]] = field(default_factory=dict)  # (shown, dir) -> files
    notes: list[str] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    truncated: bool = False


def find_exercises(submission: Path, scratch: Path) -> Upload:
    """Look through ``submission`` (and any zip in it, extracted under ``scratch``)."""
    submission = Path(submission)
    if not submission.is_dir() or submission.is_symlink():
        return Upload(
            problem=f"No submission was found (the autograder expected the folder {submission}). "
            f"Upload the files {', '.join(EXPECTED_FILES)} again."
        )
    walk = _Walk(scratch=Path(scratch))
    _walk_dir(walk, submission, shown="", depth=0, nesting=0)
    upload = Upload(notes=list(walk.notes), seen=walk.seen[:12])
    if walk.truncated:
        upload.notes.append(
            f"The upload holds more than {MAX_ENTRIES} files and folders; only the first {MAX_ENTRIES} were looked at."
        )
    if not walk.candidates:
        held = ", ".join(walk.seen[:12]) or "nothing"
        upload.problem = (
            f"No exercise file was found in your upload. Upload the files {', '.join(EXPECTED_FILES)} "
            f"(flat, in an exercises/ folder, or zipped). Your upload held: {held}."
        )
        if any(name.endswith(".ipynb") for name in walk.seen):
            upload.problem += " Notebooks are not graded here: upload the .py files."
        return upload
    # The folder holding the most exercise files; among equals one named exercises/, then the
    # shallowest, then the first by name, so the same upload is always read the same way.
    ranked = sorted(
        walk.candidates.items(),
        key=lambda item: (
            -len(item[1]),
            PurePosixPath(item[0][0]).name != "exercises",
            item[0][0].count("/"),
            item[0][0],
        ),
    )
    (shown, _), files = ranked[0]
    upload.files = dict(sorted(files.items(), key=lambda kv: MODULES.index(kv[0])))
    upload.chosen_from = shown or "the top of your upload"
    upload.notes.append(
        f"Graded the files in {upload.chosen_from}: " + ", ".join(f"{m}.py" for m in upload.files) + "."
    )
    missing = [f"{m}.py" for m in MODULES if m not in files]
    if missing:
        upload.notes.append(
            f"Missing from {upload.chosen_from}: {', '.join(missing)}; the functions in "
            f"{'it' if len(missing) == 1 else 'them'} score 0."
        )
    others = [s or "the top of your upload" for (s, _), _ in ranked[1:]]
    if others:
        upload.notes.append(
            f"Also found exercise files in {', '.join(others[:5])}"
            f"{' and more' if len(others) > 5 else ''}; those were not graded."
        )
    return upload


def stage(upload: Upload, dest: Path) -> Path:
    """Copy the chosen files into ``dest/exercises/`` (a submission folder ``seqlab grade`` takes).

    A file that cannot be read is left out with a note: its functions score 0 and the rest is
    still graded."""
    exercises = Path(dest) / "exercises"
    exercises.mkdir(parents=True, exist_ok=True)
    for module, path in list(upload.files.items()):
        try:
            data = _read_regular(path, MAX_SOURCE_BYTES)
        except (OSError, ValueError) as exc:
            upload.notes.append(f"Could not read {module}.py ({exc}); its functions score 0.")
            del upload.files[module]
            continue
        (exercises / f"{module}.py").write_bytes(data)
    if not upload.files:
        upload.problem = "None of the exercise files in your upload could be read. " + " ".join(upload.notes)
    return Path(dest)


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file (never through a link), refused when larger than ``limit``."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > limit:
            raise ValueError(f"{info.st_size} bytes, more than the {limit} an exercise file may have")
        return handle.read(limit + 1)[:limit]


def _note_seen(walk: _Walk, shown: str) -> None:
    if len(walk.seen) < 50:
        walk.seen.append(shown)


def _walk_dir(walk: _Walk, folder: Path, *, shown: str, depth: int, nesting: int) -> None:
    if depth > MAX_DEPTH:
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        walk.notes.append(f"Could not read the folder {shown or '/'} ({exc.strerror or exc}).")
        return
    for entry in entries:
        walk.entries += 1
        if walk.entries > MAX_ENTRIES:
            walk.truncated = True
            return
        name = entry.name
        child_shown = f"{shown}/{name}" if shown else name
        if entry.is_symlink():
            if name in EXPECTED_FILES or name == "exercises":
                walk.notes.append(f"Ignored {child_shown}: it is a link, not a file; upload the file itself.")
            continue
        if entry.is_dir(follow_symlinks=False):
            if name.startswith(".") or name in SKIPPED_DIRS:
                continue
            _walk_dir(walk, Path(entry.path), shown=child_shown, depth=depth + 1, nesting=nesting)
            continue
        if not entry.is_file(follow_symlinks=False):
            continue
        _note_seen(walk, child_shown)
        if name in EXPECTED_FILES:
            walk.candidates.setdefault((shown, folder), {})[name[:-3]] = Path(entry.path)
        elif name.lower().endswith(".zip"):
            _walk_zip(walk, Path(entry.path), shown=child_shown, nesting=nesting + 1)


def _safe_member_path(name: str) -> PurePosixPath | None:
    """A zip member's path when it stays inside the extraction folder, else None."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or not path.parts or ".." in path.parts or ":" in path.parts[0]:
        return None
    return path


def _walk_zip(walk: _Walk, archive: Path, *, shown: str, nesting: int) -> None:
    """Extract the members that matter (exercise files, nested zips) and look through them."""
    if nesting > MAX_ZIP_NESTING:
        walk.notes.append(f"Ignored {shown}: a zip inside a zip inside a zip is too deep.")
        return
    try:
        if os.stat(archive, follow_symlinks=False).st_size > MAX_ZIP_BYTES:
            walk.notes.append(f"Ignored {shown}: larger than {MAX_ZIP_BYTES >> 20} MB.")
            return
        with zipfile.ZipFile(archive) as zf:
            walk.zips += 1
            target = walk.scratch / f"zip{walk.zips}"
            for info in sorted(zf.infolist(), key=lambda i: i.filename):
                walk.entries += 1
                if walk.entries > MAX_ENTRIES:
                    walk.truncated = True
                    break
                member = _safe_member_path(info.filename)
                if member is None:
                    walk.notes.append(f"Ignored {shown}/{info.filename}: its path leaves the zip.")
                    continue
                if info.is_dir() or stat.S_ISLNK(info.external_attr >> 16):
                    continue
                if any(part.startswith(".") or part in SKIPPED_DIRS for part in member.parts[:-1]):
                    continue
                _note_seen(walk, f"{shown}/{member}")
                wanted = member.name in EXPECTED_FILES or member.name.lower().endswith(".zip")
                if not wanted:
                    continue
                limit = MAX_SOURCE_BYTES if member.name in EXPECTED_FILES else MAX_ZIP_BYTES
                if info.file_size > limit or walk.extracted_bytes + info.file_size > MAX_EXTRACTED_BYTES:
                    walk.notes.append(f"Ignored {shown}/{member}: too large ({info.file_size} bytes).")
                    continue
                with zf.open(info) as src:
                    data = src.read(limit + 1)  # the header's size can lie; the read cannot
                if len(data) > limit:
                    walk.notes.append(f"Ignored {shown}/{member}: too large.")
                    continue
                walk.extracted_bytes += len(data)
                out = target.joinpath(*member.parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
                if member.name in EXPECTED_FILES:
                    parent_shown = shown if str(member.parent) == "." else f"{shown}/{member.parent}"
                    walk.candidates.setdefault((parent_shown, out.parent), {})[member.name[:-3]] = out
                else:
                    _walk_zip(walk, out, shown=f"{shown}/{member}", nesting=nesting + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, RuntimeError, EOFError) as exc:
        walk.notes.append(f"Could not open {shown} as a zip ({exc}).")
