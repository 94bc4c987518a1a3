"""The class's one LMS quiz: every question a group the LMS draws each student's variant from.

One quiz per student (``qti.assessment_xml``) means one quiz to assign by hand per student (300
for a class of 300). This quiz is imported once and published to the whole course: each of the
paper's questions is a question group (QTI 1.2 ``section`` with ``selection_ordering`` /
``selection_number``, Canvas's "pick N from the group", also read by Moodle's and Blackboard's
QTI importers) holding the variants of the listed student ids, and the LMS draws one per attempt
and grades it. The LMS, not the student id, then decides who gets which variant, and ``seqlab
exam grade`` is not involved.

- A question the exam asks of everyone is a group drawing 1 of its variants; an exam pool
  ("draw k of these") is one group drawing k of all its questions' variants.
- A vector the paper credits per entry (each entry 1/n of the points) is n groups, group i holding
  entry i, worth points/n. The LMS's groups do not nest (no "draw a variant, then all its
  entries"), so groups drawing among the students' variants would draw each entry on its own, and
  a student could meet entry 1 of one variant and entry 2 of another: the same question solved two
  or three times (three blind audits found it). So the class quiz asks every LMS student the same
  variant of a vector question (the first listed student's); the per-student quizzes
  (``--per-student``) keep each student's own. An exam pool of vector questions does not travel.
- What cannot travel (``qti.travels``: formulas, vectors graded all or nothing; and a group whose
  variants have different numbers of entries, whose items could not all be worth the same) stays
  on the paper: the quiz's rules say which and why, and ``qti-skipped.txt`` lists them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from .examfile import ExamQuestion
from .markdown import render_texts
from .model import Variant
from .qti import QTI_NS, Skipped, entries, rules_item, safe_ident, stays_line, travels, variant_item, variant_items
from .timing import check_fits
from .variants import ExamInstance


@dataclass
class Slot:
    """One place on the paper: a question, or an exam pool drawing ``draw`` of its questions."""

    name: str
    draw: int
    points: float
    variants: list[tuple[Variant, ExamQuestion, str]] = field(default_factory=list)  # (variant, question, student)

    def why_not(self) -> str:
        """'' when the slot travels, else why not."""
        for v, _eq, _student in self.variants:
            if travels(v):
                return travels(v)
        counts = sorted({entries(v) for v, _eq, _student in self.variants})
        if self.draw > 1 and counts[-1] > 1:
            return (
                "a pool of questions with several entries: an LMS group draws each entry on its own, so one "
                "student would meet the entries of different questions"
            )
        if len(counts) > 1:
            return (
                f"its variants have {' or '.join(map(str, counts))} entries, and the items an LMS group draws "
                "from are all worth the same points"
            )
        return ""


def slots(instances: list[ExamInstance]) -> list[Slot]:
    """The paper's places in exam order, each with every listed student's variants of it."""
    exam = instances[0].exam
    pools = {p.name: p for p in exam.pools}
    found: dict[str, Slot] = {}
    for eq in exam.questions:
        name = eq.pool or eq.id
        if name not in found:
            found[name] = Slot(name, pools[name].draw if eq.pool else 1, eq.points)
    for inst in instances:
        for v, eq in zip(inst.variants, inst.questions):
            found[eq.pool or eq.id].variants.append((v, eq, inst.student))
    return [slot for slot in found.values() if slot.variants]


def one_variant(instances: list[ExamInstance]) -> list[tuple[Variant, str]]:
    """The vector questions the class's quiz asks every LMS student in one variant (the module's
    docstring): each with the student whose variant it is, for the instructor's list."""
    asked = []
    for slot in slots(instances):
        first, _eq, student = slot.variants[0]
        if not slot.why_not() and entries(first) > 1:
            asked.append((first, student))
    return asked


def _group(top: ET.Element, ident: str, title: str, draw: int, points: float) -> ET.Element:
    group = ET.SubElement(top, "section", ident=safe_ident(ident), title=title)
    selection = ET.SubElement(ET.SubElement(group, "selection_ordering"), "selection")
    ET.SubElement(selection, "selection_number").text = str(draw)
    extension = ET.SubElement(selection, "selection_extension")
    ET.SubElement(extension, "points_per_item").text = f"{points:.10g}"
    return group


def _add_once(group: ET.Element, item: ET.Element, seen: set[bytes]) -> None:
    """Two students with the same parameters have the same variant: one item is enough."""
    presentation, processing = item.find("presentation"), item.find("resprocessing")
    assert presentation is not None and processing is not None  # variant_item writes both
    body = ET.tostring(presentation) + ET.tostring(processing)
    if body not in seen:
        seen.add(body)
        group.append(item)


def one_quiz_xml(instances: list[ExamInstance]) -> tuple[bytes, list[Skipped]]:
    """The class's one quiz (see the module's docstring) and the questions that stay on paper."""
    exam = instances[0].exam
    for inst in instances:
        check_fits(inst)  # as every medium: no paper longer than its duration
        render_texts(inst)
    root = ET.Element("questestinterop", xmlns=QTI_NS)
    assessment = ET.SubElement(root, "assessment", ident="seqlab-variants", title=f"{exam.title} (variants)")
    top = ET.SubElement(assessment, "section", ident="root_section")
    places = slots(instances)
    skipped: list[Skipped] = []
    stays: list[tuple[str, str]] = []
    for slot in places:
        why = slot.why_not()
        if why:
            skipped += [Skipped(student, v.id, travels(v) or why) for v, _eq, student in slot.variants]
            first = slot.variants[0][0]
            # the pool's name is the bank's, not the student's: say what it is instead
            where = f"Question {first.number} (drawn per student among questions of the same kind)"
            stays.append(stays_line(first, why) if slot.name == first.id else (where, why))
    top.append(rules_item(instances[0], stays, "seqlab-rules"))
    for slot in places:
        if slot.why_not():
            continue
        n = entries(slot.variants[0][0])
        titles = [slot.name] if n == 1 else [f"{slot.name} (entry {i + 1} of {n})" for i in range(n)]
        idents = [f"group-{slot.name}"] if n == 1 else [f"group-{slot.name}-{i + 1}" for i in range(n)]
        groups = [_group(top, ident, title, slot.draw, slot.points / n) for ident, title in zip(idents, titles)]
        seen: list[set[bytes]] = [set() for _ in groups]
        # one variant of a vector question for the class (the module's docstring): its entries
        # then always belong together
        for v, eq, student in slot.variants if n == 1 else slot.variants[:1]:
            items = [variant_item(v, student, eq)] if n == 1 else variant_items(v, student, eq, whole_text=True)
            for group, bodies, item in zip(groups, seen, items):
                _add_once(group, item, bodies)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n", skipped
