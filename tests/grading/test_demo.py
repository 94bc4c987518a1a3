"""The example submission loses points exactly where its bugs are, with the mistakes named."""

from __future__ import annotations

import pytest

from seqlab.cli import main
from seqlab.config import load_config
from seqlab.demo import assemble, load_bugs
from seqlab.grading import grade_submission, grading_settings


@pytest.mark.slow  # ~3 s: a whole grading
def test_demo_loses_points_only_where_the_bugs_are(tmp_path):
    result = grade_submission(assemble(tmp_path), grading_settings(isolated=False, seed=2))
    bugs = {function: hint for function, _, hint, _ in load_bugs()}
    lost = {f for f, (s, m) in result.by_function().items() if s < m}
    assert lost == set(bugs)
    score, max_score = result.by_function()["selective_scan.linear_scan"]
    assert score == max_score - load_config().rules("selective_scan.linear_scan").complexity_points
    for function, hint in bugs.items():
        hints = [t.hint for t in result.tests if t.function == function and t.hint]
        assert any(hint.lower() in h.lower() for h in hints), (function, hints)
    assert "BEGIN SOLUTION" not in (tmp_path / "exercises" / "rnn.py").read_text()


def test_demo_command_shows_the_table_and_the_report(tmp_path, capsys):
    code = main(["demo", "--out", str(tmp_path), "--seed", "1"])
    output = capsys.readouterr()
    assert code == 0, output.err
    assert "HTML report:" in output.out and "Looks like:" in output.out
    assert (tmp_path / "report" / "report.html").is_file()
