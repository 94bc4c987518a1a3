"""The leak check: nothing that must stay with the instructor may ship to students.

Every file of a release (and every file already in the folder it is written to) is scanned
for solution markers, any telling line of a solution region, lines of the hidden graders or of
``grading_config.yaml``, mentions of the instructor package, the references, the graders or
that config, and the values of the config's secret-looking keys. A hit is a :class:`Leak`
(``file:line: reason``); ``seqlab release --scan DIR`` runs the same check on any folder.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..contract import SIGNATURES
from ..errors import SeqlabError
from ..paths import CONFIG_PATH, GRADERS_DIR, SOLUTIONS_DIR
from ..regions import SOLUTION_REGIONS


class ReleaseError(SeqlabError, RuntimeError):
    """The release could not be written (bad output folder, missing source)."""


class LeakError(ReleaseError):
    """Something that must stay with the instructor would ship."""

    def __init__(self, leaks: list[Leak], note: str = ""):
        self.leaks = leaks
        shown = "\n".join(f"  {leak}" for leak in leaks[:50])
        more = f"\n  ... and {len(leaks) - 50} more" if len(leaks) > 50 else ""
        super().__init__(f"{note}{len(leaks)} leak(s); nothing of the answer may ship:\n{shown}{more}")


@dataclass(frozen=True)
class Leak:
    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


# --- what must never ship -------------------------------------------------------------------------

MENTIONS = [
    (re.compile(r"seqlab", re.I), "mentions the instructor package (seqlab)"),
    (re.compile(r"\bsolutions\b", re.I), "mentions the reference solutions ('solutions')"),
    (re.compile(r"\bgraders\b", re.I), "mentions the hidden graders ('graders')"),
    (re.compile(r"grading_config", re.I), "mentions grading_config.yaml"),
    # Looser than seqlab/regions.py on purpose: any spelling of a marker, anywhere on a line,
    # is a sign that solution text came along, even where it would not open a region.
    (re.compile(r"(BEGIN|END)[ _]SOLUTION"), "a solution region marker"),
    (re.compile(r"(BEGIN|END)[ _]HIDDEN[ _]TESTS"), "a hidden-tests marker"),
]
SECRET_KEY = re.compile(r"secret|token|passw|api[_-]?key|salt|seed|private", re.I)
MIN_REGION_LINE = 12  # shorter region lines ("else:", "return h") say nothing of the answer,
LONG_REGION_LINE = 28  # nor do short ones without arithmetic ("if mask is not None:", "T = x.shape[1]")
_ARITHMETIC = re.compile(r"[-+*/@%]")
MIN_GRADER_LINE = 40  # grader lines as long as this are specific to the graders
SUBSTRING_LINE = 30  # region lines this long are also caught inside a longer line


def normalize(line: str) -> str:
    return " ".join(line.split())


@dataclass
class Secrets:
    """Normalized lines and values that must not appear in a release, each with where it came from."""

    region_lines: dict[str, str] = field(default_factory=dict)
    grader_lines: dict[str, str] = field(default_factory=dict)
    config_values: dict[str, str] = field(default_factory=dict)
    config_lines: dict[str, str] = field(default_factory=dict)


def _secret_values(node, path="") -> dict[str, str]:
    found = {}
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}" if path else str(key)
            if SECRET_KEY.search(str(key)) and isinstance(value, (str, int)) and not isinstance(value, bool):
                text = str(value)
                if len(text) >= 4:
                    found[text] = where
            found.update(_secret_values(value, where))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.update(_secret_values(value, f"{path}[{i}]"))
    return found


def collect_secrets(
    solutions_dir: Path = SOLUTIONS_DIR, graders_dir: Path = GRADERS_DIR, config_path: Path = CONFIG_PATH
) -> Secrets:
    import yaml

    secrets = Secrets()
    # The contract's function names are public (the stubs carry them): a grader line that only names
    # one, as a formatted `@grades(` marker's first argument does, gives nothing away.
    public: set[str] = {f'"{name}"{end}' for name in SIGNATURES for end in ("", ",")}
    regions = []
    for path in sorted(Path(solutions_dir).glob("*.py")):
        inside, outside = SOLUTION_REGIONS.split(path.read_text(encoding="utf-8"), filename=str(path))
        public |= {normalize(line) for line in outside}
        regions += [(f"solutions/{path.name}:{lineno}", line) for lineno, line in inside]
    for where, line in regions:
        text = normalize(line)
        telling = len(text) >= LONG_REGION_LINE or (len(text) >= MIN_REGION_LINE and _ARITHMETIC.search(text))
        if telling and text not in public:  # a line the stubs show anyway is no secret
            secrets.region_lines.setdefault(text, where)
    for path in sorted(Path(graders_dir).glob("*.py")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            text = normalize(line)
            if len(text) >= MIN_GRADER_LINE and text not in public:
                secrets.grader_lines.setdefault(text, f"graders/{path.name}:{lineno}")
    if Path(config_path).is_file():
        text = Path(config_path).read_text(encoding="utf-8")
        secrets.config_values = _secret_values(yaml.safe_load(text) or {})
        for lineno, line in enumerate(text.splitlines(), start=1):  # a pasted copy of the file
            line = normalize(line)
            if len(line) >= MIN_GRADER_LINE and not line.startswith("#"):
                secrets.config_lines.setdefault(line, f"grading_config.yaml:{lineno}")
    return secrets


def scan(files: dict[str, str], secrets: Secrets) -> list[Leak]:
    """Every leak in ``files`` (relative path -> text), in path and line order."""
    leaks: list[Leak] = []
    long_region = [(text, where) for text, where in secrets.region_lines.items() if len(text) >= SUBSTRING_LINE]
    for path in sorted(files):
        parts = Path(path).parts
        if {"solutions", "graders"} & set(parts) or Path(path).name in ("grading_config.yaml", "grading_config.yml"):
            leaks.append(Leak(path, 1, "a hidden file (reference solutions, graders or the grading config)"))
        for lineno, line in enumerate(files[path].splitlines(), start=1):
            for pattern, reason in MENTIONS:
                if pattern.search(line):
                    leaks.append(Leak(path, lineno, reason))
            text = normalize(line)
            if not text:
                continue
            where = secrets.region_lines.get(text)
            if where is None:
                where = next((w for t, w in long_region if t in text), None)
            if where:
                leaks.append(Leak(path, lineno, f"a line of a solution region ({where}): {text[:80]}"))
            if text in secrets.grader_lines:
                leaks.append(Leak(path, lineno, f"a line of a hidden grader ({secrets.grader_lines[text]})"))
            if text in secrets.config_lines:
                leaks.append(Leak(path, lineno, f"a line of the grading config ({secrets.config_lines[text]})"))
            for value, key in secrets.config_values.items():
                if re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", line):
                    leaks.append(Leak(path, lineno, f"the value of {key} in grading_config.yaml"))
    return leaks


# Never pushed (.git itself, and what the released .gitignore lists): not read by read_tree.
NOT_SHIPPED = (
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    "build",
    "*.egg-info",
    ".ipynb_checkpoints",
    "*.pyc",
)


def read_tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` that a push would ship, as text (undecodable bytes replaced)."""

    def shipped(name: str) -> bool:
        return not any(fnmatch.fnmatch(name, pattern) for pattern in NOT_SHIPPED)

    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if shipped(d)]  # prune: never walk into .git or a venv
        for name in names:
            path = Path(folder) / name
            if shipped(name) and path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_bytes().decode("utf-8", errors="replace")
    return {rel: files[rel] for rel in sorted(files)}
