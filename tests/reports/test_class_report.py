"""The class report an instructor uses: a per-student table linking each report, readable
per-function distributions, and the common named mistakes with the students who made them."""

from __future__ import annotations

from seqlab.gradebook import class_summary, link_reports, write_class_report
from seqlab.results import GradingResult
from seqlab.results import TestResult as Outcome


def _row(name, cell, forward, hint=""):
    tests = [
        Outcome("rnn.rnn_cell: a", cell, 2.0, hint=hint, output="x" if cell < 2 else ""),
        Outcome("rnn.rnn_forward: a", forward, 3.0),
    ]
    return {"submission": name, "status": "graded", "reason": "", "result": GradingResult(tests=tests)}


def _class():
    hint = "your result equals the reference's computed with b_h = 0: that term is left out"
    return [
        _row("alice", 2.0, 3.0),
        _row("bob", 0.0, 3.0, hint),
        _row("carol", 0.0, 1.5, hint),
        {"submission": "dave", "status": "error", "reason": "no exercises/ folder", "result": None},
    ]


def test_students_table_and_mistakes_name_who(tmp_path):
    rows = _class()
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "report.html").write_text("<html></html>")
    link_reports(rows, tmp_path, tmp_path)
    summary = class_summary(rows)
    students = {s["name"]: s for s in summary["students"]}
    assert students["carol"]["below"] == ["rnn.rnn_cell", "rnn.rnn_forward"] and students["alice"]["below"] == []
    assert students["bob"]["report"] == "bob/report.html" and students["dave"]["score"] is None
    (mistake,) = summary["mistakes"]
    assert mistake["students"] == ["bob", "carol"] and mistake["count"] == 2
    html, md = write_class_report(tmp_path, rows)
    page = html.read_text()
    assert '<a href="bob/report.html"><code>bob</code></a>' in page and "bob, carol" in page
    assert "[bob](bob/report.html)" in md.read_text()
