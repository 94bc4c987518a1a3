"""Write a rendered, leak-checked release into a folder, touching only its own files.

The manifest (``.release-manifest``) lists what each release wrote with its checksum, so a
file an earlier release wrote and this one does not is removed, and anything else in the
folder (``.git/``) is left alone. Unchanged files are not rewritten: "0 written" after a
release that changed nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..paths import SOLUTIONS_DIR
from .leaks import LeakError, ReleaseError, Secrets, collect_secrets, read_tree, scan
from .render import render_release

MANIFEST = ".release-manifest"


def manifest_text(files: dict[str, str]) -> str:
    lines = ["# Files of this release and their SHA-256; written by the release step, do not edit."]
    lines += [f"{hashlib.sha256(files[p].encode('utf-8')).hexdigest()}  {p}" for p in sorted(files)]
    return "\n".join(lines) + "\n"


def _old_manifest(out_dir: Path) -> list[str] | None:
    path = out_dir / MANIFEST
    if not path.is_file():
        return None
    return [
        line.split("  ", 1)[1]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#") and "  " in line
    ]


@dataclass
class ReleaseReport:
    out_dir: Path
    files: dict[str, str]
    written: list[str]
    removed: list[str]


def release(out_dir: Path, *, force: bool = False, secrets: Secrets | None = None, **render) -> ReleaseReport:
    """Render, leak-check and write the student repository into ``out_dir``.

    Only files of the release are touched: a file an earlier release wrote and this one does not
    is removed (the manifest lists them), anything else already there (a .git folder) is kept. A
    folder that holds other files and no manifest is refused unless ``force``.
    """
    out_dir = Path(out_dir)
    files = render_release(**render)
    secrets = secrets or collect_secrets(solutions_dir=render.get("solutions_dir", SOLUTIONS_DIR))
    leaks = scan(files, secrets)
    if leaks:
        raise LeakError(leaks, "release stopped, nothing written: ")
    if out_dir.exists() and not out_dir.is_dir():
        raise ReleaseError(f"{out_dir}: exists and is not a folder")
    old = _old_manifest(out_dir) if out_dir.is_dir() else None
    if old is None and out_dir.is_dir() and not force:
        foreign = [p for p in read_tree(out_dir) if p not in files]
        if foreign:
            raise ReleaseError(
                f"{out_dir}: not empty and not an earlier release (e.g. {foreign[0]}); "
                f"use an empty folder, or --force to write into it"
            )
    written, removed = [], []
    for rel, text in files.items():
        target = out_dir / rel
        data = text.encode("utf-8")
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(rel)
    for rel in old or []:
        if rel not in files and (out_dir / rel).is_file():
            (out_dir / rel).unlink()
            removed.append(rel)
    manifest = manifest_text(files).encode("utf-8")
    if not (out_dir / MANIFEST).is_file() or (out_dir / MANIFEST).read_bytes() != manifest:
        (out_dir / MANIFEST).write_bytes(manifest)
    # Files already in the folder ship too when it is pushed: check the whole tree, not only ours.
    leaks = scan(read_tree(out_dir), secrets)
    if leaks:
        raise LeakError(leaks, f"{out_dir} holds files that must not ship (remove them before pushing): ")
    return ReleaseReport(out_dir, files, written, removed)
