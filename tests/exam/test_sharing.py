"""Papers no two students can share: over a class of 300, no numeric key is held by more than 2%.

A key shared by many students can be passed on; the bank's generators draw from ranges wide
enough that the most common key of every numeric question of the final is held by at most 6 of
300 students (a pool's question by 6 of those who drew it, at most). Choice and true/false
questions are out of scope: their letters are shuffled per student, their answers few by nature.
"""

from __future__ import annotations

from collections import Counter

import pytest

from seqlab.exam.examfile import load_exam
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM

CLASS = [f"s{n:05d}" for n in range(300)]
MOST_SHARED = 0.02


@pytest.mark.bank  # 300 papers drawn: about 10 s
def test_no_numeric_key_is_shared_by_more_than_2_percent_of_300_students():
    exam = load_exam(DEFAULT_EXAM)
    keys: dict[str, Counter] = {}
    for student in CLASS:
        for v in make_instance(exam, student).variants:
            if v.question.kind == "numeric":
                keys.setdefault(v.id, Counter())[v.key] += 1
    # every numeric question of the final was drawn (the exam's own count: questions come and go)
    assert set(keys) == {q.id for q in exam.questions if q.question.kind == "numeric"}
    shared = {qid: c.most_common(1)[0] for qid, c in keys.items() if c.most_common(1)[0][1] > MOST_SHARED * len(CLASS)}
    assert not shared, shared
