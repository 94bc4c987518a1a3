"""Render the student repository: every file a student gets, as text, in memory.

Deterministic: the same course gives the same bytes, so two releases can be diffed. The stubs
are the ones ``seqlab build`` writes (one writer, :mod:`seqlab.regions`), the public tests are
copied, and the README, ``pyproject.toml``, ``.gitignore`` and the student workflow come from
``templates/student/``.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from .. import contract, templating
from ..build import render_stubs
from ..defaults import PYTHON_VERSION, TORCH_CPU_INDEX, TORCH_VERSION
from ..paths import COURSE_ROOT, SOLUTIONS_DIR, TEMPLATES_DIR
from ..regions import stub_module
from .leaks import ReleaseError

PUBLIC_TESTS_DIR = COURSE_ROOT / "public_tests"
DEFAULT_PROJECT = "sequence-models-exercises"


def template_environment(templates_dir: Path, *, workflow: bool = False):
    """The jinja2 environment of the student files and both workflows; workflow templates use
    ``[= =]`` / ``[% %]`` so GitHub's own ``${{ }}`` expressions stay literal."""
    delimiters: dict[str, Any] = (
        dict(
            variable_start_string="[=",
            variable_end_string="=]",
            block_start_string="[%",
            block_end_string="%]",
            comment_start_string="[#",
            comment_end_string="#]",
        )
        if workflow
        else {}
    )
    return templating.environment(templates_dir, autoescape=False, **delimiters)


def _first_docstring_line(source: str, name: str) -> str:
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            doc = ast.get_docstring(node) or ""
            line = doc.strip().splitlines()[0].rstrip(".") if doc.strip() else ""
            return line.replace("``", "`").replace(":func:`", "`")  # a Sphinx role reads as noise in Markdown
    return ""


def _lab_parts_to_write(source: str, module: str, parts: tuple[str, ...]) -> list[dict]:
    """The lab parts of ``module`` whose stub the student fills in (a lab model's forward; a
    task generator given complete is left out), each with the labs that call it."""
    stub = {n.name: n for n in ast.parse(stub_module(source, module)).body if isinstance(n, ast.FunctionDef)}
    defs = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
    labs = [contract.split(q)[1] for q in contract.LABS if contract.split(q)[0] == module]
    written = []
    for qualname in parts:
        part_module, _, name = qualname.partition(".")
        if part_module != module or name not in stub:
            continue
        raises = any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(stub[name]))
        if not raises:
            continue
        callers = [
            lab
            for lab in labs
            if any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == name for n in ast.walk(defs[lab]))
        ]
        written.append(
            {
                "name": name,
                "qualname": qualname,
                "signature": f"({ast.unparse(defs[name].args)})",
                "labs": callers,
                "summary": _first_docstring_line(source, name),
            }
        )
    return written


def course_view(config, solutions_dir: Path) -> dict:
    """What the student README shows: topics, functions, points, rules, tolerances, limits."""
    topics = []
    parts = contract.lab_parts(Path(solutions_dir))
    for module in contract.MODULES:
        source = (Path(solutions_dir) / f"{module}.py").read_text(encoding="utf-8")
        functions = []
        for qualname in contract.functions_of(module):
            rules = config.rules(qualname)
            name = contract.split(qualname)[1]
            functions.append(
                {
                    "name": name,
                    "qualname": qualname,
                    "signature": contract.SIGNATURES[qualname],
                    "points": rules.points,
                    "complexity_points": rules.complexity_points,
                    "forbidden": list(rules.forbidden),
                    "summary": _first_docstring_line(source, name),
                }
            )
        topics.append(
            {
                "module": module,
                "functions": functions,
                "lab_parts": _lab_parts_to_write(source, module, parts),
                "points": sum(f["points"] for f in functions),
            }
        )
    groups: dict[tuple, list[str]] = {}  # functions that share one list of forbidden patterns
    for topic in topics:
        for f in topic["functions"]:
            if f["forbidden"]:
                groups.setdefault(tuple(f["forbidden"]), []).append(f["qualname"])
    forbidden = [{"functions": names, "patterns": list(patterns)} for patterns, names in groups.items()]
    return {
        "title": config.course_title or "Sequence models",
        "topics": topics,
        "graded": sum(len(t["functions"]) for t in topics),
        "lab_parts": [p for t in topics for p in t["lab_parts"]],
        "total": config.max_score,
        "forbidden": forbidden,
        "tolerances": {k: {"rtol": v.rtol, "atol": v.atol} for k, v in sorted(config.tolerances.items())},
        "limits": config.limits,
        "subset": subset_view(),
    }


def subset_view() -> dict:
    """The language subset's rules for the student README, from the tables the grader applies."""
    from ..subset import rules

    return {
        "modules": sorted(rules.ALLOWED_MODULES.items()),
        "only": {m: sorted(names) for m, names in sorted(rules.ALLOWED_ONLY.items()) if m != "posixpath"},
        "path_only": sorted(rules.ALLOWED_ONLY["posixpath"]),
        "denied_modules": sorted(rules.DENIED_MODULES.items()),
        "denied_attributes": [
            (owner, sorted(names)) for owner, names in sorted(rules.DENIED_ATTRIBUTES.items()) if names
        ],
        "refused_builtins": sorted((n, why) for n, why in rules.REFUSED_BUILTINS.items() if not n.startswith("_")),
        "dunders": sorted(rules.HARMLESS_DUNDERS),
        "internals": sorted(rules.INTERPRETER_INTERNALS),
    }


def _stub_files(solutions_dir: Path) -> dict[str, str]:
    stubs = {f"exercises/{stub.name}": stub.text for stub in render_stubs(Path(solutions_dir))}
    missing = [m for m in contract.MODULES if f"exercises/{m}.py" not in stubs]
    if missing:
        raise ReleaseError(
            f"{solutions_dir}: no solution file for {', '.join(missing)} (every contract module needs one)"
        )
    return stubs


def _public_test_files(public_tests_dir: Path) -> dict[str, str]:
    public = sorted(Path(public_tests_dir).glob("*.py"))
    if not public:
        raise ReleaseError(f"{public_tests_dir}: no public tests found")
    missing = [m for m in contract.MODULES if not (Path(public_tests_dir) / f"test_{m}.py").is_file()]
    if missing:
        raise ReleaseError(f"{public_tests_dir}: no public tests for {', '.join(missing)} (test_<topic>.py)")
    return {f"tests/{path.name}": path.read_text(encoding="utf-8") for path in public}


SUBSET_DIR = Path(__file__).resolve().parents[1] / "subset"


def _subset_files() -> dict[str, str]:
    """The language subset's own code, shipped as it is: the student's tests apply the grader's
    rules with the grader's code and words."""
    return {f"tests/_subset/{path.name}": path.read_text(encoding="utf-8") for path in sorted(SUBSET_DIR.glob("*.py"))}


def rules_file(config) -> str:
    """``tests/_rules.json``: the rules the student's own tests apply as the grader does (today the
    forbidden operations of README.md's list, public_tests/_forbidden.py), as data from the one
    place they are declared, grading_config.yaml."""
    table = {
        "functions": sorted(contract.FUNCTIONS),
        "labs": sorted(contract.LABS),
        "forbidden": {
            f: list(config.rules(f).forbidden) for f in sorted(config.functions) if config.rules(f).forbidden
        },
    }
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def render_release(
    *,
    solutions_dir: Path = SOLUTIONS_DIR,
    public_tests_dir: Path = PUBLIC_TESTS_DIR,
    templates_dir: Path = TEMPLATES_DIR,
    config=None,
    torch_version: str = TORCH_VERSION,
    python_version: str = PYTHON_VERSION,
    project: str = DEFAULT_PROJECT,
) -> dict[str, str]:
    """Every file of the student repository: relative path -> text. Deterministic."""
    from ..config import load_config

    config = config or load_config()
    files = {**_stub_files(solutions_dir), **_public_test_files(public_tests_dir), **_subset_files()}
    files["tests/_rules.json"] = rules_file(config)
    context = {
        "course": course_view(config, solutions_dir),
        "torch_version": torch_version,
        "python_version": python_version,
        "cpu_index": TORCH_CPU_INDEX,
        "project": project,
    }
    env = template_environment(Path(templates_dir) / "student")
    files["README.md"] = env.get_template("README.md.j2").render(**context)
    files["pyproject.toml"] = env.get_template("pyproject.toml.j2").render(**context)
    files[".gitignore"] = env.get_template("gitignore.j2").render(**context)
    workflow_env = template_environment(Path(templates_dir) / "student", workflow=True)
    files[".github/workflows/check.yml"] = workflow_env.get_template("check.yml.j2").render(**context)
    return {path: files[path] for path in sorted(files)}
