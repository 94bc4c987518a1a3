"""Where in a hand-in the exercise files are: a walk that never follows a link.

A hand-in is whatever a student hands in: the module files flat, an ``exercises/`` folder at
any depth (a repository checkout, a folder around it), or a zip of any of these, a zip inside a
zip included (an LMS's bulk download). The walk collects every folder holding module files and
picks one the same way every time: the most module files; among equals a folder named
``exercises``, then the shallowest, then the first by name. Zips are looked into only where the
folders hold no module file, so a stray archive in a checkout is never extracted.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..contract import MODULES
from .copy import MAX_ENTRIES, SubmissionError, Unzipper, refuse

MODULE_FILES = tuple(f"{module}.py" for module in MODULES)
MAX_DEPTH = 12  # folder depth looked into (exercises/ sits at depth 0 to 2 in a checkout)
MAX_ZIP_NESTING = 2  # a zip inside a zip (an LMS bulk download of a zip) is the deepest
# Folders that never hold a student's exercise files but can hold thousands of entries.
SKIPPED_DIRS = {"__pycache__", "__MACOSX", "node_modules", "site-packages", "venv", "env"}


@dataclass(frozen=True)
class Candidate:
    folder: Path  # on disk
    shown: str  # as handed in ("" for the top)
    modules: tuple[str, ...]


@dataclass
class Walk:
    display: str  # the hand-in as the user named it: messages name paths under it
    unzipper: Unzipper
    entries: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    zips: list[tuple[Path, str]] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)


def visible(name: str) -> bool:
    return not name.startswith(".") and name not in SKIPPED_DIRS


def locate(folder: Path, display: str, unzipper: Unzipper) -> tuple[Candidate, list[Candidate]]:
    """``(chosen, others)``: the folder graded and the other folders with module files, in
    ``folder`` (the hand-in, or where its zip was extracted), shown to the user as ``display``;
    zips inside it go through ``unzipper``, under the same caps as the hand-in's own zip.
    Raises SubmissionError when there is none, or where a link or another special file stands
    in for a module file or ``exercises/``."""
    walk = Walk(display, unzipper)
    _walk(walk, folder, "", 0)
    for _nesting in range(MAX_ZIP_NESTING):
        if walk.candidates or not walk.zips:
            break
        zips, walk.zips = walk.zips, []
        for archive, shown in zips:
            _walk(walk, walk.unzipper.extract(archive, f"{display}/{shown}"), shown, 0)
    if not walk.candidates:
        held = ", ".join(walk.seen[:8]) or "nothing"
        notebooks = (
            " (notebooks are not read here: hand in the .py files)"
            if any(name.endswith(".ipynb") for name in walk.seen)
            else ""
        )
        raise SubmissionError(
            f"{display}: no exercises/ folder and none of {', '.join(MODULE_FILES)} in it (it holds: {held}){notebooks}"
        )
    ranked = sorted(
        walk.candidates,
        key=lambda c: (-len(c.modules), PurePosixPath(c.shown).name != "exercises", c.shown.count("/"), c.shown),
    )
    return ranked[0], ranked[1:]


def _walk(walk: Walk, folder: Path, shown: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    modules = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        walk.entries += 1
        if walk.entries > MAX_ENTRIES:
            raise SubmissionError(f"{walk.display}: more than {MAX_ENTRIES} files and folders to look through")
        name, mode = entry.name, entry.stat(follow_symlinks=False).st_mode
        child = f"{shown}/{name}" if shown else name
        if len(walk.seen) < 50 and visible(name):
            walk.seen.append(child)
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            if name == "exercises" or name in MODULE_FILES:
                raise refuse(f"{walk.display}/{child}", mode)  # standing in for what would be graded
            continue  # never followed, never read
        if stat.S_ISDIR(mode):
            if visible(name):
                _walk(walk, Path(entry.path), child, depth + 1)
        elif name in MODULE_FILES:
            modules.append(name[:-3])
        elif name.lower().endswith(".zip"):
            walk.zips.append((Path(entry.path), child))
    if modules:
        walk.candidates.append(Candidate(folder, shown, tuple(m for m in MODULES if m in modules)))
