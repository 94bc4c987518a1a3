"""``autograder.zip`` in the layout Gradescope's autograder specification asks for.

At the zip's root: ``setup.sh`` (run once when Gradescope builds the image) and
``run_autograder`` (run for every submission). Beside them ``course/``: the seqlab package with
its ``pyproject.toml`` and the grading lock (setup.sh installs exactly the lock, then seqlab), the reference
``solutions/``, the hidden ``graders/``, the report templates and ``grading_config.yaml``.
Gradescope unpacks the zip into ``/autograder/source``, which students never see; inside the
image, seqlab's isolated runner refuses student code any read of the solutions, graders and
config. The zip is byte-reproducible: the same course gives the same bytes.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

from ..errors import SeqlabError

BUNDLE_NAME = "autograder.zip"
COURSE_DIR = "course"  # where the course sits inside the zip (and /autograder/source)
_EPOCH = (1980, 1, 1, 0, 0, 0)  # zip's earliest time: fixed so that two builds are identical
_SKIPPED = {"__pycache__", ".pytest_cache", ".mypy_cache"}
# folders of seqlab/ that grading never imports: the exam bank's loader and vocabulary (the
# questions themselves are the course's exams/questions/, which the bundle never carries)
EXCLUDED_FROM_PACKAGE = ("exam/bank",)
EXECUTABLES = {"setup.sh", "run_autograder"}


class BundleError(SeqlabError, RuntimeError):
    """The bundle could not be built (a missing course folder, a bad config)."""


def _tree(
    folder: Path,
    arc_prefix: str,
    *,
    top_level_only: bool = False,
    suffixes: tuple[str, ...] = (),
    excluded: tuple[str, ...] = (),
) -> dict[str, bytes]:
    if not folder.is_dir():
        raise BundleError(f"{folder}: missing (the autograder needs it)")
    files: dict[str, bytes] = {}
    for path in sorted(folder.iterdir() if top_level_only else folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or any(part in _SKIPPED or part.startswith(".") for part in rel.parts):
            continue
        if any(rel.as_posix().startswith(prefix + "/") for prefix in excluded):
            continue
        if path.suffix == ".pyc" or (suffixes and path.suffix not in suffixes):
            continue
        files[f"{arc_prefix}/{rel.as_posix()}"] = path.read_bytes()
    return files


def _render(template: str, **values) -> bytes:
    from .. import templating
    from ..paths import TEMPLATES_DIR

    # the bundle's shell and Python files keep every line as written: no block trimming
    env = templating.environment(TEMPLATES_DIR / "gradescope", autoescape=False, trim_blocks=False)
    return env.get_template(template).render(**values).encode("utf-8")


def bundle_files(*, config_path: Path | None = None) -> dict[str, bytes]:
    """Every file of the bundle: ``{path inside the zip: bytes}``."""
    from ..config import load_config
    from ..defaults import GRADING_LOCK, PYTHON_VERSION, TORCH_CPU_INDEX, TORCH_VERSION
    from ..paths import CONFIG_PATH, GRADERS_DIR, SOLUTIONS_DIR, TEMPLATES_DIR
    from .autograder import GRADER_FAILED

    config_path = Path(config_path or CONFIG_PATH)
    config = load_config(config_path)  # a bad config stops here, not on Gradescope
    package_dir = Path(__file__).resolve().parent.parent
    project_dir = package_dir.parent
    fallback = {
        "score": 0,
        "max_score": round(config.max_score, 4),
        "execution_time": 0,
        "output": GRADER_FAILED,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }
    files = {
        "setup.sh": _render(
            "setup.sh.j2",
            torch_version=TORCH_VERSION,  # the lock's (tests/project/test_lock.py keeps them equal)
            python_version=PYTHON_VERSION,
            cpu_index=TORCH_CPU_INDEX,
            grading_lock=GRADING_LOCK,
        ),
        "run_autograder": _render("run_autograder.j2", fallback_results=json.dumps(fallback)),
        f"{COURSE_DIR}/pyproject.toml": (project_dir / "pyproject.toml").read_bytes(),
        f"{COURSE_DIR}/{GRADING_LOCK}": (project_dir / GRADING_LOCK).read_bytes(),
        # pyproject.toml names README.md as the long description, so the build needs one.
        f"{COURSE_DIR}/README.md": (
            f"# {config.course_title or config.course_id}: seqlab autograder\n\n"
            "Written by `seqlab gradescope`; see the course repository's docs/gradescope.md.\n"
        ).encode(),
        f"{COURSE_DIR}/grading_config.yaml": config_path.read_bytes(),
    }
    # Every file in the image can reach a student through an error message their code raises, so
    # what grading does not need stays out: the exam question bank (the solutions, graders and
    # config are needed, and the runner refuses student code any read of them).
    files.update(_tree(package_dir, f"{COURSE_DIR}/seqlab", excluded=EXCLUDED_FROM_PACKAGE))
    files.update(_tree(SOLUTIONS_DIR, f"{COURSE_DIR}/solutions", suffixes=(".py",)))
    files.update(_tree(GRADERS_DIR, f"{COURSE_DIR}/graders"))
    # Only the report templates: the exam, notebook and workflow templates play no part in grading.
    files.update(_tree(TEMPLATES_DIR, f"{COURSE_DIR}/templates", top_level_only=True, suffixes=(".j2",)))
    return files


def write_zip(files: dict[str, bytes], path: Path) -> Path:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that the modes below are honoured on extraction
            info.external_attr = (0o100755 if name in EXECUTABLES else 0o100644) << 16
            zf.writestr(info, files[name])
    os.replace(tmp, path)
    return path


def build_bundle(out_dir: Path, *, config_path: Path | None = None) -> Path:
    """Write ``OUT_DIR/autograder.zip``; returns its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return write_zip(bundle_files(config_path=config_path), out_dir / BUNDLE_NAME)
