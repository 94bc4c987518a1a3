"""Bad hand-ins for grade-all, as files on disk: the cases that once stopped a class, one by one, and the pieces
the fault-injection bank (test_fault_injection.py) draws from. Each writes one entry into a class
folder and returns its name there (bytes where the name is not UTF-8)."""

from __future__ import annotations

import functools
import io
import os
import struct
import subprocess
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from tests.mutants import ROOT, make_submission

SOLUTIONS = sorted((ROOT / "solutions").glob("*.py"))
# The honest hand-ins' files, read once: the tree's solutions/ may change while a bank runs, and
# an honest copy is checked against what was handed in.
HONEST_FILES = {path.name: path.read_bytes() for path in SOLUTIONS}
ONLY = "attention.causal_mask"  # one cheap function: a class graded in seconds


def honest_zip_bytes(prefix: str = "exercises/", method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """The reference solutions zipped as a student would hand them in."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in HONEST_FILES.items():
            archive.writestr(prefix + name, data)
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


# --- generated bad hand-ins (test_fault_injection.py) ------------------------------------------

HONEST = {"honest0": "folder", "honest1.zip": "zip"}  # the honest class: the reference solutions
MODULE_NAMES = [path.name for path in SOLUTIONS]
# Names a hand-in may take to collide with something: grade-all's own outputs and work folder,
# the honest students' names up to case and suffix, a renamed name's shape, markup.
COLLIDING_NAMES = [
    "gradebook.csv", "gradebook.csv.tmp", "class_report.html", "class_report.md", "similarity", "lms",
    "LMS", "_submissions", "student-gradebook.csv", "HONEST0", "honest0.zip", "honest1", "Honest1.ZIP",
    "honest0+0123456789ab", "[/]", "[bold]x", ":smile:", "-x", "=1+1", "a b", "x\nnew line", "\x1b[31mred",
]  # fmt: skip
ENCODINGS = ["utf-8", "latin-1", "cp437", "cp1252", "shift_jis", "utf-16-le", "koi8-r"]
KINDS = (
    "flipped-zip", "truncated-zip", "garbage-zip", "raw-names-zip", "special-member-zip", "deep", "huge-module",
    "huge-zip", "bomb", "many-entries-zip", "nested-zip", "link-entry", "link-inside", "fifo", "odd-name",
)  # fmt: skip
LINK_TARGETS = ["/", "/etc/passwd", "../honest0", "../honest0/exercises", str(ROOT / "solutions"), "missing"]


@functools.cache
def _honest_zip() -> bytes:
    return honest_zip_bytes()


@functools.cache
def _bomb() -> bytes:
    """A zip whose one member inflates past the reader's cap (128 MB of zeros, ~130 kB zipped)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("exercises/rnn.py", "w") as member:
        for _ in range(130):
            member.write(b"\0" * (1 << 20))
    return buffer.getvalue()


def _raw_names_zip(members: list[tuple[bytes, bool, bytes]]) -> bytes:
    """A zip whose member names are the given bytes as they are, each with or without the UTF-8
    flag: zipfile writes names it encodes itself, so each is written as a placeholder of the same
    length and swapped in the bytes after."""
    buffer = io.BytesIO()
    placeholders = []
    with zipfile.ZipFile(buffer, "w") as archive:
        for i, (raw, _flag, content) in enumerate(members):
            holder = (f"{i:04d}" + "q" * max(0, len(raw) - 4))[: max(len(raw), 4)].encode()
            placeholders.append(holder)
            archive.writestr(holder.decode(), content)
    data = bytearray(buffer.getvalue())
    for (raw, flag, _content), holder in zip(members, placeholders):
        raw = raw if len(raw) == len(holder) else raw.ljust(len(holder), b"_")
        for signature, name_at, flag_at in ((b"PK\x03\x04", 30, 6), (b"PK\x01\x02", 46, 8)):
            i = data.find(signature)
            while i >= 0:
                length = struct.unpack_from("<H", data, i + name_at - (4 if name_at == 30 else 18))[0]
                if bytes(data[i + name_at : i + name_at + length]) == holder:
                    data[i + name_at : i + name_at + length] = raw
                    bits = struct.unpack_from("<H", data, i + flag_at)[0]
                    struct.pack_into("<H", data, i + flag_at, bits | 0x800 if flag else bits & ~0x800)
                i = data.find(signature, i + 4)
    return bytes(data)


def _write_honest(path: Path, shape: str) -> None:
    if shape == "zip":
        path.write_bytes(_honest_zip())
    else:
        (path / "exercises").mkdir(parents=True)
        for name, data in HONEST_FILES.items():
            (path / "exercises" / name).write_bytes(data)


@dataclass(frozen=True)
class Fault:
    """One generated bad hand-in: ``kind`` and what it needs; :meth:`write` puts it in a class
    folder under ``name`` (bytes: any name a file system takes)."""

    kind: str
    name: bytes
    params: tuple = ()

    def write(self, klass: Path) -> None:
        path = Path(os.fsdecode(os.fsencode(klass) + b"/" + self.name))
        kind, p = self.kind, self.params
        if kind == "flipped-zip":
            data = bytearray(_honest_zip())
            for at, xor in p:
                data[at % len(data)] ^= xor
            path.write_bytes(bytes(data))
        elif kind == "truncated-zip":
            path.write_bytes(_honest_zip()[: p[0] % len(_honest_zip())])
        elif kind == "garbage-zip":
            path.write_bytes(p[0])
        elif kind == "raw-names-zip":
            path.write_bytes(_raw_names_zip(list(p)))
        elif kind == "special-member-zip":
            with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as archive:
                warnings.simplefilter("ignore")  # a duplicate member name is one of the faults
                for member, mode, content in p:
                    info = zipfile.ZipInfo(member)
                    info.external_attr = mode << 16
                    archive.writestr(info, content)
        elif kind == "deep":
            depth, zipped, honest = p
            if zipped:
                with zipfile.ZipFile(path, "w") as archive:
                    archive.writestr("d/" * depth + "x.py", "x = 1")
                    if honest:
                        for source in SOLUTIONS:
                            archive.writestr("exercises/" + source.name, source.read_text())
            else:
                _write_honest(path, "folder") if honest else path.mkdir()
                deep_tree(path / "exercises" / "deeper" if honest else path, depth)
        elif kind == "huge-module":
            make_submission(path)
            with open(path / "exercises" / p[1], "r+b") as handle:
                handle.truncate(p[0])  # sparse: no disk used
        elif kind == "huge-zip":
            with open(path, "wb") as handle:
                handle.truncate(p[0])
        elif kind == "bomb":
            path.write_bytes(_bomb())
        elif kind == "many-entries-zip":
            data = bytearray(_honest_zip())
            end = data.rfind(b"PK\x05\x06")
            struct.pack_into("<HH", data, end + 8, p[0], p[0])
            path.write_bytes(bytes(data))
        elif kind == "nested-zip":
            depth, honest = p
            data = _honest_zip() if honest else b"PK\x05\x06" + b"\0" * 18
            for level in range(depth):
                buffer = io.BytesIO()
                with zipfile.ZipFile(buffer, "w") as archive:
                    archive.writestr(f"level{level}.zip", data)
                data = buffer.getvalue()
            path.write_bytes(data)
        elif kind == "link-entry":
            os.symlink(p[0], path)
        elif kind == "link-inside":
            where, target = p
            make_submission(path)
            link = path / where
            if link.exists() or link.is_symlink():
                remove(link)
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, link)
        elif kind == "fifo":
            if p[0] == "entry":
                os.mkfifo(path)
            else:
                make_submission(path)
                (path / "exercises" / p[0]).unlink()
                os.mkfifo(path / "exercises" / p[0])
        elif kind == "odd-name":
            _write_honest(path, p[0]) if p[0] != "empty" else path.mkdir()
        else:  # pragma: no cover - a kind above without its writer
            raise AssertionError(kind)


def _file_name(raw: bytes) -> bytes:
    """``raw`` as a name a folder can hold: no ``/`` or NUL, 1 to 200 bytes, not ``.``/``..``."""
    raw = raw.replace(b"/", b"_").replace(b"\0", b"_")[:200] or b"_"
    return raw + b"_" if raw in (b".", b"..") else raw


@st.composite
def faults(draw, index: int = 0, cheap: bool = False) -> Fault:
    """One bad hand-in of any kind above, named ``bad<index>`` (``.zip`` where it is one) unless
    its name is the fault. ``cheap``: none that costs a second to write or read (the bomb: 128 MB
    inflated; a tree over 60 deep)."""
    kind = draw(st.sampled_from([k for k in KINDS if not (cheap and k == "bomb")]))
    plain = f"bad{index}".encode()
    size = len(_honest_zip())
    if kind == "flipped-zip":
        flips = draw(st.lists(st.tuples(st.integers(0, size - 1), st.integers(1, 255)), min_size=1, max_size=12))
        return Fault(kind, plain + b".zip", tuple(flips))
    if kind == "truncated-zip":
        return Fault(kind, plain + b".zip", (draw(st.integers(0, size - 1)),))
    if kind == "garbage-zip":
        return Fault(kind, plain + b".zip", (draw(st.binary(max_size=300)),))
    if kind == "raw-names-zip":
        text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=20)
        encoded = st.tuples(text, st.sampled_from(ENCODINGS)).map(lambda te: te[0].encode(te[1], "replace"))
        name = st.one_of(
            encoded, st.binary(min_size=1, max_size=30), st.sampled_from([m.encode() for m in MODULE_NAMES])
        )
        prefix = st.sampled_from([b"", b"exercises/", b"a/b/exercises/"])
        member = st.tuples(st.tuples(prefix, name).map(b"".join), st.booleans(), st.binary(max_size=50))
        return Fault(kind, plain + b".zip", tuple(draw(st.lists(member, min_size=1, max_size=6))))
    if kind == "special-member-zip":
        import stat

        names = st.sampled_from(
            ["exercises", "exercises/rnn.py", "rnn.py", "[/]", "../up.py", "/abs.py", "C:x.py", "a\\..\\..\\b.py"]
        )
        modes = st.sampled_from(
            [
                stat.S_IFLNK | 0o777,
                stat.S_IFIFO | 0o644,
                stat.S_IFCHR,
                stat.S_IFBLK,
                stat.S_IFSOCK,
                0,
                stat.S_IFREG | 0o644,
            ]
        )
        member = st.tuples(names, modes, st.sampled_from(["/", "x = 1", str(ROOT / "solutions")]))
        return Fault(kind, plain + b".zip", tuple(draw(st.lists(member, min_size=1, max_size=4))))
    if kind == "deep":
        depth = draw(st.integers(13, 60 if cheap else 1000))  # the 1000-deep case is test_class_faults'
        zipped, honest = draw(st.booleans()), draw(st.booleans())
        return Fault(kind, plain + (b".zip" if zipped else b""), (depth, zipped, honest))
    if kind == "huge-module":
        return Fault(kind, plain, (draw(st.integers(33 << 20, 8 << 30)), draw(st.sampled_from(MODULE_NAMES))))
    if kind == "huge-zip":
        return Fault(kind, plain + b".zip", (draw(st.integers(145 << 20, 8 << 30)),))
    if kind == "bomb":
        return Fault(kind, plain + b".zip")
    if kind == "many-entries-zip":
        return Fault(kind, plain + b".zip", (draw(st.integers(20_001, 0xFFFF)),))
    if kind == "nested-zip":
        return Fault(kind, plain + b".zip", (draw(st.integers(1, 5)), draw(st.booleans())))
    if kind == "link-entry":
        return Fault(kind, plain + draw(st.sampled_from([b"", b".zip"])), (draw(st.sampled_from(LINK_TARGETS)),))
    if kind == "link-inside":
        where = draw(st.sampled_from(["exercises", "exercises/rnn.py", "exercises/sub", "[/]", "notes.txt"]))
        return Fault(kind, plain, (where, draw(st.sampled_from(LINK_TARGETS))))
    if kind == "fifo":
        where = draw(st.sampled_from(["entry", *MODULE_NAMES]))
        return Fault(kind, plain + b".zip" if where == "entry" else plain, (where,))
    # odd-name: an honest-looking or empty hand-in under a name that is itself the fault
    text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30)
    encoded = st.tuples(text, st.sampled_from(ENCODINGS)).map(lambda te: te[0].encode(te[1], "replace"))
    raw = draw(
        st.one_of(encoded, st.binary(min_size=1, max_size=60), st.sampled_from([n.encode() for n in COLLIDING_NAMES]))
    )
    shape = draw(st.sampled_from(["folder", "zip", "empty"]))
    name = _file_name(raw)
    if shape == "zip" and not name.lower().endswith(b".zip"):
        name = _file_name(name[:196] + b".zip")
    return Fault(kind, name, (shape,))


@st.composite
def classes(draw, min_bad: int = 1, max_bad: int = 6, cheap: bool = False) -> list[Fault]:
    """The bad hand-ins of one class, their names unique (beside the honest ones)."""
    count = draw(st.integers(min_bad, max_bad))
    found: list[Fault] = []
    taken = {name.encode() for name in HONEST}
    for index in range(count):
        fault = draw(faults(index, cheap))
        if fault.name in taken:
            continue
        taken.add(fault.name)
        found.append(fault)
    return found


def write_class(klass: Path, bad: list[Fault]) -> dict[str, Path]:
    """The honest class and ``bad`` in ``klass``; returns the honest hand-ins by their names."""
    klass.mkdir(parents=True, exist_ok=True)
    honest = {}
    for name, shape in HONEST.items():
        _write_honest(klass / name, shape)
        honest[name] = klass / name
    for fault in bad:
        fault.write(klass)
    return honest
