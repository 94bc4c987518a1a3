"""The one tolerance type: how far an answer may be from the expected value and still count.

Used by grading_config.yaml's per-dtype tolerances (``seqlab.config``, with the reason each
value was chosen) and by the exam's numeric questions (``seqlab.exam``). The test is the one
``torch.isclose`` uses: ``|answer - expected| <= atol + rtol * |expected|``, element by element.
Exam files spell the two bounds ``rel`` and ``abs``; both names read the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Tolerance:
    rtol: float = 1e-3
    atol: float = 1e-4
    # why this value (grading_config.yaml requires it); not part of what the tolerance accepts
    why: str = field(default="", compare=False)

    @property
    def rel(self) -> float:
        return self.rtol

    @property
    def abs(self) -> float:
        return self.atol

    def accepts(self, answer: float, expected: float) -> bool:
        return abs(answer - expected) <= self.atol + self.rtol * abs(expected)

    def describe(self) -> str:
        """How the tolerance reads in feedback: "within 0.1% relative + 0.0001 absolute"."""
        if self.rtol == 0 and self.atol == 0:
            return "exact values"
        parts = []
        if self.rtol:
            parts.append(f"{self.rtol * 100:g}% relative")
        if self.atol:
            parts.append(f"{self.atol:g} absolute")
        return "within " + " + ".join(parts)
