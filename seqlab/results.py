"""The result model every grader produces and every report consumes.

One ``TestResult`` per graded test (code) or question (exam); ``GradingResult`` holds them
with the run's metadata. Reports in ``seqlab.reports`` only read this model.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PASSED, FAILED = "passed", "failed"


@dataclass
class TestResult:
    name: str                     # "<module>.<function>: what is checked", e.g. "optimizers.adam: ..."
    score: float
    max_score: float
    output: str = ""              # feedback shown to the student
    visibility: str = "visible"   # Gradescope: visible | hidden | after_due_date | after_published
    hint: str = ""                # the known mistake this failure looks like, if any
    details: dict[str, Any] = field(default_factory=dict)   # case, errors, worst index, seed...
    voided_by: str = ""           # the rule that voided this test's points (forbidden op, ...)

    @property
    def status(self) -> str:
        return PASSED if self.score >= self.max_score - 1e-9 and not self.voided_by else FAILED

    @property
    def function(self) -> str:
        """``module.function`` (the grouping key); everything before the first colon."""
        return self.name.split(":", 1)[0].strip()

    @property
    def module(self) -> str:
        return self.function.split(".", 1)[0]


@dataclass
class GradingResult:
    tests: list[TestResult]
    submission: str = ""
    seed: int | None = None
    device: str = "cpu"
    execution_time: float = 0.0
    errors: list[str] = field(default_factory=list)   # problems outside any one test (import errors...)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tests), 4)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.tests), 4)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0

    def by_function(self) -> dict[str, tuple[float, float]]:
        """``{module.function: (score, max_score)}`` in first-seen order."""
        table: dict[str, list[float]] = {}
        for t in self.tests:
            entry = table.setdefault(t.function, [0.0, 0.0])
            entry[0] += t.score
            entry[1] += t.max_score
        return {name: (round(s, 4), round(m, 4)) for name, (s, m) in table.items()}

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["score"], data["max_score"] = self.score, self.max_score
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GradingResult":
        tests = [TestResult(**{k: v for k, v in t.items() if k in TestResult.__dataclass_fields__})
                 for t in data.get("tests", [])]
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "tests"}
        return cls(tests=tests, **fields)

    def save(self, path: Path) -> None:
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "GradingResult":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
