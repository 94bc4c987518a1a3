"""How the feedback does on an unseen-mistake bank (tests/heldout/README.md): for every
mistake, what the hidden grading says and whether the public tests point at its function.

    .venv/bin/python benchmarks/bench_unseen.py BANK_DIR [--out OUT.json] [--md OUT.md]
        [--seed S] [--verdicts REVIEW.md] [--only FILE_GLOB]

Each file becomes a submission (the reference solutions with that one function swapped in,
tests/mutants.make_submission) graded the way a hand-in is: isolated, sandboxed, without the
labs (but for a lab's own mistake), on one seed (7 unless told), the mistake's module and the modules that call into it. It
records:

* the points lost in the mistake's own function (a mistake that keeps full marks is missed);
* any other function that lost points (callers get a correct callee, so normally none: one that
  lost points is the grader charging the wrong function);
* the failed tests' "looks like" hints and messages for the function (a hint given is not yet a
  mistake named: the review sheet is where a reviewer says which it is);
* the public tests: the release (``seqlab release``, built once per run) with the submission's
  exercises dropped in, its pytest run over the test files of those modules, and the functions
  whose public tests fail (the labs are left out: run one file at a time they fail for want of
  the other files, not for the mistake). Flagged right: the mistake's own function fails.

Prints a table and the totals, writes JSON (``--out``) and a Markdown review sheet (``--md``): per
mistake its function, the bank's ``# mistake:`` sentence and the hint or message given, with a
verdict column a reviewer fills in: named / located / wrong / nothing. ``--verdicts`` reads such
a filled-in sheet back and counts the verdicts. No floor: it measures; the issue's targets are
90% named, none named wrongly, none missed, the public tests right for 95%.

About 5 s a mistake on two cores (the public tests run while the next grading does): run it
under the shared lock, ``flock /tmp/cpu.lock``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seqlab import contract  # noqa: E402
from seqlab.config import load_config  # noqa: E402
from seqlab.grading import grade_submission, grading_settings  # noqa: E402
from tests.mutants import make_submission  # noqa: E402
from tests.mutants.unseen import BankMistake, load_bank  # noqa: E402

VERDICTS = ("named", "located", "wrong", "nothing")
# One line of the public tests' per-function summary (public_tests/conftest.py writes it).
_SUMMARY = re.compile(r"^(ok  |FAIL) (\S+\.\S+)\s+(\d+)/(\d+)(?:\s+(.*))?$")
# A public run that takes longer than this is stuck (one file takes a few seconds).
PUBLIC_TIMEOUT = 300


def modules_graded(function: str) -> list[str]:
    """The mistake's module and every module with a function that declares it a callee (those
    are the callers that must keep full marks with it wrong)."""
    module = function.split(".")[0]
    callers = {
        name.split(".")[0]
        for m in contract.MODULES
        for name in contract.functions_of(m)
        if function in contract.declared_callees(name)
    }
    return [module, *sorted(callers - {module})]


def callers_of(function: str) -> set[str]:
    return {
        name
        for m in contract.MODULES
        for name in contract.functions_of(m)
        if function in contract.declared_callees(name)
    }


def start_public(release: Path, submission: Path, work: Path, modules: list[str]) -> subprocess.Popen:
    """The public tests of ``modules`` on the release with the submission's exercises in it,
    started (they run while the grading does)."""
    shutil.copytree(release, work)
    for path in (submission / "exercises").glob("*.py"):
        shutil.copy(path, work / "exercises" / path.name)
    files = [f"tests/test_{m}.py" for m in modules]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no", *files]
    return subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def public_result(proc: subprocess.Popen, function: str) -> dict:
    try:
        out, _ = proc.communicate(timeout=PUBLIC_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    failing, problems = [], {}
    labs = set(contract.LABS) - {function}
    for line in out.splitlines():
        m = _SUMMARY.match(line.rstrip())
        if m and m.group(1) == "FAIL" and m.group(2) not in labs:
            failing.append(m.group(2))
            problems[m.group(2)] = (m.group(5) or "").strip()
    errors = [ln[6:] for ln in out.splitlines() if ln.startswith("ERROR ")]
    return {"failing": failing, "problems": problems, "errors": errors}


def measure(mistake: BankMistake, release: Path, tmp: Path, seed: int, config) -> dict:
    submission = make_submission(tmp / "submission", mistake.variant)
    modules = modules_graded(mistake.function)
    proc = start_public(release, submission, tmp / "public", modules)
    started = time.perf_counter()
    # the labs only for a lab's own mistake: they train, and the others' points leave them out
    labs = mistake.function in contract.LABS
    graded = [f for m in modules for f in contract.functions_of(m) if f not in contract.LABS or f == mistake.function]
    settings = grading_settings(isolated=True, seed=seed, only=",".join(graded), config=config, labs=labs)
    result = grade_submission(submission, settings)
    seconds = time.perf_counter() - started
    scores = result.by_function()
    score, max_score = scores.get(mistake.function, (0.0, 0.0))
    others = {fn: s for fn, s in scores.items() if fn != mistake.function and s[0] < s[1] - 1e-9}
    failed = [t for t in result.tests if t.function == mistake.function and t.score < t.max_score - 1e-9]
    hints = list(dict.fromkeys(t.hint for t in failed if t.hint))
    messages = list(dict.fromkeys(t.output.strip() for t in failed if t.output.strip()))
    public = public_result(proc, mistake.function)
    return {
        "file": mistake.file,
        "function": mistake.function,
        "class": mistake.klass,
        "mistake": mistake.mistake,
        "score": round(score, 4),
        "max_score": max_score,
        "missed": not failed and score >= max_score - 1e-9,
        "lost_elsewhere": {fn: [round(s, 4), m] for fn, (s, m) in others.items()},
        "callers": sorted(callers_of(mistake.function)),
        "failed_tests": len(failed),
        "hints": hints,
        "messages": messages[:5],
        "errors": list(result.errors),
        "public_failing": public["failing"],
        "public_problems": public["problems"],
        "public_errors": public["errors"],
        "public_right": mistake.function in public["failing"],
        "grade_seconds": round(seconds, 2),
    }


def totals(rows: list[dict]) -> dict:
    n = len(rows)
    return {
        "mistakes": n,
        "missed": sum(r["missed"] for r in rows),
        "wrong_function": sum(bool(r["lost_elsewhere"]) for r in rows),
        "hint_given": sum(bool(r["hints"]) for r in rows),
        "public_right": sum(r["public_right"] for r in rows),
        "public_other_only": sum(bool(r["public_failing"]) and not r["public_right"] for r in rows),
        "public_silent": sum(not r["public_failing"] for r in rows),
    }


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def print_table(rows: list[dict], total: dict) -> None:
    print(f"{'file':44s} {'lost':>11s} {'else':>5s} {'hint':>4s} {'pub':>4s}  hint / message")
    for r in rows:
        lost = f"{r['max_score'] - r['score']:.3g}/{r['max_score']:g}"
        said = r["hints"][0] if r["hints"] else (r["messages"][0] if r["messages"] else "")
        print(
            f"{r['file'][:44]:44s} {lost:>11s} {len(r['lost_elsewhere']):>5d} {'yes' if r['hints'] else '-':>4s}"
            f" {'ok' if r['public_right'] else 'NO':>4s}  {_short(said, 90)}"
        )
    n = total["mistakes"]
    print(
        f"\n{n} mistakes: {total['missed']} missed, {total['wrong_function']} cost points elsewhere, "
        f"{total['hint_given']} with a 'looks like' hint; public tests flag the right function for "
        f"{total['public_right']} ({total['public_other_only']} only another function, {total['public_silent']} none)"
    )


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def review_sheet(rows: list[dict], total: dict, bank: str, commit: str) -> str:
    """The Markdown a reviewer fills in: one row per mistake, a verdict per row."""
    lines = [
        f"# Review of {bank} at {commit}",
        "",
        "Verdict per row: **named** (the feedback names this mistake), **located** (it says where,",
        "not what), **wrong** (it names another mistake), **nothing** (only that values differ).",
        "",
        f"Automatic totals: {total['mistakes']} mistakes, {total['missed']} missed, "
        f"{total['wrong_function']} cost points elsewhere, {total['hint_given']} with a hint, "
        f"public tests right for {total['public_right']}.",
        "",
        "| # | function | the bank's mistake | lost | feedback given | public tests fail | verdict |",
        "|---|---|---|---:|---|---|---|",
    ]
    for r in rows:
        number = r["file"].split("_", 1)[0]
        said = "; ".join(f"Looks like {h}" for h in r["hints"]) or (r["messages"][0] if r["messages"] else "")
        lost = f"{r['max_score'] - r['score']:.3g}/{r['max_score']:g}" + (
            f" (+ {', '.join(r['lost_elsewhere'])})" if r["lost_elsewhere"] else ""
        )
        public = ", ".join(f"`{f}`" for f in r["public_failing"]) or "none"
        lines.append(
            f"| {number} | `{r['function']}` | {_cell(r['mistake'])} | {lost} | {_cell(_short(said, 400))} "
            f"| {public} | |"
        )
    return "\n".join(lines) + "\n"


def read_verdicts_text(text: str) -> dict[str, str]:
    """The verdict column of a filled-in review sheet: row number -> verdict."""
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 7 and cells[0].isdigit():
            verdict = re.match(r"\W*(\w+)", cells[-1].lower())
            if verdict and verdict.group(1) in VERDICTS:
                found[cells[0]] = verdict.group(1)
    return found


def _commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "seqlab", "graders"], cwd=ROOT, capture_output=True, text=True
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bank", type=Path)
    parser.add_argument("--out", type=Path, help="write the rows and totals as JSON")
    parser.add_argument("--md", type=Path, help="write the review sheet (Markdown)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default="*", help="only the bank files matching this glob")
    parser.add_argument("--verdicts", type=Path, help="a filled-in review sheet: count its verdicts")
    args = parser.parse_args(argv)

    mistakes = [m for m in load_bank(args.bank) if fnmatch.fnmatch(m.file, args.only)]
    config = load_config()
    commit = _commit()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-unseen-") as tmp:
        release = Path(tmp) / "release"
        # this checkout's own seqlab (the venv's entry script imports whichever checkout it was
        # installed from, and a worktree sharing the venv would get another's public tests)
        release_cmd = [sys.executable, "-m", "seqlab", "release", str(release)]
        subprocess.run(release_cmd, check=True, capture_output=True, cwd=ROOT)
        for i, mistake in enumerate(mistakes):
            work = Path(tmp) / f"m{i:03d}"
            rows.append(measure(mistake, release, work, args.seed, config))
            shutil.rmtree(work, ignore_errors=True)
            print(f"[{i + 1}/{len(mistakes)}] {mistake.file}", file=sys.stderr, flush=True)
    total = totals(rows)
    print_table(rows, total)
    if args.verdicts:
        verdicts = read_verdicts_text(args.verdicts.read_text(encoding="utf-8"))
        counts = {v: sum(1 for x in verdicts.values() if x == v) for v in VERDICTS}
        total["verdicts"] = counts
        print(f"review {args.verdicts}: " + ", ".join(f"{v} {c}" for v, c in counts.items()))
    report = {"bank": str(args.bank), "commit": commit, "seed": args.seed, "totals": total, "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.md:
        args.md.write_text(review_sheet(rows, total, args.bank.name, commit), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
