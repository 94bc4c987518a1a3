"""seqlab/submission.py: every shape a submission comes in read into one plain folder, and what
is not a plain file (a link, a FIFO) refused with the entry named, never followed."""

from __future__ import annotations

import os
import zipfile

import pytest

from seqlab.submission import MODULE_FILES, SubmissionError, is_submission, opened, read_submission, source_of
from tests.mutants import ROOT, make_submission


def _read(source, tmp_path) -> set[str]:
    copy = read_submission(source, tmp_path / "copy").folder
    return {p.name for p in (copy / "exercises").iterdir()}


def _zip(folder, archive, prefix=""):
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


@pytest.mark.parametrize("shape", ["folder", "flat", "zip", "zip-of-flat", "zip-of-checkout", "checkout"])
def test_every_shape_gives_one_exercises_folder(tmp_path, shape):
    folder = make_submission(tmp_path / "alice")
    if shape in ("flat", "zip-of-flat"):
        for path in (folder / "exercises").iterdir():
            path.rename(folder / path.name)
        (folder / "exercises").rmdir()
        (folder / "README.md").write_text("not read")
    if shape == "checkout":
        folder.rename(tmp_path / "alice-main")
        (tmp_path / "alice").mkdir()
        (tmp_path / "alice-main").rename(tmp_path / "alice" / "alice-main")
    source = {
        "zip": lambda: _zip(folder, tmp_path / "alice.zip"),
        "zip-of-flat": lambda: _zip(folder, tmp_path / "alice.zip"),
        "zip-of-checkout": lambda: _zip(folder, tmp_path / "alice.zip", prefix="alice-main/"),
    }.get(shape, lambda: folder)()
    assert set(MODULE_FILES) <= _read(source, tmp_path)
    assert "README.md" not in _read(source, tmp_path)


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_exercises_linked_to_the_course_is_refused_not_followed(tmp_path, kind):
    """The course beside the student's checkout: exercises -> ../../solutions would score the
    references as the student's work."""
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    for path in (ROOT / "solutions").glob("*.py"):
        (course / "solutions" / path.name).write_text(path.read_text())
    alice = tmp_path / "checkouts" / "alice"
    alice.mkdir(parents=True)
    aim = course / "solutions"
    (alice / "exercises").symlink_to(os.path.relpath(aim, alice) if kind == "relative" else aim)
    with pytest.raises(SubmissionError, match=r"alice/exercises: a symbolic link, not followed"):
        read_submission(alice, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_a_link_fifo_or_socket_inside_is_refused_with_its_name(tmp_path):
    for name, make in (
        ("notes.py", lambda p: p.symlink_to("/etc/passwd")),
        ("rnn.py", os.mkfifo),
    ):
        folder = make_submission(tmp_path / name)
        (folder / "exercises" / name).unlink(missing_ok=True)
        make(folder / "exercises" / name)
        with pytest.raises(SubmissionError, match=rf"exercises/{name}: a (symbolic link|FIFO)") as refused:
            read_submission(folder, tmp_path / "copy")
        assert str(folder) in str(refused.value)
    flat = tmp_path / "flat"
    flat.mkdir()
    os.mkfifo(flat / "rnn.py")  # reading it would block the grader for good
    with pytest.raises(SubmissionError, match=r"flat/rnn.py: a FIFO"):
        read_submission(flat, tmp_path / "copy")


def test_zip_members_that_leave_or_are_links_are_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as zf:
        zf.writestr("../../escape.py", "x = 1")
    with pytest.raises(SubmissionError, match="unsafe path in zip"):
        read_submission(tmp_path / "evil.zip", tmp_path / "copy")
    link = zipfile.ZipInfo("exercises/rnn.py")
    link.external_attr = (0o120777 << 16) | 0x20  # how zip -y stores a symbolic link
    with zipfile.ZipFile(tmp_path / "link.zip", "w") as zf:
        zf.writestr(link, "/course/solutions/rnn.py")
    with pytest.raises(SubmissionError, match=r"link.zip/exercises/rnn.py: a symbolic link"):
        read_submission(tmp_path / "link.zip", tmp_path / "copy")
    assert not (tmp_path.parent / "escape.py").exists()


def test_what_is_not_a_submission_says_what_it_is(tmp_path):
    with pytest.raises(SubmissionError, match=r"nope: does not exist"):
        read_submission(tmp_path / "nope", tmp_path / "copy")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(SubmissionError, match=r"notes.txt: not a folder or a .zip"):
        read_submission(tmp_path / "notes.txt", tmp_path / "copy")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionError, match=r"empty: no exercises/ folder and none of optimizers.py, rnn.py"):
        read_submission(tmp_path / "empty", tmp_path / "copy")
    assert not is_submission(tmp_path / "notes.txt") and not is_submission(tmp_path / ".DS_Store")
    assert is_submission(tmp_path / "empty")


def test_the_copy_is_bounded_and_leaves_compiled_files_behind(tmp_path, monkeypatch):
    import seqlab.submission.copy as reader

    folder = make_submission(tmp_path / "alice")
    (folder / "exercises" / "__pycache__").mkdir()
    (folder / "exercises" / "__pycache__" / "rnn.cpython-311.pyc").write_bytes(b"forged")
    assert "__pycache__" not in _read(folder, tmp_path)
    monkeypatch.setattr(reader, "COPY_LIMIT_ENTRIES", 3)
    with pytest.raises(SubmissionError, match="more than 3 files"):
        read_submission(folder, tmp_path / "copy")
    monkeypatch.setattr(reader, "COPY_LIMIT_ENTRIES", 100)
    monkeypatch.setattr(reader, "COPY_LIMIT_BYTES", 1000)
    with pytest.raises(SubmissionError, match="more than 0 MB"):
        read_submission(folder, tmp_path / "copy")


def test_a_copy_in_hand_is_not_copied_again(tmp_path):
    folder = make_submission(tmp_path / "alice")
    with opened(folder) as copy:
        assert copy != folder and source_of(copy) == folder
        with opened(copy) as again:
            assert again == copy
    assert not copy.exists()


def _topics(dest, names=MODULE_FILES, source=ROOT / "solutions"):
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        (dest / name).write_text((source / name).read_text())
    return dest


def test_a_checkout_at_any_depth_and_which_folder_is_graded(tmp_path):
    repo = tmp_path / "sub" / "hw-seq-alice-main"
    _topics(repo / "tests", ["attention.py"], ROOT / "exercises")  # a stray copy elsewhere
    _topics(repo / "src" / "exercises")
    (repo / ".git").mkdir()
    (repo / ".git" / "rnn.py").write_text("raise SystemExit")  # never looked at
    reading = read_submission(tmp_path / "sub", tmp_path / "copy")
    assert (reading.folder / "exercises" / "rnn.py").read_text() == (ROOT / "solutions" / "rnn.py").read_text()
    assert reading.notes[0].startswith("Graded the files in hw-seq-alice-main/src/exercises: optimizers.py")
    assert "Also found exercise files in hw-seq-alice-main/tests; those were not graded." in reading.notes
    # among folders with as many files, exercises/ wins, then the shallowest
    _topics(tmp_path / "tie" / "backup", source=ROOT / "exercises")
    _topics(tmp_path / "tie" / "work" / "exercises")
    assert "in work/exercises:" in read_submission(tmp_path / "tie", tmp_path / "copy").notes[0]


def test_a_zip_inside_a_zip_inside_the_hand_in(tmp_path):
    inner = _zip(_topics(tmp_path / "repo" / "exercises").parent, tmp_path / "inner.zip", prefix="hw/")
    (tmp_path / "sub").mkdir()
    with zipfile.ZipFile(tmp_path / "sub" / "download.zip", "w") as zf:
        zf.write(inner, "alice/submission.zip")
    reading = read_submission(tmp_path / "sub", tmp_path / "copy")
    assert "in download.zip/alice/submission.zip/hw/exercises:" in reading.notes[0]
    assert set(MODULE_FILES) <= {p.name for p in (reading.folder / "exercises").iterdir()}


def test_missing_modules_are_noted_and_the_rest_graded(tmp_path):
    _topics(tmp_path / "sub", ["rnn.py", "attention.py"])
    reading = read_submission(tmp_path / "sub", tmp_path / "copy")
    assert any(n.startswith("Missing from the top of the hand-in: optimizers.py, lstm_gru.py") for n in reading.notes)


def test_a_link_standing_in_for_a_module_anywhere_is_refused(tmp_path):
    sub = _topics(tmp_path / "sub" / "deep", [n for n in MODULE_FILES if n != "attention.py"])
    (sub / "attention.py").symlink_to(ROOT / "solutions" / "attention.py")
    with pytest.raises(SubmissionError, match=r"sub/deep/attention.py: a symbolic link, not followed"):
        read_submission(tmp_path / "sub", tmp_path / "copy")
    (sub / "attention.py").unlink()
    (tmp_path / "sub" / "docs").symlink_to("/etc")  # a link that stands in for nothing: unread
    assert read_submission(tmp_path / "sub", tmp_path / "copy").folder.is_dir()


def test_nothing_to_grade_says_what_the_hand_in_held(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "homework.ipynb").write_text("{}")
    with pytest.raises(SubmissionError, match=r"it holds: homework.ipynb\) \(notebooks are not read here"):
        read_submission(tmp_path / "sub", tmp_path / "copy")
    (tmp_path / "sub" / "hw.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SubmissionError, match=r"sub/hw.zip: not a readable zip"):
        read_submission(tmp_path / "sub", tmp_path / "copy")


def test_the_extraction_cap_counts_a_zip_and_the_zips_inside_it_together(tmp_path, monkeypatch):
    import seqlab.submission.copy as reader

    inner = _zip(_topics(tmp_path / "repo" / "exercises").parent, tmp_path / "inner.zip")
    with zipfile.ZipFile(tmp_path / "outer.zip", "w") as zf:
        zf.write(inner, "inner.zip")
    size = inner.stat().st_size
    monkeypatch.setattr(reader, "MAX_EXTRACTED_BYTES", size * 3 // 2)  # stored, not deflated: each alone fits
    with pytest.raises(SubmissionError, match="unzips to more than"):
        read_submission(tmp_path / "outer.zip", tmp_path / "copy")
