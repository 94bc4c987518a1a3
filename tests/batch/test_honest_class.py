"""The honest bank as a class (issue "One world"): every honest submission of
``tests/student/honest_submissions`` (eight styles written blind from the release, a loop style
among them) scores full marks, the four training labs included, when graded the way a class is
graded: ``seqlab grade-all --jobs 2``, in the sandbox when there is one, with two busy processes
beside it on this 2-core machine. The labs' CPU budget must hold honest code on a loaded machine,
not only on an idle one.

The run also prints each lab's smallest margin (budget over the CPU the slowest honest style
took), the figure docs/labs.md states.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HONEST = ROOT / "tests" / "student" / "honest_submissions"


@pytest.mark.bank
@pytest.mark.slow
def test_every_honest_style_scores_full_marks_with_labs_at_jobs_2_beside_two_busy_processes(tmp_path):
    styles = sorted(p.name for p in HONEST.iterdir() if (p / "exercises").is_dir())
    assert len(styles) >= 8 and "loop-style" in styles, styles
    class_dir = tmp_path / "class"
    for style in styles:
        shutil.copytree(HONEST / style, class_dir / style)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "seqlab", "grade-all", str(class_dir), "--out", str(tmp_path / "out"),
             "--jobs", "2", "--seed", "11"],
            capture_output=True, text=True, timeout=1800, cwd=tmp_path,
            env={**os.environ, "SEQLAB_LABS": "1"},  # the suite's conftest leaves labs out by default
        )  # fmt: skip
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    with open(tmp_path / "out" / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    assert set(rows) == set(styles), rows.keys()
    margins: dict[str, list[tuple[float, str]]] = {}
    for style in styles:
        result = json.loads((tmp_path / "out" / style / "seqlab_result.json").read_text(encoding="utf-8"))
        lost = [(t["name"], t["output"][:300]) for t in result["tests"] if t["score"] < t["max_score"]]
        assert not lost, (style, lost)
        runs = result["meta"].get("lab_runs", {})
        assert len(runs) == 4, (style, sorted(runs))  # the four training labs were graded
        for lab, run in runs.items():
            margins.setdefault(lab, []).append((run["budget_s"] / run["cpu_s"], style))
    for lab, values in sorted(margins.items()):
        margin, style = min(values)
        print(f"{lab}: the slowest honest style ({style}) used 1/{margin:.1f} of its budget")
