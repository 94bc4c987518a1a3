"""The exam's user errors: a file an instructor or a student can fix, named in the message."""

from __future__ import annotations

from ..errors import SeqlabError


class ExamError(SeqlabError, ValueError):
    """An exam file that cannot be used; the message names the file, the entry and the problem."""


class QuestionError(SeqlabError, ValueError):
    """A question of the bank declared wrongly (its author's to fix); the message names it."""


class AnswersError(SeqlabError, ValueError):
    """An answers file that cannot be graded; the message names the file and the problem."""


def yaml_problem(exc: Exception, text: str) -> str:
    """A YAML syntax error as "not valid YAML at line N: what", N the line to fix.

    PyYAML names the line where its parser gave up. For a quote left open that is a later line (a
    quoted string may span lines, so the parser reads on into the next entry), so the first line
    before it with an unmatched double quote is named instead: the one a student must fix.
    """
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return f"not valid YAML: {problem}"
    line = mark.line + 1
    for number, source in enumerate(text.splitlines()[:line], start=1):
        body = source.split(" #", 1)[0].replace('\\"', "")
        if body.count('"') % 2:
            return f"not valid YAML at line {number}: a quoted string opened on this line is not closed"
    return f"not valid YAML at line {line}, column {mark.column + 1}: {problem}"
