"""Bad hand-ins for grade-all, as files on disk: the cases of issue 39 one by one, and the pieces
the fault-injection bank (test_fault_injection.py) draws from. Each writes one entry into a class
folder and returns its name there (bytes where the name is not UTF-8)."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import zipfile
from pathlib import Path

from tests.mutants import ROOT, make_submission

SOLUTIONS = sorted((ROOT / "solutions").glob("*.py"))
ONLY = "attention.causal_mask"  # one cheap function: a class graded in seconds


def honest_zip_bytes(prefix: str = "exercises/", method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """The reference solutions zipped as a student would hand them in."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for path in SOLUTIONS:
            archive.writestr(prefix + path.name, path.read_text())
    return buffer.getvalue()


def first_data_offset(data: bytes) -> int:
    """Where the first member's compressed bytes start (after its local header)."""
    name_len, extra_len = struct.unpack_from("<HH", data, 26)
    return 30 + name_len + extra_len


def corrupt_deflate(klass: Path, name: str = "corrupt.zip") -> str:
    """A zip whose first member's deflate stream is garbage (zlib.error while reading it)."""
    data = bytearray(honest_zip_bytes())
    start = first_data_offset(bytes(data))
    for i in range(start, start + 40):
        data[i] ^= 0x5A
    (klass / name).write_bytes(bytes(data))
    return name


def flag_utf8_with_invalid_name(klass: Path, name: str = "badutf.zip") -> str:
    """A zip whose member names carry the UTF-8 flag (bit 11) and one of them is not UTF-8
    (UnicodeDecodeError while zipfile reads the central directory)."""
    data = honest_zip_bytes().replace(b"exercises/rnn.py", b"exercises/\xff\xfeu.py")
    data = bytearray(data)
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = data.find(signature)
        while i >= 0:
            struct.pack_into("<H", data, i + at, struct.unpack_from("<H", data, i + at)[0] | 0x800)
            i = data.find(signature, i + 4)
    (klass / name).write_bytes(bytes(data))
    return name


def deep_tree(base: Path, depth: int = 1000) -> None:
    """``depth`` folders one inside another under ``base``, made through descriptors (a path
    that long is more than the kernel takes in one piece)."""
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def deep_folder(klass: Path, name: str = "deep", honest: bool = False) -> str:
    """A hand-in holding a 1000-deep tree: beside its exercises when ``honest``, alone if not."""
    if honest:
        make_submission(klass / name)
        deep_tree(klass / name / "exercises" / "deeper")
    else:
        deep_tree(klass / name)
    return name


def deep_zip(klass: Path, name: str = "deepzip.zip") -> str:
    """A zip with a member 1000 folders deep beside honest exercises."""
    with zipfile.ZipFile(klass / name, "w") as archive:
        archive.writestr("d/" * 1000 + "x.py", "x = 1")
        for path in SOLUTIONS:
            archive.writestr("exercises/" + path.name, path.read_text())
    return name


def link_member_zip(klass: Path, name: str = "linked.zip", member: str = "[/]") -> str:
    """A zip holding a symbolic link named ``member`` (console markup when printed)."""
    with zipfile.ZipFile(klass / name, "w") as archive:
        info = zipfile.ZipInfo(member)
        info.external_attr = 0o120777 << 16
        archive.writestr(info, "/")
        for path in SOLUTIONS:
            archive.writestr("exercises/" + path.name, path.read_text())
    return name


def non_utf8_name(klass: Path, raw: bytes = b"caf\xe9", honest: bool = False) -> bytes:
    """A hand-in folder whose name is not UTF-8 (Latin-1 here)."""
    folder = Path(os.fsdecode(os.fsencode(klass) + b"/" + raw))
    if honest:
        make_submission(folder)
    else:
        (folder / "exercises").mkdir(parents=True)
    return raw


def remove(path: Path) -> None:
    """Remove a tree holding a deep_tree: Python 3.11's shutil.rmtree recurses once per folder
    and stops on a RecursionError at 1000 (pytest's cleanup of old temporary folders included,
    in any later run on this machine), so it goes here, by rm."""
    subprocess.run(["rm", "-rf", "--", os.fspath(path)], check=True)
