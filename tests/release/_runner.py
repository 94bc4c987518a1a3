"""A GitHub Actions job run here, step by step, for the end-to-end tests of the generated workflows.

What a hosted runner does for a job and what this does instead:

* ``run:`` steps: the script as written, in ``bash -e`` (GitHub's default shell on Linux), in the
  job's workspace, with ``GITHUB_OUTPUT``, ``GITHUB_ENV``, ``GITHUB_PATH`` and
  ``GITHUB_STEP_SUMMARY`` as fresh files per step, read back after it as the runner reads them.
* ``${{ }}`` expressions (``if:``, ``env:``, ``with:``, job outputs, a matrix): evaluated by
  :func:`evaluate`, the expression language's literals, property paths, operators (with its loose
  comparison: case-insensitive strings, other mixed types as numbers) and the functions the
  workflows use; anything else fails the test rather than being guessed.
* ``uses:`` steps: no action runs here, so each one has a stand-in that does the same in shell:
  ``checkout`` is a ``git clone`` (of ``fetch-depth`` commits, at ``ref``, into ``path``),
  ``setup-python`` a fresh venv of this machine's Python, ``upload-artifact`` and
  ``download-artifact`` copies into and out of a folder of artifacts. An action without a
  stand-in fails the test.
* The environment starts empty but for the machine's own (``HOME``, the locale, pip's
  configuration: where this machine gets packages without a network) and the system ``PATH``:
  no project venv, no ``SEQLAB_*`` setting of the test suite.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# what a job keeps of this machine's environment: the home (pip's cache), the locale, and pip's
# settings, which name this machine's package folders (it has no network)
MACHINE_ENV = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME")


class StepFailed(Exception):
    """A stand-in that fails its step, as the action would (a missing artifact, a bad input)."""


# --- the expression language ---------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<num>0x[0-9a-fA-F]+|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<str>'(?:[^']|'')*')"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[()\[\].,!<>])|(?P<name>[A-Za-z_][\w-]*))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        assert match, f"cannot read the expression {text!r} at {text[pos:]!r}"
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _number(value) -> float:
    """The expression language's coercion to a number (for comparing mixed types)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0.0
        try:
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        except ValueError:
            return math.nan
    return math.nan


def truthy(value) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (None, False, 0, "")


def _compare(op: str, left, right) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        a, b = left.casefold(), right.casefold()
    elif type(left) is type(right) and isinstance(left, (dict, list)):
        return (left is right) == (op == "==") if op in ("==", "!=") else False
    else:
        a, b = _number(left), _number(right)
        if math.isnan(a) or math.isnan(b):
            return op == "!="
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def to_text(value) -> str:
    """How ``${{ }}`` writes a value into a string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2)
    return str(value)


class _Parser:
    def __init__(self, text: str, context: dict):
        self.tokens, self.i, self.context, self.text = _tokens(text), 0, context, text

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        assert value is None or token[1] == value, f"expected {value!r} in {self.text!r}, got {token[1]!r}"
        self.i += 1
        return token

    def parse(self):
        value = self.or_()
        assert self.peek()[0] == "end", f"unread {self.peek()[1]!r} in {self.text!r}"
        return value

    def or_(self):
        value = self.and_()
        while self.peek()[1] == "||":
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self):
        value = self.equality()
        while self.peek()[1] == "&&":
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self):
        value = self.relation()
        while self.peek()[1] in ("==", "!="):
            op = self.take()[1]
            value = _compare(op, value, self.relation())
        return value

    def relation(self):
        value = self.unary()
        while self.peek()[1] in ("<", "<=", ">", ">="):
            op = self.take()[1]
            value = _compare(op, value, self.unary())
        return value

    def unary(self):
        if self.peek()[1] == "!":
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self):
        value = self.primary()
        while self.peek()[1] in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = self.or_()
                self.take("]")
            value = _index(value, key)
        return value

    def primary(self):
        kind, text = self.take()
        if kind == "num":
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        assert kind == "name", f"unexpected {text!r} in {self.text!r}"
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if self.peek()[1] == "(":
            self.take()
            args = []
            while self.peek()[1] != ")":
                args.append(self.or_())
                if self.peek()[1] == ",":
                    self.take()
            self.take(")")
            return _call(text, args, self.context)
        return _index(self.context, text)


def _index(value, key):
    if isinstance(value, dict):
        key = to_text(key)
        return next((v for k, v in value.items() if k.casefold() == key.casefold()), None)
    if isinstance(value, list) and isinstance(key, float) and key.is_integer() and 0 <= key < len(value):
        return value[int(key)]
    return None


def _call(name: str, args: list, context: dict):
    status = context.get("job", {}).get("status", "success")
    functions: dict[str, Callable] = {
        "always": lambda: True,
        "success": lambda: status == "success",
        "failure": lambda: status == "failure",
        "cancelled": lambda: False,
        "fromjson": lambda text: json.loads(text),
        "tojson": lambda value: json.dumps(value, indent=2),
        "contains": lambda hay, needle: (
            any(_compare("==", item, needle) for item in hay)
            if isinstance(hay, list)
            else to_text(needle).casefold() in to_text(hay).casefold()
        ),
        "startswith": lambda text, start: to_text(text).casefold().startswith(to_text(start).casefold()),
        "endswith": lambda text, end: to_text(text).casefold().endswith(to_text(end).casefold()),
        "format": lambda pattern, *values: (
            re.sub(
                r"\{(\d+)\}",
                lambda m: to_text(values[int(m.group(1))]),
                pattern.replace("{{", "\0").replace("}}", "\1"),
            )
            .replace("\0", "{")
            .replace("\1", "}")
        ),
    }
    assert name.casefold() in functions, f"the expression function {name}() has no stand-in here"
    return functions[name.casefold()](*args)


def evaluate(expression: str, context: dict):
    """The value of one expression (without its ``${{ }}``)."""
    return _Parser(expression, context).parse()


def interpolate(text: str, context: dict):
    """A YAML value with ``${{ }}`` in it: the value itself when it is one expression alone (a
    matrix from fromJSON stays a list), else the text with each expression written in."""
    whole = re.fullmatch(r"\s*\$\{\{(.+?)\}\}\s*", text, re.S)
    if whole:
        return evaluate(whole.group(1), context)
    return re.sub(r"\$\{\{(.+?)\}\}", lambda m: to_text(evaluate(m.group(1), context)), text, flags=re.S)


def interpolate_value(value, context: dict) -> str:
    """A ``with:``, ``env:`` or ``outputs:`` value as the step sees it: a string (YAML's true
    written ``true``, as GitHub writes it)."""
    return to_text(interpolate(value if isinstance(value, str) else to_text(value), context))


def condition(expression, context: dict) -> bool:
    """An ``if:``: without a status function, GitHub reads it as ``success() && (it)``."""
    if expression is None:
        return _call("success", [], context)
    text = str(expression).strip()
    text = text[3:-2] if text.startswith("${{") and text.endswith("}}") else text
    if not re.search(r"\b(always|success|failure|cancelled)\s*\(", text):
        text = f"success() && ({text})"
    return truthy(evaluate(text, context))


# --- a job ---------------------------------------------------------------------------------------


@dataclass
class Job:
    """One job on its runner: its folder (workspace, temp, the GITHUB_* files) and its state."""

    root: Path
    base_env: dict
    path: list[str] = field(default_factory=list)  # GITHUB_PATH entries, the newest first
    env: dict = field(default_factory=dict)  # GITHUB_ENV
    log: list[tuple[str, str]] = field(default_factory=list)  # (step, its output)
    summary: list[str] = field(default_factory=list)

    @property
    def workspace(self) -> Path:
        return self.root / "work"

    def log_of(self, step_name: str) -> str:
        return "\n".join(text for name, text in self.log if name == step_name)


@dataclass
class JobRun:
    result: str  # "success" or "failure"
    outputs: dict
    summary: str
    job: Job


def machine_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k in MACHINE_ENV or k.startswith("PIP_")}
    env.update({"PATH": SYSTEM_PATH, "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux"})
    return env


def _read_pairs(path: Path) -> dict:
    """A GITHUB_OUTPUT or GITHUB_ENV file: ``name=value`` lines and ``name<<DELIMITER`` blocks."""
    pairs, lines = {}, path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            pairs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            pairs[name] = value
        i += 1
    return pairs


def run_job(job: dict, root: Path, context: dict, actions: dict[str, Callable], *, timeout: float = 900) -> JobRun:
    """Every step of ``job`` on a fresh runner in ``root``; the job's result, outputs, summary."""
    state = Job(root, machine_env())
    for folder in ("work", "temp", "files"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    context = {**context, "job": {"status": "success"}, "steps": {}, "runner": {"temp": str(root / "temp")}}
    for index, step in enumerate(job["steps"]):
        name = step.get("name") or step.get("uses") or step["run"].strip().splitlines()[0]
        if not condition(step.get("if"), context):
            state.log.append((name, "skipped"))
            if step.get("id"):
                context["steps"][step["id"]] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
            continue
        files = {key: root / "files" / f"{index}.{key.lower()}" for key in ("OUTPUT", "ENV", "PATH", "STEP_SUMMARY")}
        for path in files.values():
            path.write_text("")
        try:
            if "uses" in step:
                action = step["uses"].split("@", 1)[0]
                assert action in actions, f"no stand-in for the action {step['uses']} (step {name!r})"
                with_ = {k: interpolate_value(v, context) for k, v in step.get("with", {}).items()}
                state.log.append((name, actions[action](with_, state, context) or ""))
                ok = True
            else:
                ok = _run_script(step, name, state, context, files, index, timeout)
        except StepFailed as exc:
            state.log.append((name, f"failed: {exc}"))
            ok = False
        outputs = _read_pairs(files["OUTPUT"])
        state.env.update(_read_pairs(files["ENV"]))
        state.path[:0] = reversed(files["PATH"].read_text().split())
        state.summary.append(files["STEP_SUMMARY"].read_text(encoding="utf-8"))
        outcome = "success" if ok else "failure"
        if step.get("id"):
            context["steps"][step["id"]] = {"outputs": outputs, "outcome": outcome, "conclusion": outcome}
        if not ok:
            context["job"]["status"] = "failure"
    result = context["job"]["status"]
    outputs = {k: interpolate_value(v, context) for k, v in job.get("outputs", {}).items()}
    return JobRun(result, outputs, "".join(state.summary), state)


def _run_script(step: dict, name: str, state: Job, context: dict, files: dict, index: int, timeout: float) -> bool:
    assert "${{" not in step["run"], f"step {name!r}: pass expressions through env:, never into the script"
    script = state.root / "temp" / f"step-{index}.sh"
    script.write_text(step["run"], encoding="utf-8")
    env = {**state.base_env, **state.env}
    env["PATH"] = os.pathsep.join([*state.path, env["PATH"]])
    env.update({f"GITHUB_{key}": str(path) for key, path in files.items()})
    env.update({"GITHUB_WORKSPACE": str(state.workspace), "RUNNER_TEMP": str(state.root / "temp")})
    env.update({k: interpolate_value(v, context) for k, v in step.get("env", {}).items()})
    proc = subprocess.run(
        ["bash", "-e", str(script)],
        cwd=state.workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )
    state.log.append((name, proc.stdout + (f"\n(exit {proc.returncode})" if proc.returncode else "")))
    return proc.returncode == 0


# --- stand-ins for the actions ---------------------------------------------------------------------


def _git(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise StepFailed(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def checkout(own: Path, repositories: dict[str, Path]) -> Callable:
    """actions/checkout: ``own`` (the workflow's repository, at ``github.sha``) or ``repository``
    (looked up in ``repositories``), cloned with ``fetch-depth`` commits (1 unless said, 0: all)
    into ``path`` of the workspace, then ``ref``."""

    def run(with_: dict, job: Job, context: dict) -> str:
        repository = with_.get("repository", "")
        if repository and repository not in repositories:
            raise StepFailed(f"repository {repository!r} not found")
        source = repositories[repository] if repository else own
        ref = with_.get("ref", "") or ("" if repository else context.get("github", {}).get("sha", ""))
        dest = job.workspace / with_.get("path", "")
        depth = int(with_.get("fetch-depth", "1") or 1)
        shallow = ["--depth", str(depth)] if depth > 0 and not ref else []
        _git("clone", "--quiet", "--no-checkout", *shallow, source.resolve().as_uri(), str(dest))
        _git("checkout", "--quiet", ref or "HEAD", cwd=dest)
        return f"cloned {source} into {dest}" + (f" at {ref}" if ref else "")

    return run


def setup_python(with_: dict, job: Job, context: dict) -> str:
    """actions/setup-python: a fresh Python of the version asked for, first on PATH (its cache
    options only make a second install faster: left out)."""
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if with_.get("python-version") != have:
        raise StepFailed(f"python-version {with_.get('python-version')!r}: this machine has {have}")
    venv = job.root / "python"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=300)
    job.path.insert(0, str(venv / "bin"))
    return f"Python {have} in {venv}"


def upload_artifact(store: Path) -> Callable:
    """actions/upload-artifact: ``path`` (a folder's contents, or a file) copied to store/name."""

    def run(with_: dict, job: Job, context: dict) -> str:
        source, target = job.workspace / with_["path"], store / with_["name"]
        if not source.exists() or (source.is_dir() and not any(source.iterdir())):
            if with_.get("if-no-files-found", "warn") == "error":
                raise StepFailed(f"no files found at {with_['path']}")
            return f"warning: no files found at {with_['path']}"
        if target.exists():
            raise StepFailed(f"an artifact named {with_['name']!r} already exists")
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.mkdir(parents=True)
            shutil.copy2(source, target)
        return f"uploaded {with_['path']} as {with_['name']}"

    return run


def download_artifact(store: Path) -> Callable:
    """actions/download-artifact: by ``name`` or ``pattern``, into ``path`` (one folder per
    artifact, or all in one with ``merge-multiple``)."""

    def run(with_: dict, job: Job, context: dict) -> str:
        pattern = with_.get("name") or with_.get("pattern") or "*"
        names = (
            sorted(p.name for p in store.iterdir() if fnmatch.fnmatchcase(p.name, pattern)) if store.is_dir() else []
        )
        if with_.get("name") and not names:
            raise StepFailed(f"artifact {with_['name']!r} not found")
        dest = job.workspace / with_.get("path", "")
        merge = with_.get("merge-multiple", "false") == "true" or bool(with_.get("name"))
        for name in names:
            shutil.copytree(store / name, dest if merge else dest / name, dirs_exist_ok=True)
        return f"downloaded {', '.join(names) or 'nothing'}"

    return run


def matrix_of(job: dict, context: dict) -> list[dict]:
    """The combinations of a job's ``strategy.matrix`` (one key: the workflows' shape)."""
    matrix = job["strategy"]["matrix"]
    assert len(matrix) == 1, "one matrix key is what the workflows use"
    key, values = next(iter(matrix.items()))
    values = interpolate(values, context) if isinstance(values, str) else values
    return [{key: value} for value in values]
