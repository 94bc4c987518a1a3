"""Inside nbgrader: its ``Autograde`` converter with ``SeqlabGrades`` in place of ``Execute``.

``seqlab nbgrader autograde`` (``autograde.py``) grades the class in isolated children and writes
the grades file; then it starts ``python -m seqlab.nbgrader.record GRADES_FILE --force`` in the
course folder, and this process records those grades the way ``nbgrader autograde`` records what
a kernel printed: nbgrader's own app, config, sanitizing, late penalties and ``SaveAutoGrades``,
with each test cell's output taken from the grades file instead of a run. Nothing here imports
the grader or reads a student's code.

The grades file (JSON), written by ``write_grades_file`` and read only here:
``{"students": {student: {qualname: {"text", "points"}}}, "record": {assignment: [students to
record]}}``. nbgrader is shown exactly those students' folders (``record_only``): never a folder
seqlab did not grade, whatever its name (nbgrader's own ``student_id_exclude`` is a comma-separated
list, and a folder name nbgrader's path pattern cannot match stops its run for everyone).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .gradebook import qualname_of


def write_grades_file(path: Path, *, students: dict[str, dict], record: dict[str, list[str]]) -> Path:
    """``students``: each graded student's test-cell outputs by qualname; ``record``: for each
    assignment to record, the students whose grades nbgrader records (no one else's folder)."""
    path.write_text(json.dumps({"record": record, "students": students}, indent=1, sort_keys=True), encoding="utf-8")
    return path


def record_only(converter, students) -> None:
    """Keep, of the assignment folders nbgrader found (``converter.assignments``, after its
    ``init_notebooks``), only those of ``students``, by exact path."""
    import os

    wanted = {
        os.path.normpath(converter._format_source(converter.coursedir.assignment_id, student)) for student in students
    }
    converter.assignments = {
        folder: found for folder, found in converter.assignments.items() if os.path.normpath(folder) in wanted
    }


def seqlab_grades_class():
    from nbformat.v4 import new_output
    from nbgrader import utils
    from nbgrader.preprocessors import NbGraderPreprocessor
    from traitlets import Unicode

    class SeqlabGrades(NbGraderPreprocessor):
        """Fills each test cell's output from seqlab's isolated grading instead of running a kernel.

        The output is what a test cell prints in a kernel: the feedback on stdout and the points
        as the cell's value, which nbgrader's ``determine_grade`` reads as partial credit. Code
        cells that are not seqlab test cells stay without output (nothing of the student's runs).
        """

        grades_file = Unicode("", help="the JSON written by `seqlab nbgrader autograde`").tag(config=True)

        def preprocess(self, nb, resources):
            with open(self.grades_file, encoding="utf-8") as fh:
                graded = json.load(fh)["students"]
            student = resources["nbgrader"]["student"]
            if student not in graded:
                # Never reached through the command (it excludes such students); a zero here would
                # be a grade for work nobody looked at.
                raise RuntimeError(f"seqlab has no grades for student {student!r}")
            self._cells = graded[student]
            return super().preprocess(nb, resources)

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
                return cell, resources
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            qualname = qualname_of(grade_id)
            entry = self._cells.get(qualname) if qualname else None
            if entry is None:
                # A test cell seqlab does not grade (added by hand): an error output is nbgrader's
                # zero; grade it with `nbgrader autograde` instead.
                self.log.warning("seqlab has no hidden tests for test cell %s: 0 points", grade_id)
                cell.outputs = [
                    new_output(
                        "error",
                        ename="NotGradedBySeqlab",
                        traceback=[],
                        evalue=f"seqlab has no hidden tests for the cell {grade_id}",
                    )
                ]
                return cell, resources
            cell.outputs = [
                new_output("stream", name="stdout", text=entry["text"]),
                new_output("execute_result", data={"text/plain": repr(entry["points"])}, execution_count=None),
            ]
            return cell, resources

    return SeqlabGrades


def nbgrader_main(argv=None) -> None:
    """``python -m seqlab.nbgrader.record GRADES_FILE [nbgrader options]`` in the course folder:
    ``nbgrader autograde`` of each assignment the file names, with ``SeqlabGrades`` in place of
    ``Execute``; one process for all of them (nbgrader's start-up is most of the cost here)."""
    if not Path("nbgrader_config.py").is_file():
        # Elsewhere nbgrader takes the current folder for the course and makes a gradebook.db in it.
        sys.exit(f"{Path.cwd()}: not an nbgrader course folder (no nbgrader_config.py); run this in the course")
    from nbgrader.apps.autogradeapp import AutogradeApp
    from nbgrader.converters import Autograde, NbGraderException
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config
    from traitlets.utils.importstring import import_item

    argv = sys.argv[1:] if argv is None else list(argv)
    grades_file, nbgrader_args = argv[0], argv[1:]
    app = AutogradeApp.instance()
    app.initialize(nbgrader_args)
    configured = (
        app.config.Autograde.get("autograde_preprocessors")
        or Autograde.class_traits()["autograde_preprocessors"].default()
    )
    grades_cls = seqlab_grades_class()
    chain, replaced = [], False
    for pp in configured:
        cls = import_item(pp) if isinstance(pp, str) else pp
        if isinstance(cls, type) and issubclass(cls, Execute):
            chain.append(grades_cls)
            replaced = True
        else:
            chain.append(pp)
    if not replaced:
        app.log.error("Autograde.autograde_preprocessors has no Execute step to replace: %s", configured)
        sys.exit(2)
    overrides = Config()
    overrides.Autograde.autograde_preprocessors = chain
    overrides.SeqlabGrades.grades_file = grades_file
    app.update_config(overrides)
    with open(grades_file, encoding="utf-8") as fh:
        assignments = json.load(fh)["record"]  # {assignment: students to record}

    class RecordOnly(Autograde):
        students: tuple[str, ...] = ()

        def init_notebooks(self) -> None:
            super().init_notebooks()
            record_only(self, self.students)

    failed = []
    for assignment, students in assignments.items():
        app.coursedir.assignment_id = assignment
        converter = RecordOnly(coursedir=app.coursedir, parent=app)
        converter.students = tuple(students)
        try:
            converter.start()
        except NbGraderException:  # nbgrader has logged why; the other assignments still get recorded
            failed.append(assignment)
    if failed:
        app.log.error("nbgrader could not record %s", ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    nbgrader_main()
