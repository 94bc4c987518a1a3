"""`seqlab exam ...`: render per-student exams, write keys, grade answers, refresh the coverage table.

seqlab exam render --exam exams/final.yaml --student s123 --out DIR [--notebook] [--pdf]
seqlab exam key    --exam exams/final.yaml --student s123 --out DIR [--pdf]
seqlab exam grade  ANSWERS.yaml [--exam exams/final.yaml] [--student s123] [--out DIR]
seqlab exam grade-all ANSWERS_DIR --out DIR [--exam exams/final.yaml] [--roster ROSTER.csv]
seqlab exam check ANSWERS.yaml --student s123 [--exam exams/final.yaml]
seqlab exam check ANSWERS.yaml --shapes check-s123.json      (what students get: no key inside)
seqlab exam qti    --exam exams/final.yaml --students FILE --out DIR [--per-student]
seqlab exam coverage [--check]
seqlab exam lint [--exam exams/final.yaml | --bank] [--papers 40] [--draws 200] [--spread 1000]
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..paths import DEFAULT_EXAM
from .options import path_option


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("exam", help="exams: render variants, answer keys, grade answers")
    sub = p.add_subparsers(dest="exam_command", metavar="SUBCOMMAND")
    sub.required = True

    def exam_arg(q):
        q.add_argument("--exam", type=Path, default=DEFAULT_EXAM, help="exam YAML (default: exams/final.yaml)")

    def students_args(q):
        q.add_argument("--student", action="append", default=[], metavar="ID", help="a student id (repeat for several)")
        path_option(q, "--students", "a file with one student id per line", metavar="FILE")

    def papers_parser(name, help):
        """A subcommand that writes something per student paper: --exam, the students, --out."""
        q = sub.add_parser(name, help=help)
        exam_arg(q)
        students_args(q)
        q.add_argument("--out", type=Path, required=True)
        return q

    r = papers_parser("render", "render each student's exam (Markdown, HTML, and a notebook if asked)")
    r.add_argument("--notebook", action="store_true", help="also write an nbgrader notebook per student")
    r.add_argument("--no-html", action="store_true", help="skip the HTML page")
    r.add_argument(
        "--pdf", action="store_true", help="also write a printable PDF per student and exams-all.pdf with every paper"
    )
    r.set_defaults(func=run_render)

    k = papers_parser("key", "write each student's answer key (YAML to grade, Markdown with solutions)")
    k.add_argument("--pdf", action="store_true", help="also write key PDFs (one per student and keys-all.pdf)")
    k.set_defaults(func=run_key)

    g = sub.add_parser("grade", help="grade one answers file")
    g.add_argument("answers", type=Path)
    exam_arg(g)
    g.add_argument("--student", default=None, help="check the file is this student's")
    path_option(g, "--out", "write results.json (Gradescope) and the other reports here")
    g.add_argument("--quiet", action="store_true", help="only the score line")
    g.set_defaults(func=run_grade)

    a = sub.add_parser("grade-all", help="grade every answers file in a folder; writes gradebook.csv")
    a.add_argument("answers_dir", type=Path)
    exam_arg(a)
    a.add_argument("--out", type=Path, required=True)
    path_option(
        a, "--roster", "columns file,student: whose each file is (default: the file or folder name)", metavar="CSV"
    )
    from ..lms import add_options

    add_options(a)
    a.set_defaults(func=run_grade_all)

    ch = sub.add_parser("check", help="before hand-in: report answers the grader cannot read (never correctness)")
    ch.add_argument("answers", type=Path)
    exam_arg(ch)
    ch.add_argument("--student", default=None, help="the student id (with --exam)")
    path_option(ch, "--shapes", "check-ID.json written next to a rendered exam: no exam file needed", metavar="JSON")
    ch.set_defaults(func=run_check)
    qti = papers_parser("qti", "export the class's LMS quiz (QTI 1.2 zip, question groups) for Canvas/Moodle")
    qti.add_argument(
        "--per-student",
        action="store_true",
        help="one quiz per student with that student's variant (each to assign by hand), instead of the "
        "class's one quiz whose questions are groups of the students' variants, the LMS drawing one each",
    )
    # the class's one quiz was once asked for by this flag; it is the default now, and scripts keep working
    qti.add_argument("--variant-pool", action="store_true", help="the default: the class's one quiz")
    qti.set_defaults(func=run_qti)

    li = sub.add_parser(
        "lint", help="the bank lint over many papers, and the spread of the papers (exit 1 on a finding)"
    )
    exam_arg(li)
    li.add_argument("--bank", action="store_true", help="lint the whole bank as one exam instead of --exam")
    li.add_argument("--papers", type=int, default=40, help="students' papers rendered and linted (default 40)")
    li.add_argument("--draws", type=int, default=200, help="draws of each numeric question checked (default 200)")
    li.add_argument("--spread", type=int, default=0, metavar="N", help="also measure N papers' minutes and work")
    li.set_defaults(func=run_lint)

    c = sub.add_parser("coverage", help="write docs/coverage.md (notes sections -> questions, exercises)")
    c.add_argument("--check", action="store_true", help="only check; exit 1 when docs/coverage.md is stale")
    path_option(c, "--out", "where to write (default: docs/coverage.md)")
    c.set_defaults(func=run_coverage)


def _exam(path: Path):
    from ..exam.examfile import load_exam

    return load_exam(path)


def _students(args) -> list[str]:
    from ..errors import UserError
    from ..exam.draws import check_student_id

    ids = list(args.student)
    if args.students is not None:
        try:
            lines = args.students.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise UserError(f"{args.students}: cannot read: {exc.strerror or exc}") from None
        ids += [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not ids:
        raise UserError("give at least one --student ID (or --students FILE)")
    return list(dict.fromkeys(check_student_id(s) for s in ids))


def run_render(args) -> int:
    from ..exam.render import write_exam

    return _write_papers(
        args, lambda inst: write_exam(inst, args.out, notebook=args.notebook, html=not args.no_html), key=False
    )


def run_key(args) -> int:
    from ..exam.render import write_key

    return _write_papers(args, lambda inst: write_key(inst, args.out), key=True)


def _write_papers(args, write, *, key: bool) -> int:
    """Each student's paper (or key) through ``write``, then the PDFs when asked."""
    from ..exam.variants import make_instance

    exam = _exam(args.exam)
    instances = []
    for student in _students(args):
        instances.append(make_instance(exam, student))
        paths = write(instances[-1])
        print(f"{student}: " + ", ".join(str(p) for p in paths))
    if args.pdf:
        _print_pdfs(instances, args.out, key=key)
    return 0


def _print_pdfs(instances, out, *, key: bool) -> None:
    from ..exam.pdf import write_pdfs

    paths = write_pdfs(instances, out, key=key)
    print("PDF: " + ", ".join(str(p) for p in paths))


def run_qti(args) -> int:
    from ..errors import UserError
    from ..exam.qti_package import write_qti
    from ..exam.variants import make_instance

    exam = _exam(args.exam)
    instances = [make_instance(exam, student) for student in _students(args)]
    if args.per_student and args.variant_pool:
        raise UserError("--per-student and --variant-pool ask for different packages: give one")
    path, skipped = write_qti(instances, args.out, per_student=args.per_student)
    on_paper = len(instances[0].variants)
    stays = len({s.question for s in skipped if s.student == instances[0].student})
    if args.per_student:
        print(f"wrote {path}: {len(instances)} quiz(zes), one per student (each to assign to its student)")
    else:
        print(f"wrote {path}: one quiz for the class, drawing from the variants of {len(instances)} student id(s)")
    print(f"{on_paper - stays} of the {on_paper} questions on {instances[0].student}'s paper are in the quiz")
    if skipped:
        print(
            f"{len({s.question for s in skipped})} question(s) cannot travel to an LMS quiz (named in the quiz's "
            f"rules and in {Path(args.out) / 'qti-skipped.txt'}, with why); they stay on the paper/HTML exam"
        )
    if not args.per_student and len(instances) > 1:
        from ..exam.qti_pool import one_variant

        shared = one_variant(instances)
        if shared:
            print(
                f"{len(shared)} question(s) with several entries are asked of every LMS student in "
                f"{instances[0].student}'s variant (listed in {Path(args.out) / 'qti-skipped.txt'}; "
                "--per-student keeps each student's own)"
            )
    return 0


def _print_result(result, file=None) -> None:
    file = file or sys.stdout
    for t in result.tests:  # in paper order, each by its number and id
        mark = "ok " if t.status == "passed" else ("~  " if t.score > 0 else "-- ")
        number = t.details.get("question", "")
        print(
            f"{mark}{t.score:5.4g} / {t.max_score:<4.4g} Q{number} {t.name.split(':', 1)[0][len('exam.') :]}: {t.output}",
            file=file,
        )
    for e in result.errors:
        print(f"note: {e}", file=file)
    print(f"{result.submission}: {result.score:.4g} / {result.max_score:.4g} ({result.percent:.1f}%)", file=file)


def run_grade(args) -> int:
    from ..exam.paper import grade_file
    from ..reports import write_all

    result = grade_file(_exam(args.exam), args.answers, student=args.student)
    if args.quiet:
        print(f"{result.submission}: {result.score:.4g} / {result.max_score:.4g} ({result.percent:.1f}%)")
    else:
        _print_result(result)
    if args.out is not None:
        paths = write_all(result, args.out)
        print(f"reports: {args.out}/ ({', '.join(paths)})")
    return 0


def run_grade_all(args) -> int:
    from ..exam.grading import grade_folder, gradebook_csv, load_roster
    from ..gradebook import write_text_atomic
    from ..reports import write_all

    exam = _exam(args.exam)
    roster = load_roster(args.roster) if args.roster is not None else None
    rows = grade_folder(exam, args.answers_dir, roster)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # The grades first: gradebook.csv is written before any report, and a report that fails is an
    # error in the log (and the exit status), never a lost grade.
    write_text_atomic(out / "gradebook.csv", gradebook_csv(exam, rows))
    failed: list[str] = []
    for row in rows:
        if row.result is not None:
            try:
                write_all(row.result, out / row.student, html=False)
            except (OSError, ValueError) as exc:
                failed.append(f"{row.student}'s reports could not be written: {exc}")
            print(
                f"{row.student}: {row.result.score:.4g} / {row.result.max_score:.4g} ({row.result.percent:.1f}%)"
                + (f"  FLAG: {row.flag}" if row.flag else "")
            )
        else:
            print(f"error: {row.reason}", file=sys.stderr)
    from ..lms import report, write_lms

    grades = {row.student: row.result.score if row.result else None for row in rows if row.student}
    max_score = max((r.result.max_score for r in rows if r.result is not None), default=0.0)
    try:
        print(report(*write_lms(out, grades, max_score, assignment=args.lms_assignment, roster_path=args.lms_roster)))
    except (OSError, ValueError) as exc:
        failed.append(f"the LMS files could not be written: {exc}")
    from ..exam.items import class_notice, write_item_analysis

    try:
        write_item_analysis(exam, rows, out)
        if class_notice(rows):
            print(f"note: {class_notice(rows)}")
    except (OSError, ValueError, ArithmeticError) as exc:
        failed.append(f"the item analysis could not be written: {exc}")
    for problem in failed:
        print(f"error: {problem}", file=sys.stderr)
    bad = sum(1 for r in rows if r.result is None)
    print(
        f"graded {len(rows) - bad} of {len(rows)} answers file(s); gradebook: {out / 'gradebook.csv'}; "
        f"item analysis: {out / 'item_analysis.csv'}, {out / 'class_report.html'}"
        + (f"; {bad} NOT GRADED (named above)" if bad else "")
    )
    return 1 if bad or failed else 0


def run_check(args) -> int:
    from ..errors import UserError
    from ..exam.answers import check_readable, load_answers, load_shapes
    from ..exam.draws import check_student_id
    from ..exam.paper import check_answers

    claimed, answers = load_answers(args.answers, require_student=False)
    if args.shapes is not None:
        student, shapes = load_shapes(args.shapes)
        if args.student is not None and check_student_id(args.student) != student:
            raise UserError(f"{args.shapes} is student {student!r}'s, not {args.student!r}'s")
        problems = check_readable(shapes, answers, quiet=True)
    else:
        if args.student is None:
            raise UserError("give --student ID (with --exam) or --shapes check-ID.json")
        student = check_student_id(args.student)
        problems = check_answers(_exam(args.exam), student, answers)
    if claimed != student:
        problems.insert(0, f"the file says student: {claimed!r}; write student: {student!r}")
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} problem(s); only readability is checked, not whether answers are right")
        return 1
    print("all answers readable")
    return 0


def run_lint(args) -> int:
    from ..exam.bank_lint import lint_findings, spread
    from ..exam.examfile import all_questions_exam

    exam = all_questions_exam(seed=20261215) if args.bank else _exam(args.exam)
    found = lint_findings(exam, args.papers, args.draws, coincidences=not args.bank)
    for line in found:
        print(line)
    if args.spread:
        print("\n".join(spread(exam, args.spread).lines()))
    print(f"{len(found)} finding(s) over {args.papers} papers and {args.draws} draws of each question")
    return 1 if found else 0


def run_coverage(args) -> int:
    from ..exam.coverage import COVERAGE_PATH, EXAM_FOCUS, coverage_markdown, missing_focus

    path = args.out or COVERAGE_PATH
    text = coverage_markdown()
    if args.check:
        failed = False
        for tag in missing_focus():
            print(
                f"exam focus {tag} ({EXAM_FOCUS[tag]}): no main-topic question on every paper of {DEFAULT_EXAM.name}",
                file=sys.stderr,
            )
            failed = True
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current != text:
            print(f"{path} is stale: run `seqlab exam coverage`", file=sys.stderr)
            failed = True
        if failed:
            return 1
        print(f"{path} is up to date; every exam-focus section is a main topic of the final exam")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
