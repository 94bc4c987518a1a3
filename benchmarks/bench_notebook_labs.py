"""The notebooks' lab cells as a student runs them: wall time of each, and its progress bar.

Builds the course (`seqlab nbgrader`) in a temporary folder, then executes each lab topic's
source notebook (the solutions in the answer cells, as a student's finished notebook) in a
Jupyter kernel with nbconvert's ExecutePreprocessor (nbclient), without the hidden test cells, and reads each lab cell's timing
and output. Floor (exit 1 otherwise): every lab cell runs without an error in under a minute,
draws a figure and ends with one full progress bar (a single display, not a line per update).

    .venv/bin/python benchmarks/bench_notebook_labs.py [--topics rnn,lstm_gru,transformer,selective_scan]
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FLOOR_S = 60.0


def _seconds(cell) -> float:
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return float("nan")
    parse = datetime.datetime.fromisoformat
    return (parse(end.rstrip("Z")) - parse(start.rstrip("Z"))).total_seconds()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default="rnn,lstm_gru,transformer,selective_scan")
    args = parser.parse_args()
    course = Path(tempfile.mkdtemp(prefix="seqlab-bench-notebooks-"))
    try:
        failures = _run(course, args.topics.split(","))
    finally:
        shutil.rmtree(course, ignore_errors=True)
    for topic in failures:
        print("FLOOR MISSED:", topic)
    return 1 if failures else 0


def _run(course: Path, topics: list[str]) -> list[str]:
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor  # nbclient's client, as nbgrader runs it

    from seqlab.nbgrader.course import build_course

    build_course(course, seed=1)
    failures = []
    print(f"load {'/'.join(f'{v:.1f}' for v in os.getloadavg())}")
    for topic in topics:
        nb = nbformat.read(course / "source" / topic / f"{topic}.ipynb", as_version=4)
        nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade", False)]
        # in the notebook's folder, as Jupyter starts it: the files shipped beside it are what it imports
        folder = {"metadata": {"path": str(course / "source" / topic)}}
        ExecutePreprocessor(timeout=600, kernel_name="python3", record_timing=True, allow_errors=True).preprocess(
            nb, folder
        )
        errors = [f"{o.ename}: {o.evalue}" for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
        lab = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{topic}-lab")
        text = "".join(o.get("text", "") for o in lab.outputs if o.output_type == "stream")
        lines = len(text.replace("\r", "\n").splitlines())
        # the bar is one display, redrawn in place (labkit.progress): its last state is what is kept
        bars = [
            o.data["text/plain"]
            for o in lab.outputs
            if o.output_type == "display_data" and "%" in o.data.get("text/plain", "")
        ]
        images = sum("image/png" in o.get("data", {}) for o in lab.outputs)
        seconds = _seconds(lab)
        print(
            f"{topic:15s} lab cell {seconds:6.1f} s  bar: {bars[-1] if bars else 'none'}  "
            f"{lines} printed lines, {images} figure(s)  errors: {errors or 'none'}"
        )
        if errors or not seconds < FLOOR_S or len(bars) != 1 or not bars[-1].endswith("100.0%") or not images:
            failures.append(topic)
    print(f"load {'/'.join(f'{v:.1f}' for v in os.getloadavg())}; floor {FLOOR_S:g} s a lab cell")
    return failures


if __name__ == "__main__":
    sys.exit(main())
