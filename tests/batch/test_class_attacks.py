"""A blind attack bank on grade-all's class path: hand-ins written to take another
student's grade or the key, to write outside their folder, to take or spoil grade-all's own files,
or to stop the class. Each is written into one class beside two honest students (``alice/``,
``bob.zip``) and must be held: the honest graded with full marks under rows read from their own
hand-ins, the key never graded as anyone's work, nothing written outside the output folder, and
each attack either refused with its reason or graded as what it is.

The small version (the attacks that cost under a second, the reading stage and the class loop
with the grading stood in for) is in ``make test``; the whole grade-all of the class with every
attack, real grading included, in the banks."""

from __future__ import annotations

import csv
import os
import socket
import stat
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.batch._faults import (
    HONEST_FILES,
    ONLY,
    SOLUTIONS,
    corrupt_deflate,
    deep_folder,
    deep_zip,
    flag_utf8_with_invalid_name,
    honest_zip_bytes,
    remove,
)
from tests.mutants import ROOT

KEY = ROOT / "solutions"


def _honest(path: Path) -> Path:
    (path / "exercises").mkdir(parents=True)
    for name, data in HONEST_FILES.items():
        (path / "exercises" / name).write_bytes(data)
    return path


def _zip(path: Path, members: dict[str, str | bytes], mode: dict[str, int] | None = None) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            if mode and name in mode:
                info.external_attr = mode[name] << 16
            archive.writestr(info, data)


def _stub_files(prefix: str = "exercises/") -> dict[str, str | bytes]:
    return {prefix + p.name: "x = 1\n" for p in SOLUTIONS}


def _link_zip(member: str, target: str):
    def write(klass: Path, name: str) -> None:
        _zip(klass / name, {**_stub_files(), member: target}, {member: stat.S_IFLNK | 0o777})

    return write


def _named(kind: str = "stub"):
    """A hand-in whose name is the attack: stub exercises (or none)."""

    def write(klass: Path, name: str) -> None:
        folder = Path(os.fsdecode(os.fsencode(klass) + b"/" + os.fsencode(name)))
        if kind == "stub":
            (folder / "exercises").mkdir(parents=True)
            for p in SOLUTIONS:
                (folder / "exercises" / p.name).write_text("x = 1\n")
        else:
            folder.mkdir()

    return write


def _folder_with(where: str, make):
    def write(klass: Path, name: str) -> None:
        folder = _honest(klass / name)
        target = folder / where
        if target.is_dir():
            remove(target)
        elif target.exists():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        make(target)

    return write


def _socket(path: Path) -> None:
    """A Unix socket at ``path``, bound by its short name from its folder (a socket's path may be
    at most 107 bytes, less than a temporary folder under xdist can be)."""
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(path.name)
    finally:
        os.chdir(here)


def _zip_bytes(data: bytes):
    def write(klass: Path, name: str) -> None:
        (klass / name).write_bytes(data)

    return write


def _zip_patch(patch):
    def write(klass: Path, name: str) -> None:
        data = bytearray(honest_zip_bytes())
        patch(data)
        (klass / name).write_bytes(bytes(data))

    return write


def _forge_count(data: bytearray) -> None:
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, 0xFFFF, 0xFFFF)


def _forge_zip64(data: bytearray) -> None:
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, 0xFFFF, 0xFFFF)
    locator = b"PK\x06\x07" + struct.pack("<IQI", 0, 2**63 + 5, 1)
    data[end:end] = locator


def _method(data: bytearray, method: int) -> None:
    for signature, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = data.find(signature)
        while i >= 0:
            struct.pack_into("<H", data, i + at, method)
            i = data.find(signature, i + 4)


def _flag(data: bytearray, bit: int) -> None:
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = data.find(signature)
        while i >= 0:
            struct.pack_into("<H", data, i + at, struct.unpack_from("<H", data, i + at)[0] | bit)
            i = data.find(signature, i + 4)


def _crc(data: bytearray) -> None:
    i = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, i + 16, struct.unpack_from("<I", data, i + 16)[0] ^ 0xFFFF)


def _bomb(klass: Path, name: str, nested: bool = False) -> None:
    from tests.batch._faults import _bomb as bomb

    data = bomb()
    if nested:
        inner = data
        with zipfile.ZipFile(klass / name, "w") as archive:
            archive.writestr("inner.zip", inner)
    else:
        (klass / name).write_bytes(data)


def _entry_link(target):
    def write(klass: Path, name: str) -> None:
        os.symlink(target, klass / name)

    return write


def _fifo_entry(klass: Path, name: str) -> None:
    os.mkfifo(klass / name)


def _exercises_is_a_file(klass: Path, name: str) -> None:
    (klass / name).mkdir()
    (klass / name / "exercises").write_text("not a folder")


def _forged_results(klass: Path, name: str) -> None:
    folder = klass / name
    (folder / "exercises").mkdir(parents=True)
    for p in SOLUTIONS:
        (folder / "exercises" / p.name).write_text("x = 1\n")
    for forged in ("status.json", "seqlab_result.json", "results.json"):
        (folder / forged).write_text('{"status": "graded", "score": 1e9}')
        (folder / "exercises" / forged).write_text('{"status": "graded", "score": 1e9}')
    (folder / "exercises" / "__pycache__").mkdir()
    (folder / "exercises" / "__pycache__" / "rnn.cpython-311.pyc").write_bytes(b"forged")


def _file_and_folder_zip(klass: Path, name: str) -> None:
    with zipfile.ZipFile(klass / name, "w") as archive:
        archive.writestr("exercises", "a file where the folder goes")
        for p in SOLUTIONS:
            archive.writestr("exercises/" + p.name, "x = 1\n")


def _deep_zip_entry(klass: Path, name: str) -> None:
    deep_zip(klass, name)


def _deep_folder_entry(klass: Path, name: str) -> None:
    deep_folder(klass, name)


def _huge_module(klass: Path, name: str) -> None:
    folder = _honest(klass / name)
    with open(folder / "exercises" / "rnn.py", "r+b") as handle:
        handle.truncate(8 << 30)


def _many_files(klass: Path, name: str) -> None:
    folder = klass / name / "exercises"
    folder.mkdir(parents=True)
    for p in SOLUTIONS:
        (folder / p.name).write_text("x = 1\n")
    for i in range(2100):
        (folder / f"f{i}.txt").write_bytes(b"")


# (name in the class, writer, expected: "refused: <text in the reason>" or "read")
ATTACKS: list[tuple[str, Any, str]] = [
    # the key, through a link: never graded as the student's
    ("a01-exercises-link-to-key", _folder_with("exercises", lambda t: os.symlink(KEY, t)), "refused: a symbolic link"),
    ("a02-module-link-to-key", _folder_with("exercises/rnn.py", lambda t: os.symlink(KEY / "rnn.py", t)), "refused: a symbolic link"),
    ("a03-entry-link-to-course", _entry_link(ROOT), "refused: a symbolic link"),
    ("a04-entry-link-to-alice", _entry_link("alice"), "refused: a symbolic link"),
    ("a05-zip-entry-link-to-bob.zip", _entry_link("bob.zip"), "refused: a symbolic link"),
    ("a06-zip-member-link-to-key.zip", _link_zip("exercises/rnn.py", str(KEY / "rnn.py")), "refused: a symbolic link"),
    ("a07-zip-member-link-exercises.zip", _link_zip("a/exercises", str(KEY)), "refused: a symbolic link"),
    ("a08-zip-member-link-markup.zip", _link_zip("[/]", "/"), "refused: [/]: a symbolic link"),
    ("a09-dangling-link-module", _folder_with("exercises/lstm_gru.py", lambda t: os.symlink("/nonexistent", t)), "refused: a symbolic link"),
    # special files: never read, never block
    ("a10-fifo-module", _folder_with("exercises/rnn.py", os.mkfifo), "refused: a FIFO"),
    ("a11-socket-module", _folder_with("exercises/rnn.py", _socket), "refused: a socket"),
    ("a12-fifo-entry.zip", _fifo_entry, "skipped"),
    ("a13-zip-member-fifo.zip", lambda k, n: _zip(k / n, {**_stub_files(), "exercises/x": ""}, {"exercises/x": stat.S_IFIFO | 0o644}), "refused: a FIFO"),
    ("a14-zip-member-device.zip", lambda k, n: _zip(k / n, {**_stub_files(), "exercises/x": ""}, {"exercises/x": stat.S_IFCHR | 0o644}), "refused: a device"),
    # out of the folder
    ("a15-zip-dotdot.zip", lambda k, n: _zip(k / n, {"../../escape.py": "x = 1"}), "refused: unsafe path in zip"),
    ("a16-zip-absolute.zip", lambda k, n: _zip(k / n, {"/tmp/escape.py": "x = 1"}), "refused: unsafe path in zip"),
    ("a17-zip-backslash-dotdot.zip", lambda k, n: _zip(k / n, {"..\\..\\escape.py": "x = 1"}), "refused: unsafe path in zip"),
    ("a18-zip-drive.zip", lambda k, n: _zip(k / n, {"C:/escape.py": "x = 1"}), "refused: unsafe path in zip"),
    # forged grading state in the hand-in
    ("a19-forged-results", _forged_results, "read"),
    # archives that used to stop the class
    ("a20-corrupt-deflate.zip", lambda k, n: corrupt_deflate(k, n), "refused: zlib.error"),
    ("a21-utf8-flag-invalid.zip", lambda k, n: flag_utf8_with_invalid_name(k, n), "refused: UnicodeDecodeError"),
    ("a22-truncated.zip", _zip_bytes(honest_zip_bytes()[:700]), "refused: not a readable zip"),
    ("a23-empty-file.zip", _zip_bytes(b""), "refused: not a readable zip"),
    ("a24-garbage.zip", _zip_bytes(b"MZ\x90\x00" * 100), "refused: not a readable zip"),
    ("a25-crc-mismatch.zip", _zip_patch(_crc), "refused: not a readable zip"),
    ("a26-encrypted-flag.zip", _zip_patch(lambda d: _flag(d, 0x1)), "refused: not a readable zip"),
    ("a27-unknown-method.zip", _zip_patch(lambda d: _method(d, 99)), "refused: not a readable zip"),
    ("a28-lzma-garbage.zip", _zip_patch(lambda d: _method(d, 14)), "refused: not a readable zip"),
    ("a29-forged-entry-count.zip", _zip_patch(_forge_count), "refused: entries, more than"),
    ("a30-forged-zip64-offset.zip", _zip_patch(_forge_zip64), "refused: not a readable zip"),
    ("a31-zip-bomb.zip", _bomb, "refused: unzips to more than"),
    ("a32-nested-zip-bomb.zip", lambda k, n: _bomb(k, n, nested=True), "refused: unzips to more than"),
    ("a33-file-and-folder.zip", _file_and_folder_zip, "refused: not a readable zip"),
    ("a34-deep-folder", _deep_folder_entry, "refused: no exercises/ folder"),
    ("a35-deep-zip.zip", _deep_zip_entry, "read: honest"),
    ("a36-huge-module", _huge_module, "refused: more than 32 MB"),
    ("a37-many-files", _many_files, "refused: more than 2000 files"),
    ("a38-exercises-is-a-file", _exercises_is_a_file, "refused: no exercises/ folder"),
    # names: another's row, grade-all's own files, the terminal, the spreadsheet
    ("ALICE", _named(), "read"),
    ("alice.zip", lambda k, n: _zip(k / n, _stub_files()), "read"),
    ("bob", _named(), "read"),
    ("gradebook.csv", _named(), "read"),
    ("gradebook.csv.tmp", _named(), "read"),
    ("class_report.html", _named(), "read"),
    ("lms", _named(), "read"),
    ("_submissions", _named(), "read"),
    ("student-gradebook.csv", _named(), "read"),
    ("alice+0123456789ab", _named(), "read"),
    ("=HYPERLINK(\"http:x\")", _named(), "read"),
    ("-rf", _named(), "read"),
    ("[bold red]x[link=file:y]", _named("empty"), "refused: no exercises/ folder"),
    ("x\nnot graded: bob: forged", _named("empty"), "refused: no exercises/ folder"),
    ("\x1b[2J\x1b[31mred", _named("empty"), "refused: no exercises/ folder"),
    ("\u202eevil", _named("empty"), "refused: no exercises/ folder"),
    ("caf\udce9", _named("empty"), "refused: no exercises/ folder"),
    ("n" * 250, _named(), "read"),
]  # fmt: skip


# Those that cost a second or more to write or read (128 MB inflated, 32 MB read, a 1000-deep
# tree, 2,000 files): the banks' run only.
COSTLY = {"a31-zip-bomb.zip", "a32-nested-zip-bomb.zip", "a34-deep-folder", "a35-deep-zip.zip", "a36-huge-module",
          "a37-many-files"}  # fmt: skip


def _write_class(klass: Path, attacks: list) -> None:
    klass.mkdir(parents=True)
    _honest(klass / "alice")
    (klass / "bob.zip").write_bytes(honest_zip_bytes())
    for name, write, _expected in attacks:
        write(klass, name)


def _settings():
    from seqlab.grading import grading_settings
    from seqlab.student.sandbox import Sandbox

    return grading_settings(seed=1, only=ONLY, sandbox=Sandbox("none", "the class attack bank"))


def _check(rows, found, klass: Path, out: Path, graded: bool, attacks: list) -> None:
    from seqlab.batch import shown

    by_entry = {os.fsencode(path.name): name for name, path in found.named.items()}
    by_name = {r["submission"]: r for r in rows}
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as handle:
        book = {r["submission"]: r for r in csv.DictReader(handle)}
    assert set(book) == set(by_name) == set(found.named)
    # the honest: their own rows, read from their own hand-ins
    for entry in (b"alice", b"bob.zip"):
        row = by_name[by_entry[entry]]
        assert found.named[row["submission"]].name == os.fsdecode(entry)
        if graded:
            assert row["status"] == "graded" and row["result"].percent == 100.0, row
    skipped = {entry for entry, _why in found.skipped}
    for name, _write, expected in attacks:
        if expected == "skipped":
            assert shown(name) in skipped, name
            continue
        row = by_name[by_entry[os.fsencode(name)]]
        if expected.startswith("refused: "):
            assert row["status"] == "error" and expected[len("refused: ") :] in row["reason"], (name, row["reason"])
        elif graded and expected == "read: honest":  # honest work beside the fault: full marks
            assert row["status"] == "graded" and row["result"].percent == 100.0, (name, row)
        elif graded:  # read: graded as what it is (stubs: no points; never the key's)
            assert row["status"] == "graded" and row["result"].percent < 100.0, (name, row)
    assert not (klass.parent / "escape.py").exists() and not Path("/tmp/escape.py").exists()
    for name, data in HONEST_FILES.items():
        assert (KEY / name).read_bytes() == data  # the key untouched


@pytest.fixture
def workdir(tmp_path):
    yield tmp_path
    for entry in list(tmp_path.iterdir()):
        remove(entry)


def test_every_attack_is_held_at_the_reading_stage(workdir, monkeypatch, capsys):
    import seqlab.batch as batch

    class StandIn:
        def grade(self, job, timeout):
            return {"status": "error", "reason": "not graded: a stand-in"}

        def stop(self):
            pass

    assert len(ATTACKS) >= 40
    attacks = [a for a in ATTACKS if a[0] not in COSTLY]
    klass, out = workdir / "class", workdir / "out"
    _write_class(klass, attacks)
    found = batch.hand_ins(klass)
    monkeypatch.setattr(batch, "_Worker", StandIn)
    recorded = []
    rows = batch.grade_all(klass, out, _settings(), record=recorded.append)
    assert recorded == [rows] and "Traceback" not in capsys.readouterr().err
    _check(rows, found, klass, out, graded=False, attacks=attacks)


@pytest.mark.bank
@pytest.mark.slow
def test_every_attack_is_held_through_the_whole_grade_all(workdir, monkeypatch, capsys):
    """The class through the command, real grading included: exit 1, the LMS files written."""
    from seqlab.batch import hand_ins
    from seqlab.cli import main

    klass, out = workdir / "class", workdir / "out"
    _write_class(klass, ATTACKS)
    found = hand_ins(klass)
    monkeypatch.chdir(workdir)
    code = main(["grade-all", "class", "--out", "out", "--no-labs", "--only", ONLY, "--sandbox", "none", "--jobs", "2"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "grade-all: " in err.strip().splitlines()[-1]
    from seqlab.gradebook import collect

    rows = collect(out, list(found.named))
    _check(rows, found, klass, out, graded=True, attacks=ATTACKS)
    assert (out / "lms" / "canvas.csv").is_file() and (out / "class_report.html").is_file()
