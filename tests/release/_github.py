"""GitHub workflows for the release and classroom tests: parsed, a job's ``run:`` steps run in this
project's venv with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files (``run_job``: quick, its install
steps left out; ``tests/release/_runner.py`` runs whole jobs, every step, on fresh runners), and
student repositories made from a release."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from seqlab import release as rel
from seqlab.paths import SOLUTIONS_DIR
from seqlab.regions import strip_markers
from tests.release import _runner

VENV_BIN = Path(sys.executable).parent

BUGGY_ADAM = '''
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    """Adam without the bias correction (a classic mistake)."""
    beta1, beta2 = betas
    t = state.get("step", 0) + 1
    m = beta1 * state.get("m", torch.zeros_like(w)) + (1 - beta1) * dw
    v = beta2 * state.get("v", torch.zeros_like(w)) + (1 - beta2) * dw * dw
    return w - lr * m / (torch.sqrt(v) + eps), {"step": t, "m": m, "v": v}
'''


def run_script(script: str, cwd: Path, env: dict, *, timeout: float) -> subprocess.CompletedProcess:
    """A workflow step's ``run:`` as GitHub runs it: ``bash -e``, no terminal, no input."""
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GITHUB_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    return env


def load_workflow(text: str) -> dict:
    data = yaml.safe_load(text)
    if True in data:  # YAML 1.1 reads a bare `on:` as True; the templates quote it
        data["on"] = data.pop(True)
    return data


def torch_version_of(check: dict) -> str:
    step = next(s for s in check["jobs"]["public-tests"]["steps"] if s.get("id") == "torch")
    match = re.fullmatch(r'python -m pip install "torch==([\w.+]+)" --index-url (\S+)', step["run"].strip())
    assert match, step["run"]
    assert match.group(2) == rel.CPU_INDEX, "the student workflow must install the CPU build of torch"
    return match.group(1)


def evaluate(expression: str, context: dict):
    """An expression's value (tests/release/_runner.py reads the language)."""
    return _runner.evaluate(expression, context)


def substitute(text: str, context: dict) -> str:
    return _runner.to_text(_runner.interpolate(text, context))


def run_job(job: dict, workspace: Path, context: dict, *, skip_ids=("install",), extra_env=None) -> dict:
    """Run the `run:` steps of a job in ``workspace``; returns {"outputs": {...}, "summary": str}."""
    workspace.mkdir(parents=True, exist_ok=True)
    github_output = workspace.parent / f"{workspace.name}.output"
    summary = workspace.parent / f"{workspace.name}.summary.md"
    github_output.write_text("")
    summary.write_text("")
    steps_context = context.setdefault("steps", {})
    for step in job["steps"]:
        if "uses" in step or step.get("id") in skip_ids:
            continue
        if "if" in step and not evaluate(step["if"], context):
            continue
        env = clean_env()
        env.update(
            {
                "PATH": f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
                "GITHUB_OUTPUT": str(github_output),
                "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_WORKSPACE": str(workspace),
                "CI": "true",
            }
        )
        env.update(extra_env or {})
        assert "${{" not in step["run"], f"step {step.get('name')!r}: pass expressions through env:, not the script"
        env.update({k: substitute(str(v), context) for k, v in step.get("env", {}).items()})
        proc = run_script(step["run"], workspace, env, timeout=600)
        assert proc.returncode == 0, (
            f"step {step.get('name')!r} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
        if step.get("id"):
            outputs = dict(line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line)
            steps_context[step["id"]] = {"outputs": outputs}
    outputs = dict(line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line)
    return {"outputs": outputs, "summary": summary.read_text()}


def blocked_imports(tmp: Path, modules=("torch", "numpy", "yaml", "sympy")) -> dict:
    """An environment in which ``modules`` cannot be imported: what a job that installed seqlab
    with --no-deps has."""
    folder = tmp / "no-torch"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        textwrap.dedent(f"""
        import sys
        class _NotInstalled:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {set(modules)!r}:
                    raise ImportError(name + " is not installed in this job")
                return None
        sys.meta_path.insert(0, _NotInstalled())
    """)
    )
    return {"PYTHONPATH": str(folder)}


def make_submission(released: Path, target: Path, kind: str) -> Path:
    """A student repository: the release, with the reference solutions (markers stripped, as a
    student's file has none), or the stubs, or the solutions with one bug."""
    shutil.copytree(released, target)
    if kind in ("reference", "buggy"):
        for path in SOLUTIONS_DIR.glob("*.py"):
            if path.name != "__init__.py":
                (target / "exercises" / path.name).write_text(strip_markers(path.read_text(encoding="utf-8")))
    if kind == "buggy":
        from tests.mutants import replace_function

        path = target / "exercises" / "optimizers.py"
        path.write_text(replace_function(path.read_text(), "adam", BUGGY_ADAM))
    return target


def run_public_tests(repo: Path, check: dict, extra_env=None, python_bin: Path = VENV_BIN) -> tuple[int, str, str]:
    """check.yml's test step, verbatim, in ``repo``; returns (exit code, output, job summary)."""
    step = next(s for s in check["jobs"]["public-tests"]["steps"] if s.get("id") == "test")
    summary = repo.parent / f"{repo.name}.summary.md"
    summary.write_text("")
    env = clean_env()
    env.update({"PATH": f"{python_bin}{os.pathsep}{env.get('PATH', '')}", "GITHUB_STEP_SUMMARY": str(summary)})
    env.update(extra_env or {})
    proc = run_script(step["run"], repo, env, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, summary.read_text()
