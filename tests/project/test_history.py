"""History lives in the CHANGELOG and the commits, not in the code; what the code cites exists.

An issue number in a comment says when something was written, not why; a path or a module that a
comment or a page cites and that is gone sends the reader nowhere.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = {".py", ".sh", ".j2", ".md", ".yaml", ".yml", ".toml", ".cfg", ".txt"}
# Where the project's own text is: the recorded outputs and the generated stubs are not written
# by hand, and the CHANGELOG is where history belongs.
WRITTEN = ("seqlab", "tests", "graders", "solutions", "public_tests", "benchmarks", "scripts", "templates", "docs")
LEFT_OUT = ("tests/recorded/",)
TOP_FILES = ("Makefile", ".ci/run", "pyproject.toml", "README.md", "grading_config.yaml", "mkdocs.yml")


def _texts() -> dict[str, str]:
    files = [ROOT / name for name in TOP_FILES if (ROOT / name).is_file()]
    for top in WRITTEN:
        files += [p for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    texts = {}
    for path in files:
        name = path.relative_to(ROOT).as_posix()
        if "__pycache__" not in name and not name.startswith(LEFT_OUT):
            texts[name] = path.read_text(encoding="utf-8", errors="replace")
    return texts


TEXTS = _texts()
# "issue 12", "issues 3, 4": this project's tracker. Another project's is cited with its name
# and a '#' ("nbgrader issue #1682"), a pointer to a known limitation, which may stay.
OUR_ISSUE = re.compile(r"\bissues? \d", re.IGNORECASE)


def test_no_issue_numbers_in_the_code():
    hits = [
        f"{name}:{number}: {line.strip()[:100]}"
        for name, text in TEXTS.items()
        if name != "tests/project/test_history.py"
        for number, line in enumerate(text.splitlines(), 1)
        if OUR_ISSUE.search(line)
    ]
    assert not hits, "issue numbers in the code (say why instead; history goes in the CHANGELOG):\n" + "\n".join(hits)


# A path of this repository as the prose cites it: a top folder, then a file or folder name.
CITED = re.compile(
    r"(?<![\w./$-])((?:seqlab|graders|solutions|public_tests|benchmarks|scripts|templates|docs|exams|schemas|"
    r"requirements|examples)/[\w./-]*\w)"
)
# Paths that are not this checkout's: the student repository's, a grading run's, or a pattern.
ELSEWHERE = re.compile(r"seqlab-out|\.\.\.|<|\*|\{")
MODULE = re.compile(r"(?<![\w./])(seqlab(?:\.[a-z_]\w*)+)")


def _exists(cited: str) -> bool:
    path = ROOT / cited.rstrip(".")
    return path.exists() or path.with_suffix(".py").exists()


@functools.cache
def _module_exists(dotted: str) -> bool:
    """``seqlab.a.b`` is a module or package, or a name defined at the top of the longest one."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:k])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            rest = parts[k:]
            if not rest or rest[0].startswith("__"):
                return True
            return bool(
                re.search(
                    rf"^(?:def|class|async def)\s+{rest[0]}\b|^{rest[0]}\b|\b{rest[0]}\b.*import|import.*\b{rest[0]}\b",
                    source.read_text(encoding="utf-8"),
                    re.M,
                )
            )
    return False


def test_every_cited_path_and_module_exists():
    missing = []
    for name, text in TEXTS.items():
        if name.startswith("tests/"):  # tests build files of their own under these names
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for match in CITED.finditer(line):
                if not ELSEWHERE.search(line[match.start() : match.end() + 1]) and not _exists(match.group(1)):
                    missing.append(f"{name}:{number}: {match.group(1)}")
            for match in MODULE.finditer(line):
                if not _module_exists(match.group(1)):
                    missing.append(f"{name}:{number}: {match.group(1)}")
    assert not missing, "cited but not in the tree:\n" + "\n".join(missing)
