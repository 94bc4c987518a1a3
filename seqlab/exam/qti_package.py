"""The LMS package: the quizzes ``qti`` and ``qti_pool`` write, zipped with their IMS manifest,
byte-reproducible.

``seqlab exam qti`` writes ``exam-qti.zip`` (the class's one quiz, ``qti_pool``; or, with
``--per-student``, one quiz per student) and, beside it, ``qti-skipped.txt``: the questions that
stay on the paper and why (``qti.travels``), which the quiz's rules also name.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from .qti import Skipped, assessment_xml, safe_ident
from .qti_pool import one_quiz_xml, one_variant
from .variants import ExamInstance

CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed: the same exam gives the same bytes


def manifest_xml(idents: list[str]) -> bytes:
    root = ET.Element("manifest", identifier="seqlab-exam", xmlns=CP_NS)
    ET.SubElement(root, "organizations")
    resources = ET.SubElement(root, "resources")
    for ident in idents:
        resource = ET.SubElement(
            resources, "resource", identifier=ident, type="imsqti_xmlv1p2", href=f"{ident}/{ident}.xml"
        )
        ET.SubElement(resource, "file", href=f"{ident}/{ident}.xml")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _add(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def write_qti(
    instances: list[ExamInstance], out: Path, name: str = "exam-qti.zip", *, per_student: bool = False
) -> tuple[Path, list[Skipped]]:
    """One zip with the class's one quiz, drawing from the students' variants (or, with
    ``per_student``, one quiz per student); returns its path and the questions that cannot travel."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    idents: list[str] = []
    skipped_all: list[Skipped] = []
    with zipfile.ZipFile(path, "w") as zf:
        if not per_student:
            data, skipped_all = one_quiz_xml(instances)
            _add(zf, "seqlab-variants/seqlab-variants.xml", data)
            idents.append("seqlab-variants")
        for inst in instances if per_student else ():
            ident = safe_ident(f"seqlab-{inst.student}")
            data, skipped = assessment_xml(inst)
            _add(zf, f"{ident}/{ident}.xml", data)
            idents.append(ident)
            skipped_all += skipped
        _add(zf, "imsmanifest.xml", manifest_xml(idents))
    # beside the package, not in it: an LMS importer may refuse files the manifest does not list
    lines = ["Questions that stay on the paper/HTML exam (an LMS quiz cannot check them):"]
    lines += sorted({f"{s.question}: {s.reason}" for s in skipped_all}) or ["none"]
    if not per_student and len(instances) > 1:
        # the class quiz's vector questions: one variant for everyone, said where the instructor reads
        shared = one_variant(instances)
        lines += ["", "Questions every LMS student is asked in the same variant (an LMS group cannot keep a"]
        lines += ["variant's entries together; --per-student keeps each student's own):"]
        lines += [f"Question {v.number} ({v.id}): {student}'s variant" for v, student in shared] or ["none"]
    (out / "qti-skipped.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, skipped_all
