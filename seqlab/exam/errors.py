"""The exam's user errors: a file an instructor or a student can fix, named in the message."""

from __future__ import annotations

from ..errors import SeqlabError


class ExamError(SeqlabError, ValueError):
    """An exam file that cannot be used; the message names the file, the entry and the problem."""


class QuestionError(SeqlabError, ValueError):
    """A question of the bank declared wrongly (its author's to fix); the message names it."""


class AnswersError(SeqlabError, ValueError):
    """An answers file that cannot be graded; the message names the file and the problem."""
