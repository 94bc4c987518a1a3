"""The bundled example submission loses points exactly where its bugs are, with named mistakes."""
from __future__ import annotations

import subprocess
import sys

from seqlab.config import load_config
from seqlab.grading import grade_submission
from seqlab.paths import EXAMPLES_DIR

sys.path.insert(0, str(EXAMPLES_DIR.parent / "scripts"))
from make_demo_submission import BUGS  # noqa: E402


def test_demo_loses_points_only_where_the_bugs_are():
    result = grade_submission(EXAMPLES_DIR / "demo_submission", isolated=False, seed=2)
    lost = {f for f, (s, m) in result.by_function().items() if s < m}
    assert lost == {function for function, _ in BUGS}
    score, max_score = result.by_function()["selective_scan.linear_scan"]
    assert score == max_score - load_config().rules("selective_scan.linear_scan").complexity_points
    named = {t.function for t in result.tests if t.hint}
    assert named >= lost


def test_demo_command_shows_the_table_and_the_report(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "seqlab", "demo", "--out", str(tmp_path), "--seed", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "HTML report:" in proc.stdout and "Looks like:" in proc.stdout
    assert (tmp_path / "report.html").is_file()
