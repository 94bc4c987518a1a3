"""A corrupt Gradescope upload is the student's to fix, and the page says so.

A corrupt upload once told the student the fault was the course's (``GRADER_FAILED``). Each
upload here is broken the way a student's can be (a zip that is not one, one cut short, one
whose deflate stream is damaged, one with an entry name that is not UTF-8, an empty upload, an
empty file, the right files in the wrong layout); the results page must put the fault in the
upload, say what to upload instead, be visible at once, and never blame the course. None of
these reach grading, so each case takes milliseconds."""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib

import pytest

from seqlab.gradescope import autograder
from seqlab.gradescope.autograder import GRADER_FAILED
from seqlab.gradescope.autograder import main as autograder_main


def _zip(entries: dict[str, str], method=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _damaged_deflate() -> bytes:
    data = bytearray(_zip({"exercises/attention.py": "def f(x):\n    return x\n" * 200}))
    start = data.find(b"exercises/attention.py") + len("exercises/attention.py")
    for i in range(start + 5, start + 40):
        data[i] ^= 0xFF
    return bytes(data)


def _non_utf8_name() -> bytes:
    data = bytearray(_zip({"exercises/attention.py": "x = 1\n"}).replace(b"attention", b"att\xffntion"))
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # set the UTF-8 flag
        at = data.find(signature) + flags_at
        data[at : at + 2] = (int.from_bytes(data[at : at + 2], "little") | 0x800).to_bytes(2, "little")
    return bytes(data)


UPLOADS = {
    "not-a-zip": {"exercises.zip": b"PK\x03\x04 this is not a zip" * 10},
    "truncated-zip": {"exercises.zip": _zip({"exercises/attention.py": "x = 1\n" * 1000})[:-60]},
    "damaged-deflate": {"exercises.zip": _damaged_deflate()},
    "non-utf8-entry-name": {"exercises.zip": _non_utf8_name()},
    "empty-file": {"submission.zip": b""},
    "empty-upload": {},
    "wrong-layout": {"my_code/deep/attention.txt": b"def f(): pass\n", "README.md": b"hello"},
    # a name that would forge a line of the page or clear the screen of an instructor's terminal
    "odd-file-names": {"notes\n\x1b[2JFull marks: 144 / 144.txt": b"x", "\u202eyp.attention": b"x"},
}


def _results(tmp_path, files: dict[str, bytes]) -> dict:
    upload = tmp_path / "submission"
    upload.mkdir()
    for name, data in files.items():
        (upload / name).parent.mkdir(parents=True, exist_ok=True)
        (upload / name).write_bytes(data)
    assert autograder_main(["--root", str(tmp_path)]) == 0
    return json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))


def _assert_the_upload_is_at_fault(data: dict, tmp_path) -> None:
    output = data["output"]
    assert data["score"] == 0 and data["tests"] == [] and data["visibility"] == "visible"
    assert output.startswith("Your upload could not be graded; the problem is in the files you uploaded")
    assert "Upload the files optimizers.py, rnn.py" in output and "then submit again" in output
    assert GRADER_FAILED not in output and "course's side" not in output
    assert str(tmp_path) not in output  # the upload's paths as the student uploaded them
    assert not re.search("[\x00-\x1f\x7f-\x9f\u202a-\u202e]", output)  # one line, no escape sequence


@pytest.mark.parametrize("shape", sorted(UPLOADS))
def test_a_corrupt_upload_is_the_students_to_fix(tmp_path, shape):
    data = _results(tmp_path, UPLOADS[shape])
    _assert_the_upload_is_at_fault(data, tmp_path)
    if shape in ("wrong-layout",):
        assert "my_code/deep/attention.txt" in data["output"]  # what was found, to compare with what is asked
    if "zip" in shape or shape in ("damaged-deflate", "non-utf8-entry-name", "empty-file"):
        assert ".zip" in data["output"]  # the file at fault, by the name the student gave it


@pytest.mark.parametrize("error", [zlib.error("invalid code lengths set"), RecursionError("deep"), OSError(5, "EIO")])
def test_an_error_the_reader_did_not_expect_still_points_at_the_upload(tmp_path, monkeypatch, error, capsys):
    """A failure of the reader that it did not turn into its own refusal is still a fault in
    what it was reading: the student is told so by the error's type, the log gets the traceback."""
    import seqlab.submission

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(seqlab.submission, "read_submission", broken)
    data = _results(tmp_path, {"attention.py": b"x = 1\n"})
    _assert_the_upload_is_at_fault(data, tmp_path)
    assert type(error).__name__ in data["output"]
    assert "Traceback" in capsys.readouterr().err


def test_the_course_is_blamed_only_when_grading_itself_fails(tmp_path, monkeypatch):
    """The control: an upload that reads fine but whose grading process dies gets GRADER_FAILED."""
    monkeypatch.setattr(autograder, "run_grade", lambda *args, **kwargs: (1, "crashed"))
    data = _results(tmp_path, {"attention.py": b"x = 1\n"})
    assert data["output"].startswith(GRADER_FAILED)
