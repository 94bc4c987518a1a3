"""The result model every grader produces and every report consumes.

One ``TestResult`` per graded test (code) or question (exam); ``GradingResult`` holds them
with the run's metadata. Reports in ``seqlab.reports`` only read this model.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PASSED, FAILED = "passed", "failed"

# --- text from student code is data --------------------------------------------------------------
# Every message, printed output and error in the model passes through clean_text once (the
# StudentError boundary and this model both apply it; applying it twice changes nothing), so
# each report only has to escape for its own format.
#
# One message: the longest legitimate feedback is a mismatch description plus three traceback
# lines plus 500 characters of printed output, about 1.5 kB; 4000 leaves room for that and stops a
# 4 MB exception text from being copied into every test.
MESSAGE_LIMIT = 4000
# One report: 112 tests times a full message is ~450 kB; past 1 MB of text in total, later
# messages are cut to one line so that results.json stays small enough for Gradescope to show.
REPORT_TEXT_LIMIT = 1_000_000
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# C0 controls but tab and newline, DEL, C1 controls, the bidirectional overrides and isolates
# (they reorder what a reader sees), and the two non-characters XML 1.0 does not allow.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: Any, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` as safe data: valid Unicode (lone surrogates become U+FFFD), no ANSI escapes or
    control characters (a carriage return becomes a newline), at most ``limit`` characters."""
    if not isinstance(text, str):
        text = str(text)
    # Cleaning only removes characters; four times the limit is more than any escape-padded
    # text that is kept, and the work stays bounded whatever size comes in.
    original = len(text)
    text = text[: 4 * limit]
    text = _SURROGATE.sub("\ufffd", text)
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _CONTROL.sub("", text)
    if len(text) > limit or original > 4 * limit:
        text = text[:limit] + " [... more characters cut]"
    return text


def _clean_tree(obj: Any) -> Any:
    if isinstance(obj, str):
        return clean_text(obj)
    if isinstance(obj, dict):
        return {clean_text(k, 200): _clean_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean_tree(v) for v in obj]
    return obj


@dataclass
class TestResult:
    name: str  # "<module>.<function>: what is checked", e.g. "optimizers.adam: ..."
    score: float
    max_score: float
    output: str = ""  # feedback shown to the student
    visibility: str = "visible"  # Gradescope: visible | hidden | after_due_date | after_published
    hint: str = ""  # the known mistake this failure looks like, if any
    details: dict[str, Any] = field(default_factory=dict)  # case, errors, worst index, seed...
    voided_by: str = ""  # the rule that voided this test's points (forbidden op, ...)

    def __post_init__(self):
        self.name, self.output, self.hint = clean_text(self.name), clean_text(self.output), clean_text(self.hint)
        self.voided_by, self.visibility = clean_text(self.voided_by), clean_text(self.visibility, 40)
        self.details = _clean_tree(self.details)

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
    errors: list[str] = field(default_factory=list)  # problems outside any one test (import errors...)
    # how it was graded that a reader must know, not a problem of the submission (no sandbox)
    notices: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # for the instructor, never the student, and worth no points: constructs found in the sources
    # that the grading cannot hold soundly and no honest hand-in needs (seqlab/grading/flags.py),
    # each {"rule", "where", "line", "evidence"}
    review_flags: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self):
        self.review_flags = [_clean_tree(f) for f in self.review_flags if isinstance(f, dict)]
        self.errors = [clean_text(e) for e in self.errors]
        self.notices = [clean_text(n) for n in self.notices]
        self.submission = clean_text(self.submission)
        self.meta = _clean_tree(self.meta)
        budget = REPORT_TEXT_LIMIT - sum(len(e) for e in self.errors + self.notices)
        for t in self.tests:
            size = len(t.output) + len(t.hint)
            if size > budget:
                first = t.output.splitlines()[0][:200] if t.output else ""
                t.output = f"{first} [feedback cut: the report's {REPORT_TEXT_LIMIT} characters are used up]"
                t.hint = ""
                size = len(t.output)
            budget -= size

    # Sums are math.fsum: test points are exact decimals (seqlab.grading.scoring) whose doubles a
    # plain sum can leave one ulp off (0.6667 * 3 + 0.6666 + 0.3333 is 2.9999999999999996).
    @property
    def score(self) -> float:
        return round(math.fsum(t.score for t in self.tests), 4)

    @property
    def max_score(self) -> float:
        return round(math.fsum(t.max_score for t in self.tests), 4)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0

    def by_function(self) -> dict[str, tuple[float, float]]:
        """``{module.function: (score, max_score)}`` in first-seen order."""
        table: dict[str, list[TestResult]] = {}
        for t in self.tests:
            table.setdefault(t.function, []).append(t)
        return {
            name: (round(math.fsum(t.score for t in ts), 4), round(math.fsum(t.max_score for t in ts), 4))
            for name, ts in table.items()
        }

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["score"], data["max_score"] = self.score, self.max_score
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradingResult:
        tests = [
            TestResult(**{k: v for k, v in t.items() if k in TestResult.__dataclass_fields__})
            for t in data.get("tests", [])
        ]
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "tests"}
        return cls(tests=tests, **fields)

    def save(self, path: Path) -> None:
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True), encoding="utf-8", errors="replace")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> GradingResult:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
