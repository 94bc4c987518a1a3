"""JUnit XML: one <testsuite> per module, one <testcase> per graded test.

CI systems (GitHub Actions test reporters, GitLab, Jenkins) read this; a test that did not
earn its full points is a <failure> whose message is the feedback.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from ..results import GradingResult


def to_xml(result: GradingResult) -> ET.ElementTree:
    root = ET.Element(
        "testsuites",
        name="seqlab",
        tests=str(len(result.tests)),
        failures=str(sum(t.status == "failed" for t in result.tests)),
        time=f"{result.execution_time:.3f}",
    )
    suites: dict[str, ET.Element] = {}
    for t in result.tests:
        suite = suites.get(t.module)
        if suite is None:
            suite = suites[t.module] = ET.SubElement(root, "testsuite", name=t.module)
        case = ET.SubElement(suite, "testcase", classname=t.function, name=t.name)
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="score", value=f"{t.score:g}/{t.max_score:g}")
        if t.status == "failed":
            message = t.output.splitlines()[0] if t.output else "did not earn full points"
            failure = ET.SubElement(case, "failure", message=message[:500], type=(t.voided_by and "void") or "mismatch")
            failure.text = t.output + (f"\nLooks like: {t.hint}" if t.hint else "")
    for suite in suites.values():
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    if result.seed is not None:
        ET.SubElement(ET.SubElement(root, "properties"), "property", name="seed", value=str(result.seed))
    return ET.ElementTree(root)


def write(result: GradingResult, path: Path) -> Path:
    path = Path(path)
    tree = to_xml(result)
    ET.indent(tree)
    tmp = path.with_name(path.name + ".tmp")
    tree.write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, path)
    return path
