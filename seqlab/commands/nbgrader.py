"""`seqlab nbgrader`: an nbgrader course from the same solutions, prose and points.

seqlab nbgrader COURSE_DIR [--seed N] [--timeout S] [--course-id ID]
    write COURSE_DIR/nbgrader_config.py and COURSE_DIR/source/<topic>/<topic>.ipynb
seqlab nbgrader export-submission NOTEBOOK_OR_DIR... --out DIR
seqlab nbgrader export-submission --course COURSE_DIR --out DIR [--student ID]...
    submitted notebooks -> DIR/exercises/*.py (or DIR/<student>/exercises/*.py), for `seqlab grade`
seqlab nbgrader autograde COURSE_DIR ASSIGNMENT... [--jobs N] [--keep DIR]
    grade every submitted/<student>/<assignment>/ with the isolated grade-all and write the grades and
    the feedback into nbgrader's gradebook and autograded/ (what `nbgrader autograde` writes, without
    trusting a kernel); the recommended way to grade
seqlab nbgrader crosscheck COURSE_DIR ASSIGNMENT [--student ID]...
    regrade each student's submitted notebook with the isolated grader and compare with the gradebook
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..defaults import SUBMISSION_TIMEOUT_S
from ..errors import UserError
from .options import add_jobs_option, path_option


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "nbgrader",
        help="write an nbgrader course; export or cross-check its submissions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="COURSE_DIR | export-submission ... | autograde ... | crosscheck ..."
    )
    p.set_defaults(func=run)


def _action_parser(action: str, description: str) -> argparse.ArgumentParser:
    """The parser of ``seqlab nbgrader ACTION`` (the actions are dispatched by hand: the course
    build takes a bare COURSE_DIR where argparse's subcommands would want an action name)."""
    return argparse.ArgumentParser(prog=f"seqlab nbgrader {action}".rstrip(), description=description)


def _course_action_parser(action: str, description: str) -> argparse.ArgumentParser:
    """An action on one course, COURSE_DIR first (action "": the build, which writes the course)."""
    p = _action_parser(action, description)
    p.add_argument("course_dir", type=Path)
    return p


def _build_parser() -> argparse.ArgumentParser:
    p = _course_action_parser("", "write an nbgrader course")
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the hidden tests' inputs (default: kept from an earlier build, else random)",
    )
    p.add_argument(
        "--timeout", type=int, default=None, help=f"seconds nbgrader allows one cell (default {SUBMISSION_TIMEOUT_S})"
    )
    p.add_argument("--course-id", default=None, help="nbgrader course id (default: course.id of grading_config.yaml)")
    return p


def _export_parser() -> argparse.ArgumentParser:
    p = _action_parser("export-submission", "turn submitted notebooks into a submission folder for `seqlab grade`")
    p.add_argument("notebooks", nargs="*", type=Path, help="notebooks or folders of notebooks (one student)")
    path_option(p, "--course", "an nbgrader course: export every student of its submitted/ folder")
    p.add_argument("--student", action="append", default=None, help="with --course: only this student (repeatable)")
    p.add_argument("--out", type=Path, required=True)
    return p


def _crosscheck_parser() -> argparse.ArgumentParser:
    p = _course_action_parser(
        "crosscheck",
        "regrade submitted notebooks with the isolated grader and compare with nbgrader's autograde "
        "scores (a difference means tampering or a broken set-up)",
    )
    p.add_argument("assignment")
    p.add_argument("--student", action="append", default=None)
    path_option(p, "--keep", "keep the exported submissions in this folder")
    return p


def _autograde_parser() -> argparse.ArgumentParser:
    p = _course_action_parser(
        "autograde",
        "grade the submitted notebooks with the isolated grader (grade-all) and record the grades "
        "and feedback in nbgrader's gradebook, as `nbgrader autograde` would, without running any "
        "notebook in a kernel",
    )
    p.add_argument(
        "assignments",
        nargs="+",
        metavar="ASSIGNMENT",
        help='an assignment of the gradebook, or a pattern as nbgrader takes them ("*": all)',
    )
    add_jobs_option(p, note="the cores you can spare")
    path_option(
        p,
        "--keep",
        "keep the exported submissions and seqlab's reports (report.html per student, gradebook.csv, "
        "class_report.html) in this folder, outside the course",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"seconds one student's grading may take before it is given up (default {SUBMISSION_TIMEOUT_S})",
    )
    return p


def run(args) -> int:
    argv = list(args.args)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if argv[0] == "export-submission":
        return _export(_export_parser().parse_args(argv[1:]))
    if argv[0] == "autograde":
        return _autograde(_autograde_parser().parse_args(argv[1:]))
    if argv[0] == "crosscheck":
        return _crosscheck(_crosscheck_parser().parse_args(argv[1:]))
    return _build(_build_parser().parse_args(argv))


def _build(args) -> int:
    from ..nbgrader.course import DEFAULT_TIMEOUT_S, build_course

    if args.course_dir.exists() and not args.course_dir.is_dir():
        raise UserError(f"{args.course_dir} exists and is not a folder")
    report = build_course(
        args.course_dir,
        seed=args.seed,
        course_id=args.course_id,
        timeout=args.timeout or DEFAULT_TIMEOUT_S,
        progress=lambda line: print(line, flush=True),  # one line per notebook, as it is written
    )
    print(f"wrote {report.config_path} (seed {report.seed})")
    print(f"next: cd {report.course_dir} && nbgrader generate_assignment <topic>   (e.g. optimizers)")
    return 0


def _export(args) -> int:
    from ..nbgrader.course import read_seed
    from ..nbgrader.export import export_course_submissions, export_submission
    from ..studentfiles import shown

    if args.course:
        if args.notebooks:
            raise UserError("give either notebooks or --course, not both")
        reports = export_course_submissions(args.course, args.out, students=args.student)
        seed = read_seed(args.course)
    else:
        if not args.notebooks:
            raise UserError("no notebooks given (or use --course COURSE_DIR)")
        reports = {"": export_submission(args.notebooks, args.out)}
        seed = None
    failed = 0
    for student, report in reports.items():
        label = f"{shown(student)}: " if student else ""
        if report.error:
            failed += 1
            print(f"NOT EXPORTED {label}{report.error}", file=sys.stderr)
            continue
        topics = ", ".join(sorted(report.modules)) or "none"
        print(
            f"{label}{report.out}/exercises/ ({topics} from notebooks"
            + (f"; stubs for {', '.join(report.stubbed)}" if report.stubbed else "")
            + ")"
        )
        for warning in report.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
    target = f"{args.out}/<student>" if args.course else str(args.out)
    seed_arg = f" --seed {seed}" if seed is not None else " --seed <the course seed>"
    print(
        f"grade with: seqlab grade {target}{seed_arg} --device cpu   (the seed of nbgrader_config.py "
        f"gives the same points as autograde)"
    )
    return 1 if failed else 0


def _crosscheck(args) -> int:
    from ..nbgrader.crosscheck import crosscheck

    rows = crosscheck(args.course_dir, args.assignment, students=args.student, keep=args.keep)
    differ = 0
    for row in rows:
        status = "same" if row["same"] else "DIFFERENT"
        differ += not row["same"]
        print(f"{row['student']:20s} nbgrader {row['nbgrader']:7.4g}   seqlab grade {row['seqlab']:7.4g}   {status}")
        if row.get("error"):
            print(f"    not exported: {row['error']}")
        for qualname, (a, b) in row["differences"].items():
            print(f"    {qualname}: nbgrader {a:.4g}, seqlab grade {b:.4g}")
    print(f"{len(rows)} submission(s), {differ} different")
    return 1 if differ else 0


def _autograde(args) -> int:
    from ..nbgrader.autograde import DEFAULT_TIMEOUT_S, autograde
    from .grade_all import Progress

    report = autograde(
        args.course_dir,
        args.assignments,
        jobs=args.jobs,
        keep=args.keep,
        timeout=args.timeout or DEFAULT_TIMEOUT_S,
        progress=Progress(),
    )
    from ..nbgrader.handin import shown

    for outcome in report.outcomes:
        if outcome.graded:
            scores = ", ".join(f"{a} {s:.4g}/{m:.4g}" for a, (s, m) in outcome.scores.items())
            print(f"{shown(outcome.student):20s} {scores}")
        for warning in outcome.warnings:
            print(f"  warning: {shown(warning)}", file=sys.stderr)
    for error in report.errors:
        print(f"error: {error}", file=sys.stderr)
    for outcome in report.not_graded:
        print(
            f"NOT GRADED {shown(outcome.student)}: {shown(outcome.reason)} (nothing written to the gradebook for "
            f"them; fix and rerun, or use `nbgrader autograde`)"
        )
    print(
        f"{len(report.outcomes) - len(report.not_graded)} of {len(report.outcomes)} student(s) graded "
        f"({', '.join(report.assignments)}; seed {report.seed}); the gradebook now holds their grades: "
        f"`nbgrader export`, `nbgrader generate_feedback`, formgrader"
        + (f"; seqlab's reports in {report.work}/results" if report.work else "")
        + (f"; {len(report.not_graded)} NOT GRADED" if report.not_graded else "")
    )
    return 1 if report.not_graded or report.errors else 0
