"""The instructor's side of GitHub autograding: the grading workflow, its matrix, its gradebook.

``seqlab ci-workflow`` writes ``.github/workflows/grade.yml`` for the private course repository;
its first job runs ``seqlab ci-matrix`` (:func:`build_matrix`: one entry per student repository
of the roster -- ours or GitHub Classroom's grades export -- and per uploaded folder or zip);
its last job runs ``seqlab gradebook`` (:func:`assemble_gradebook`) over the per-submission
results. The student side (what ``seqlab release`` writes) is :mod:`seqlab.release`.
"""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

from .batch import safe_submission_name
from .defaults import LOCK, PYTHON_VERSION, SUBMISSION_TIMEOUT_S
from .errors import SeqlabError
from .escape import markdown_inline
from .gradebook import STATUS_FILE, gradebook_from_results
from .paths import TEMPLATES_DIR

MAX_MATRIX = 256  # GitHub Actions: at most 256 jobs from one matrix per workflow run
# Grading jobs at once: enough to grade a class of 200 in about ten rounds, few enough that a
# free organization's runner pool still has room for the students' own check runs.
DEFAULT_MAX_PARALLEL = 20
DEFAULT_ROSTER = "classroom/roster.csv"
DEFAULT_UPLOADS = "submissions"


def render_grade_workflow(
    *,
    roster: str = DEFAULT_ROSTER,
    uploads: str = DEFAULT_UPLOADS,
    timeout_s: int = SUBMISSION_TIMEOUT_S,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
    templates_dir: Path = TEMPLATES_DIR,
) -> str:
    """The instructor's grading workflow (``.github/workflows/grade.yml``): one job per submission.

    Its jobs install the hashed lock with ``scripts/setup.sh``, so torch and Python are the
    lock's (the Python it was resolved for, PYTHON_VERSION), not options of their own."""
    # imported here: the workflow's first job lists the submissions with the standard library
    # alone (nothing installed), and the templates need jinja2
    from .release.render import template_environment

    env = template_environment(Path(templates_dir) / "ci", workflow=True)
    return env.get_template("grade.yml.j2").render(
        roster=roster,
        uploads=uploads,
        python_version=PYTHON_VERSION,
        lock=LOCK,
        timeout_s=int(timeout_s),
        job_minutes=max(10, int(timeout_s) // 60 + 15),
        max_parallel=int(max_parallel),
        max_matrix=MAX_MATRIX,
    )


_REPO_URL = re.compile(r"(?:https?://github\.com/|git@github\.com:)?([\w.-]+/[\w.-]+?)(?:\.git)?/?$")


class ClassroomError(SeqlabError, ValueError):
    """A roster or an uploads folder the matrix cannot be built from; the message names it."""


def read_roster(path: Path) -> list[dict]:
    """Rows of a roster CSV: ``name,repo[,ref]``, or GitHub Classroom's grades export
    (``github_username`` / ``roster_identifier``, ``student_repository_url``)."""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as f:
            return _roster_rows(path, list(csv.DictReader(f)))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ClassroomError(f"{path}: cannot read the roster ({getattr(exc, 'strerror', None) or exc})") from None


def _roster_rows(path: Path, rows: list[dict]) -> list[dict]:
    entries = []
    for lineno, row in enumerate(rows, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        repo = row.get("repo") or row.get("repository") or row.get("student_repository_url") or ""
        match = _REPO_URL.match(repo)
        if not match:
            raise ClassroomError(
                f"{path}:{lineno}: no repository (a 'repo' column with owner/name, or "
                f"'student_repository_url'), got {repo!r}"
            )
        repo = match.group(1)
        name = row.get("name") or row.get("roster_identifier") or row.get("github_username") or repo.split("/", 1)[1]
        entries.append({"name": safe_submission_name(name), "repo": repo, "ref": row.get("ref", ""), "upload": ""})
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
            name = safe_submission_name(item.stem if item.is_file() else item.name)
            entries.append({"name": name, "repo": "", "ref": "", "upload": Path(uploads, item.name).as_posix()})
    if not entries:
        raise ClassroomError(f"no submissions: neither a roster at {roster} nor folders or zips in {uploads}")
    # Two submissions that would share a name (a results folder, a gradebook row): two logins
    # that sanitize alike, a student's folder beside their zip. Neither is dropped and the class
    # is not stopped: each is named ``<name>+<12 hex of SHA-256 of where it comes from>``, as
    # grade-all names them (no plain name holds a "+", so none can take another's).
    sharing: dict[str, list[dict]] = {}
    for entry in entries:
        sharing.setdefault(entry["name"].casefold(), []).append(entry)
    for same in sharing.values():
        if len(same) > 1:
            for entry in same:
                origin = entry["upload"] or f"{entry['repo']}@{entry['ref']}"
                entry["name"] = f"{entry['name']}+{hashlib.sha256(origin.encode()).hexdigest()[:12]}"
    if len(entries) > MAX_MATRIX:
        raise ClassroomError(
            f"{len(entries)} submissions, but one GitHub Actions matrix runs at most {MAX_MATRIX} jobs; "
            f"split the roster into several files and run the workflow once per file"
        )
    return entries


def assemble_gradebook(
    results_dir: Path, out_dir: Path | None = None, *, expect: list[dict] | None = None
) -> list[dict]:
    """gradebook.csv, class_report.{md,html} and summary.md from per-submission results folders.

    ``results_dir`` holds one folder per submission, as ``seqlab grade-all`` or ``seqlab grade
    --out`` writes it. A submission of ``expect`` (the matrix) without a folder -- its job died
    before uploading anything -- still gets a row, with the reason.
    """
    results_dir = Path(results_dir)
    names = sorted(p.name for p in results_dir.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    names = [
        n
        for n in names
        if (results_dir / n / STATUS_FILE).is_file() or (results_dir / n / "seqlab_result.json").is_file()
    ]
    names += [entry["name"] for entry in expect or [] if entry["name"] not in names]
    out_dir = Path(out_dir or results_dir)
    rows = gradebook_from_results(
        results_dir,
        sorted(names),
        out_dir,
        missing_reason=("no results: its grading job failed before uploading them (see the workflow run's log)"),
    )
    source = {e["name"]: e.get("repo") or e.get("upload") or "" for e in expect or []}
    (out_dir / "summary.md").write_text(_summary_markdown(results_dir, rows, source, out_dir), encoding="utf-8")
    return rows


def _summary_markdown(results_dir: Path, rows: list[dict], source: dict, out_dir: Path) -> str:
    graded = [r for r in rows if r["result"] is not None]
    lines = [
        f"# Gradebook: {len(graded)} of {len(rows)} submissions graded",
        "",
        "| submission | source | commit | status | score | percent | note |",
        "|---|---|---|---|---:|---:|---|",
    ]
    for row in rows:
        commit_file = results_dir / row["submission"] / "commit.txt"
        commit = commit_file.read_text(encoding="utf-8", errors="replace").strip()[:12] if commit_file.is_file() else ""
        result = row["result"]
        score = f"{result.score:.4g} / {result.max_score:.4g}" if result else ""
        percent = f"{result.percent:.1f}%" if result else ""
        note = row["reason"] or ("; ".join(result.errors)[:200] if result else "")
        # every text cell escaped (seqlab.escape): a name, a source or a message is the
        # student's, and raw it can print "**144 / 144 (100%)**" or an <img> beside a real 0
        cells = [row["submission"], source.get(row["submission"], ""), commit, row["status"]]
        text = " | ".join(markdown_inline(c) for c in cells)
        lines.append(f"| {text} | {score} | {percent} | {markdown_inline(note)} |")
    report = out_dir / "class_report.md"
    extra = report.read_text(encoding="utf-8") if report.is_file() else ""
    return "\n".join(lines) + "\n\n" + extra
