"""The student repository, the leak check that guards it, and GitHub autograding.

``seqlab release OUT_DIR`` writes everything a student gets -- the stubs in ``exercises/``, the
public tests in ``tests/``, a README, a minimal ``pyproject.toml`` and the CI workflow
``.github/workflows/check.yml`` -- and nothing else. Before a byte is written every file is
scanned for what must never ship: solution markers, any line of a solution region, lines of the
hidden graders or of ``grading_config.yaml``, mentions of the instructor package, the reference
solutions, the graders or that config, and the values of its secret-looking keys. A hit stops the
release with ``file:line: reason``. Releasing twice gives identical bytes, so two releases can be
diffed.

The instructor side lives here too: ``render_grade_workflow`` (the GitHub Actions matrix that
grades one submission per job), ``build_matrix`` (its list of submissions) and
``assemble_gradebook`` (gradebook.csv and summary.md from the per-submission results).
"""
from __future__ import annotations

import ast
import csv
import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import contract
from .build import BEGIN, clear_solutions
from .paths import CONFIG_PATH, COURSE_ROOT, GRADERS_DIR, SOLUTIONS_DIR, TEMPLATES_DIR

PUBLIC_TESTS_DIR = COURSE_ROOT / "public_tests"
MANIFEST = ".release-manifest"
DEFAULT_TORCH = "2.13.0"      # the CPU build the course machines and both workflows install
DEFAULT_PYTHON = "3.11"
DEFAULT_PROJECT = "sequence-models-exercises"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
MAX_MATRIX = 256              # GitHub Actions: at most 256 jobs from one matrix per workflow run

STUB_HEADER = (
    "# Exercises: {module}. Fill in every `raise NotImplementedError()` below; keep the signatures.\n"
    "# Public tests: tests/test_{module}.py (run `pytest tests/test_{module}.py`).\n"
)
PACKAGE_INIT = '"""Your implementations, one module per topic (see README.md)."""\n'


class ReleaseError(RuntimeError):
    """The release could not be written (bad output folder, missing source)."""


class LeakError(ReleaseError):
    """Something that must stay with the instructor would ship."""

    def __init__(self, leaks: list["Leak"], note: str = ""):
        self.leaks = leaks
        shown = "\n".join(f"  {leak}" for leak in leaks[:50])
        more = f"\n  ... and {len(leaks) - 50} more" if len(leaks) > 50 else ""
        super().__init__(f"{note}{len(leaks)} leak(s); nothing of the answer may ship:\n{shown}{more}")


@dataclass(frozen=True)
class Leak:
    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


# --- what must never ship -------------------------------------------------------------------------

MENTIONS = [
    (re.compile(r"seqlab", re.I), "mentions the instructor package (seqlab)"),
    (re.compile(r"\bsolutions\b", re.I), "mentions the reference solutions ('solutions')"),
    (re.compile(r"\bgraders\b", re.I), "mentions the hidden graders ('graders')"),
    (re.compile(r"grading_config", re.I), "mentions grading_config.yaml"),
    (re.compile(r"(BEGIN|END)[ _]SOLUTION"), "a solution region marker"),
    (re.compile(r"(BEGIN|END)[ _]HIDDEN[ _]TESTS"), "a hidden-tests marker"),
]
SECRET_KEY = re.compile(r"secret|token|passw|api[_-]?key|salt|seed|private", re.I)
MIN_REGION_LINE = 12      # shorter region lines ("else:", "return h") say nothing of the answer,
LONG_REGION_LINE = 28     # nor do short ones without arithmetic ("if mask is not None:", "T = x.shape[1]")
_ARITHMETIC = re.compile(r"[-+*/@%]")
MIN_GRADER_LINE = 40      # grader lines as long as this are specific to the graders
SUBSTRING_LINE = 30       # region lines this long are also caught inside a longer line
_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def normalize(line: str) -> str:
    return " ".join(line.split())


@dataclass
class Secrets:
    """Normalized lines and values that must not appear in a release, each with where it came from."""

    region_lines: dict[str, str] = field(default_factory=dict)
    grader_lines: dict[str, str] = field(default_factory=dict)
    config_values: dict[str, str] = field(default_factory=dict)
    config_lines: dict[str, str] = field(default_factory=dict)


def _regions(source: str):
    """(line number, text) of every line inside a solution region, and the set of lines outside."""
    inside, outside, open_ = [], set(), False
    for lineno, line in enumerate(source.splitlines(), start=1):
        if _MARKER.match(line):
            open_ = line.strip().startswith(BEGIN)
            continue
        (inside.append((lineno, line)) if open_ else outside.add(normalize(line)))
    return inside, outside


def _secret_values(node, path="") -> dict[str, str]:
    found = {}
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}" if path else str(key)
            if SECRET_KEY.search(str(key)) and isinstance(value, (str, int)) and not isinstance(value, bool):
                text = str(value)
                if len(text) >= 4:
                    found[text] = where
            found.update(_secret_values(value, where))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.update(_secret_values(value, f"{path}[{i}]"))
    return found


def collect_secrets(solutions_dir: Path = SOLUTIONS_DIR, graders_dir: Path = GRADERS_DIR,
                    config_path: Path = CONFIG_PATH) -> Secrets:
    import yaml

    secrets = Secrets()
    public: set[str] = set()
    regions = []
    for path in sorted(Path(solutions_dir).glob("*.py")):
        inside, outside = _regions(path.read_text(encoding="utf-8"))
        public |= outside
        regions += [(f"solutions/{path.name}:{lineno}", line) for lineno, line in inside]
    for where, line in regions:
        text = normalize(line)
        telling = len(text) >= LONG_REGION_LINE or (len(text) >= MIN_REGION_LINE and _ARITHMETIC.search(text))
        if telling and text not in public:   # a line the stubs show anyway is no secret
            secrets.region_lines.setdefault(text, where)
    for path in sorted(Path(graders_dir).glob("*.py")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            text = normalize(line)
            if len(text) >= MIN_GRADER_LINE and text not in public:
                secrets.grader_lines.setdefault(text, f"graders/{path.name}:{lineno}")
    if Path(config_path).is_file():
        text = Path(config_path).read_text(encoding="utf-8")
        secrets.config_values = _secret_values(yaml.safe_load(text) or {})
        for lineno, line in enumerate(text.splitlines(), start=1):   # a pasted copy of the file
            line = normalize(line)
            if len(line) >= MIN_GRADER_LINE and not line.startswith("#"):
                secrets.config_lines.setdefault(line, f"grading_config.yaml:{lineno}")
    return secrets


def scan(files: dict[str, str], secrets: Secrets) -> list[Leak]:
    """Every leak in ``files`` (relative path -> text), in path and line order."""
    leaks: list[Leak] = []
    long_region = [(text, where) for text, where in secrets.region_lines.items() if len(text) >= SUBSTRING_LINE]
    for path in sorted(files):
        parts = Path(path).parts
        if {"solutions", "graders"} & set(parts) or Path(path).name in ("grading_config.yaml", "grading_config.yml"):
            leaks.append(Leak(path, 1, "a hidden file (reference solutions, graders or the grading config)"))
        for lineno, line in enumerate(files[path].splitlines(), start=1):
            for pattern, reason in MENTIONS:
                if pattern.search(line):
                    leaks.append(Leak(path, lineno, reason))
            text = normalize(line)
            if not text:
                continue
            where = secrets.region_lines.get(text)
            if where is None:
                where = next((w for t, w in long_region if t in text), None)
            if where:
                leaks.append(Leak(path, lineno, f"a line of a solution region ({where}): {text[:80]}"))
            if text in secrets.grader_lines:
                leaks.append(Leak(path, lineno, f"a line of a hidden grader ({secrets.grader_lines[text]})"))
            if text in secrets.config_lines:
                leaks.append(Leak(path, lineno, f"a line of the grading config ({secrets.config_lines[text]})"))
            for value, key in secrets.config_values.items():
                if re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", line):
                    leaks.append(Leak(path, lineno, f"the value of {key} in grading_config.yaml"))
    return leaks


# Never pushed (.git itself, and what the released .gitignore lists): not read by read_tree.
NOT_SHIPPED = (".git", ".venv", "venv", "__pycache__", ".pytest_cache", "build", "*.egg-info",
               ".ipynb_checkpoints", "*.pyc")


def read_tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` that a push would ship, as text (undecodable bytes replaced)."""
    def shipped(name: str) -> bool:
        return not any(fnmatch.fnmatch(name, pattern) for pattern in NOT_SHIPPED)

    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if shipped(d)]   # prune: never walk into .git or a venv
        for name in names:
            path = Path(folder) / name
            if shipped(name) and path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_bytes().decode("utf-8", errors="replace")
    return {rel: files[rel] for rel in sorted(files)}


# --- rendering the release ------------------------------------------------------------------------

def _environment(templates_dir: Path, *, workflow: bool = False):
    """jinja2 environment; workflow templates use [= =] / [% %] so GitHub's ${{ }} stays literal."""
    import jinja2

    delimiters = dict(variable_start_string="[=", variable_end_string="=]", block_start_string="[%",
                      block_end_string="%]", comment_start_string="[#", comment_end_string="#]") if workflow else {}
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir)), trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                              autoescape=False, **delimiters)


def _first_docstring_line(source: str, name: str) -> str:
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            doc = ast.get_docstring(node) or ""
            line = doc.strip().splitlines()[0].rstrip(".") if doc.strip() else ""
            return line.replace("``", "`")
    return ""


def course_view(config, solutions_dir: Path) -> dict:
    """What the student README shows: topics, functions, points, rules, tolerances, limits."""
    topics = []
    for module in contract.MODULES:
        source = (Path(solutions_dir) / f"{module}.py").read_text(encoding="utf-8")
        functions = []
        for qualname in contract.functions_of(module):
            rules = config.rules(qualname)
            name = qualname.split(".", 1)[1]
            functions.append({"name": name, "qualname": qualname, "signature": contract.SIGNATURES[qualname],
                              "points": rules.points, "complexity_points": rules.complexity_points,
                              "forbidden": list(rules.forbidden), "summary": _first_docstring_line(source, name)})
        topics.append({"module": module, "functions": functions, "points": sum(f["points"] for f in functions)})
    groups: dict[tuple, list[str]] = {}   # functions that share one list of forbidden patterns
    for topic in topics:
        for f in topic["functions"]:
            if f["forbidden"]:
                groups.setdefault(tuple(f["forbidden"]), []).append(f["qualname"])
    forbidden = [{"functions": names, "patterns": list(patterns)} for patterns, names in groups.items()]
    return {"title": config.course_title or "Sequence models", "topics": topics, "total": config.max_score,
            "forbidden": forbidden,
            "tolerances": {k: {"rtol": v.rtol, "atol": v.atol} for k, v in sorted(config.tolerances.items())},
            "limits": config.limits}


def _points(x: float) -> str:
    return f"{x:g}"


def render_release(*, solutions_dir: Path = SOLUTIONS_DIR, public_tests_dir: Path = PUBLIC_TESTS_DIR,
                   templates_dir: Path = TEMPLATES_DIR, config=None, torch_version: str = DEFAULT_TORCH,
                   python_version: str = DEFAULT_PYTHON, project: str = DEFAULT_PROJECT) -> dict[str, str]:
    """Every file of the student repository: relative path -> text. Deterministic."""
    from .config import load_config

    config = config or load_config()
    files: dict[str, str] = {"exercises/__init__.py": PACKAGE_INIT}
    for module in contract.MODULES:
        path = Path(solutions_dir) / f"{module}.py"
        if not path.is_file():
            raise ReleaseError(f"{path}: missing (every contract module needs a solution file)")
        body = clear_solutions(path.read_text(encoding="utf-8"), filename=str(path))
        files[f"exercises/{module}.py"] = STUB_HEADER.format(module=module) + body
    public = sorted(Path(public_tests_dir).glob("*.py"))
    if not public:
        raise ReleaseError(f"{public_tests_dir}: no public tests found")
    missing = [m for m in contract.MODULES if not (Path(public_tests_dir) / f"test_{m}.py").is_file()]
    if missing:
        raise ReleaseError(f"{public_tests_dir}: no public tests for {', '.join(missing)} (test_<topic>.py)")
    for path in public:
        files[f"tests/{path.name}"] = path.read_text(encoding="utf-8")
    env = _environment(Path(templates_dir) / "student")
    env.filters["pts"] = _points
    context = {"course": course_view(config, solutions_dir), "torch_version": torch_version,
               "python_version": python_version, "cpu_index": CPU_INDEX, "project": project}
    files["README.md"] = env.get_template("README.md.j2").render(**context)
    files["pyproject.toml"] = env.get_template("pyproject.toml.j2").render(**context)
    files[".gitignore"] = env.get_template("gitignore.j2").render(**context)
    workflow_env = _environment(Path(templates_dir) / "student", workflow=True)
    files[".github/workflows/check.yml"] = workflow_env.get_template("check.yml.j2").render(**context)
    return {path: files[path] for path in sorted(files)}


def manifest_text(files: dict[str, str]) -> str:
    lines = ["# Files of this release and their SHA-256; written by the release step, do not edit."]
    lines += [f"{hashlib.sha256(files[p].encode('utf-8')).hexdigest()}  {p}" for p in sorted(files)]
    return "\n".join(lines) + "\n"


def _old_manifest(out_dir: Path) -> list[str] | None:
    path = out_dir / MANIFEST
    if not path.is_file():
        return None
    return [line.split("  ", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#") and "  " in line]


@dataclass
class ReleaseReport:
    out_dir: Path
    files: dict[str, str]
    written: list[str]
    removed: list[str]


def release(out_dir: Path, *, force: bool = False, secrets: Secrets | None = None, **render) -> ReleaseReport:
    """Render, leak-check and write the student repository into ``out_dir``.

    Only files of the release are touched: a file an earlier release wrote and this one does not
    is removed (the manifest lists them), anything else already there (a .git folder) is kept. A
    folder that holds other files and no manifest is refused unless ``force``.
    """
    out_dir = Path(out_dir)
    files = render_release(**render)
    secrets = secrets or collect_secrets(solutions_dir=render.get("solutions_dir", SOLUTIONS_DIR))
    leaks = scan(files, secrets)
    if leaks:
        raise LeakError(leaks, "release stopped, nothing written: ")
    if out_dir.exists() and not out_dir.is_dir():
        raise ReleaseError(f"{out_dir}: exists and is not a folder")
    old = _old_manifest(out_dir) if out_dir.is_dir() else None
    if old is None and out_dir.is_dir() and not force:
        foreign = [p for p in read_tree(out_dir) if p not in files]
        if foreign:
            raise ReleaseError(f"{out_dir}: not empty and not an earlier release (e.g. {foreign[0]}); "
                               f"use an empty folder, or --force to write into it")
    written, removed = [], []
    for rel, text in files.items():
        target = out_dir / rel
        data = text.encode("utf-8")
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(rel)
    for rel in old or []:
        if rel not in files and (out_dir / rel).is_file():
            (out_dir / rel).unlink()
            removed.append(rel)
    manifest = manifest_text(files).encode("utf-8")
    if not (out_dir / MANIFEST).is_file() or (out_dir / MANIFEST).read_bytes() != manifest:
        (out_dir / MANIFEST).write_bytes(manifest)
    # Files already in the folder ship too when it is pushed: check the whole tree, not only ours.
    leaks = scan(read_tree(out_dir), secrets)
    if leaks:
        raise LeakError(leaks, f"{out_dir} holds files that must not ship (remove them before pushing): ")
    return ReleaseReport(out_dir, files, written, removed)


# --- instructor side: the grading workflow, its matrix, the gradebook ------------------------------

def render_grade_workflow(*, roster: str = "classroom/roster.csv", uploads: str = "submissions",
                          python_version: str = DEFAULT_PYTHON, torch_version: str = DEFAULT_TORCH,
                          timeout_s: int = 900, max_parallel: int = 20,
                          templates_dir: Path = TEMPLATES_DIR) -> str:
    env = _environment(Path(templates_dir) / "ci", workflow=True)
    return env.get_template("grade.yml.j2").render(
        roster=roster, uploads=uploads, python_version=python_version, torch_version=torch_version,
        cpu_index=CPU_INDEX, timeout_s=int(timeout_s), job_minutes=max(10, int(timeout_s) // 60 + 15),
        max_parallel=int(max_parallel), max_matrix=MAX_MATRIX)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"


_REPO_URL = re.compile(r"(?:https?://github\.com/|git@github\.com:)?([\w.-]+/[\w.-]+?)(?:\.git)?/?$")


def read_roster(path: Path) -> list[dict]:
    """Rows of a roster CSV: ``name,repo[,ref]``, or GitHub Classroom's grades export
    (``github_username`` / ``roster_identifier``, ``student_repository_url``)."""
    entries = []
    with Path(path).open(newline="", encoding="utf-8-sig") as f:
        for lineno, row in enumerate(csv.DictReader(f), start=2):
            row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
            repo = row.get("repo") or row.get("repository") or row.get("student_repository_url") or ""
            match = _REPO_URL.match(repo)
            if not match:
                raise ValueError(f"{path}:{lineno}: no repository (a 'repo' column with owner/name, or "
                                 f"'student_repository_url'), got {repo!r}")
            repo = match.group(1)
            name = (row.get("name") or row.get("roster_identifier") or row.get("github_username")
                    or repo.split("/", 1)[1])
            entries.append({"name": _safe_name(name), "repo": repo, "ref": row.get("ref", ""), "upload": ""})
    return entries


def build_matrix(*, roster: Path | None = None, uploads: Path | None = None, ref: str = "") -> list[dict]:
    """The grading matrix: one entry per submission, ``{name, repo, ref, upload}``.

    Repositories come from the roster (checked out at ``ref``, or the entry's own ref, or the
    default branch); uploads are the folders and zips in ``uploads`` (each one submission).
    """
    entries = []
    if roster is not None and Path(roster).is_file():
        for entry in read_roster(roster):
            entry["ref"] = entry["ref"] or ref
            entries.append(entry)
    if uploads is not None and Path(uploads).is_dir():
        for item in sorted(Path(uploads).iterdir()):
            if item.name.startswith(".") or not (item.is_dir() or item.suffix.lower() == ".zip"):
                continue
            name = _safe_name(item.stem if item.is_file() else item.name)
            entries.append({"name": name, "repo": "", "ref": "", "upload": Path(uploads, item.name).as_posix()})
    if not entries:
        raise ValueError(f"no submissions: neither a roster at {roster} nor folders or zips in {uploads}")
    seen: dict[str, int] = {}
    for entry in entries:
        if entry["name"] in seen:
            raise ValueError(f"two submissions are both named {entry['name']!r}; names must be unique "
                             f"(they name the results folders)")
        seen[entry["name"]] = 1
    if len(entries) > MAX_MATRIX:
        raise ValueError(f"{len(entries)} submissions, but one GitHub Actions matrix runs at most {MAX_MATRIX} jobs; "
                         f"split the roster into several files and run the workflow once per file")
    return entries


def assemble_gradebook(results_dir: Path, out_dir: Path | None = None, *, expect: list[dict] | None = None) -> list[dict]:
    """gradebook.csv, class_report.{md,html} and summary.md from per-submission results folders.

    ``results_dir`` holds one folder per submission, as ``seqlab grade-all`` or ``seqlab grade
    --out`` writes it. A submission of ``expect`` (the matrix) without a folder -- its job died
    before uploading anything -- still gets a row, with the reason.
    """
    from .batch import Submission, collect, write_class_report, write_gradebook
    from .results import GradingResult

    results_dir = Path(results_dir)
    out_dir = Path(out_dir or results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = sorted(p.name for p in results_dir.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    names = [n for n in names if (results_dir / n / "status.json").is_file()
             or (results_dir / n / "seqlab_result.json").is_file()]
    for entry in expect or []:
        if entry["name"] not in names:
            names.append(entry["name"])
    subs = [Submission(name, Path(name), None, "no results: its grading job failed before uploading them (see the "
                                                "workflow run's log)") for name in sorted(names)]
    rows = collect(results_dir, subs)
    for row in rows:   # `seqlab grade --out` writes no status.json: a result alone counts as graded
        result_path = results_dir / row["submission"] / "seqlab_result.json"
        if row["result"] is None and not (results_dir / row["submission"] / "status.json").is_file() \
                and result_path.is_file():
            row.update(status="graded", reason="", result=GradingResult.load(result_path))
    write_gradebook(out_dir, rows)
    write_class_report(out_dir, rows)
    source = {e["name"]: e.get("repo") or e.get("upload") or "" for e in expect or []}
    (out_dir / "summary.md").write_text(_summary_markdown(results_dir, rows, source, out_dir), encoding="utf-8")
    return rows


def _summary_markdown(results_dir: Path, rows: list[dict], source: dict, out_dir: Path) -> str:
    graded = [r for r in rows if r["result"] is not None]
    lines = [f"# Gradebook: {len(graded)} of {len(rows)} submissions graded", "",
             "| submission | source | commit | status | score | percent | note |", "|---|---|---|---|---:|---:|---|"]
    for row in rows:
        commit_file = results_dir / row["submission"] / "commit.txt"
        commit = commit_file.read_text(encoding="utf-8").strip()[:12] if commit_file.is_file() else ""
        result = row["result"]
        score = f"{result.score:.4g} / {result.max_score:.4g}" if result else ""
        percent = f"{result.percent:.1f}%" if result else ""
        note = row["reason"] or ("; ".join(result.errors)[:200] if result else "")
        note = note.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{row['submission']}` | {source.get(row['submission'], '')} | {commit} | {row['status']} | "
                     f"{score} | {percent} | {note} |")
    report = out_dir / "class_report.md"
    extra = report.read_text(encoding="utf-8") if report.is_file() else ""
    return "\n".join(lines) + "\n\n" + extra

