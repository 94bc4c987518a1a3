"""The released notebooks in a student's own kernel: torch, numpy, matplotlib, no seqlab.

* Fast: the files a course ships beside its notebooks import nothing of seqlab (only the
  standard library, torch, numpy and matplotlib), every notebook's own cells import nothing of
  seqlab but the guarded ``seqlab.nbgrader.kernel`` of the test cells, and every lab notebook's
  release holds what its cells import.
* End to end (``e2e``): ``nbgrader generate_assignment`` releases every topic; a fresh venv gets
  only the release's ``requirements.txt`` (``import seqlab`` fails in it); each released notebook,
  its answer cells filled in as a student who finished would, runs top to bottom with nbclient in
  that venv's kernel, labs included; every lab cell draws its figures (image outputs) and its
  progress bar is one line, not one per update.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch

from seqlab import contract
from seqlab.nbgrader import course as nbcourse
from seqlab.nbgrader.course import SHIPPED, build_course
from seqlab.nbgrader.export import answer_id
from seqlab.regions import strip_markers
from tests.nbgrader._class import NBGRADER, TOPICS, by_grade_id, run

LAB_TOPICS = ("rnn", "lstm_gru", "transformer", "selective_scan")
STUDENT_MODULES = {"torch", "numpy", "matplotlib", "IPython", "__future__"}
# A progress bar printed where it cannot redraw (labkit.PLAIN_UPDATES lines at most) and the
# lab's own summary lines: more than this is a bar printing every update again (it printed 51).
MAX_LAB_LINES = 12


def _imported_roots(text: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            roots.add((node.module or "").split(".")[0])
    return roots


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_files_need_no_seqlab(name):
    stdlib = set(sys.stdlib_module_names)
    outside = _imported_roots(SHIPPED[name].read_text(encoding="utf-8")) - stdlib - STUDENT_MODULES
    assert not outside, f"{name} imports {outside}: a student's kernel has none of them"


# Three topics cover every case (a lab and stand-ins, the setup cell's stand-ins, nothing) and
# leave out the rnn lab's band, three reference trainings: the e2e test below builds all seven.
SHIP_TOPICS = ("lstm_gru", "attention", "transformer")


def test_course_ships_what_the_cells_import(tmp_path):
    course = build_course(tmp_path / "course", seed=1, topics=SHIP_TOPICS).course_dir
    for topic in SHIP_TOPICS:
        folder = course / "source" / topic
        nb = nbformat.read(str(folder / f"{topic}.ipynb"), as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            # the test cells' `from seqlab.nbgrader.kernel import ...` falls back without seqlab
            lines = cell.source.splitlines()
            code = "\n".join(
                line[: len(line) - len(line.lstrip())] + "pass" if "seqlab.nbgrader.kernel" in line else line
                for line in lines
            )
            for root in _imported_roots(code) - set(sys.stdlib_module_names) - STUDENT_MODULES:
                assert (folder / f"{root}.py").is_file(), f"{topic}: a cell imports {root}, not shipped"
        assert (folder / "requirements.txt").is_file()
        assert (folder / nbcourse.LAB_DATA_FILE).is_file() == (topic in LAB_TOPICS)
        if (folder / "seqlab_lab.py").is_file():
            assert (folder / "seqlab_lab.py").read_text() == SHIPPED["seqlab_lab.py"].read_text()


def _fresh_venv(root: Path, requirements: Path) -> Path:
    """A venv with the release's requirements and nothing else (torch first, this one's version,
    as requirements.txt tells students: a bare `torch` would fetch a CUDA build)."""
    venv = root / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    torch_version = torch.__version__.split("+")[0]
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check"]
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    for args in ([f"torch=={torch_version}"], ["-r", str(requirements)]):
        done = subprocess.run(pip + args, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return venv


def _kernelspec(root: Path, venv: Path) -> Path:
    """A Jupyter kernel of the fresh venv, PYTHONPATH cleared (nothing of this checkout leaks in)."""
    spec = root / "jupyter" / "kernels" / "student"
    spec.mkdir(parents=True)
    argv = ["env", "-u", "PYTHONPATH", str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f"]
    kernel = {"argv": [*argv, "{connection_file}"], "display_name": "student", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    return root / "jupyter"


@pytest.mark.e2e
@pytest.mark.slow
def test_released_notebooks_run_in_a_kernel_without_seqlab(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    course = build_course(tmp_path / "course", seed=3).course_dir
    run([NBGRADER, "generate_assignment", "*"], cwd=course)
    venv = _fresh_venv(tmp_path, course / "release" / "rnn" / "requirements.txt")
    probe = subprocess.run(
        ["env", "-u", "PYTHONPATH", str(venv / "bin" / "python"), "-c", "import seqlab"],
        cwd=course / "release" / "rnn",
        capture_output=True,
        text=True,
    )
    assert probe.returncode != 0 and "No module named 'seqlab'" in probe.stderr, probe.stderr
    monkeypatch.setenv("JUPYTER_PATH", str(_kernelspec(tmp_path, venv)))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    for topic in contract.MODULES:
        student = shutil.copytree(course / "release" / topic, tmp_path / "student" / topic)
        nb = nbformat.read(str(student / f"{topic}.ipynb"), as_version=4)
        solved = {answer_id(topic, c.name): strip_markers(c.source) for c in TOPICS[topic].answers}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):  # the student's finished answer: the reference's
                cell.source = solved[meta["grade_id"]]
        # raises CellExecutionError, with the cell and its traceback, on the first failing cell
        NotebookClient(nb, kernel_name="student", timeout=600, resources={"metadata": {"path": str(student)}}).execute()
        nbformat.write(nb, str(student / f"{topic}.ipynb"))  # kept with the test's tmp_path, to look at
        lab = by_grade_id(nb).get(f"{topic}-lab")
        assert (lab is not None) == (topic in LAB_TOPICS), topic
        if lab is None:
            continue
        images = [o for o in lab.outputs if "image/png" in o.get("data", {})]
        assert images, f"{topic}: the lab cell drew no figure"
        text = "".join(o.get("text", "") for o in lab.outputs if o.output_type == "stream")
        assert len(text.replace("\r", "\n").splitlines()) <= MAX_LAB_LINES, f"{topic}: {text[:2000]}"
        bars = [o for o in lab.outputs if o.output_type == "display_data" and "%" in o.data.get("text/plain", "")]
        assert len(bars) == 1 and bars[0].data["text/plain"].endswith("100.0%"), f"{topic}: {bars}"


def test_heldout_cross_entropy_and_text_are_the_course_s_own():
    from seqlab.labs import char_rnn, corpus
    from seqlab.nbgrader import labkit

    inputs, heldout = char_rnn.draw_task(0)
    task = {"permutation": heldout["permutation"], "heldout": heldout["tokens"], "alphabet": corpus.ALPHABET}
    params = inputs["params"]
    ours = labkit.heldout_cross_entropy(params, task)
    assert ours == pytest.approx(char_rnn.cross_entropy(params, heldout["tokens"]), rel=1e-12)
    tokens = inputs["tokens"][:200]
    assert labkit.text_of(tokens, task) == corpus.decode(tokens, heldout["permutation"])


def test_a_plain_progress_bar_prints_a_few_lines(capsys):
    from seqlab.nbgrader import labkit

    calls = []
    namespace = {"adam": lambda *args: calls.append(args)}
    with labkit.progress(namespace, "adam", total=1000):
        for _ in range(1000):
            namespace["adam"](0)
    lines = capsys.readouterr().out.splitlines()
    assert len(calls) == 1000 and namespace["adam"].__name__ == "<lambda>", "the own function is put back"
    assert len(lines) == labkit.PLAIN_UPDATES and lines[-1].endswith("100.0%"), lines
