"""Fixtures shared by the project's own tests.

``device`` runs every reference test on the CPU and, where one is present, on CUDA: the
same tests, one parameter, so a GPU machine checks everything with one command
(``pytest tests -k cuda`` or ``SEQLAB_TEST_DEVICES=cuda pytest tests``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# A grading trains every lab (seconds of CPU each); the project's tests grade hundreds of
# submissions, so they leave the labs out unless they test one (GradingSettings(labs=True)).
os.environ.setdefault("SEQLAB_LABS", "0")
# Likewise the public tests, which the project's tests run in released repos again and again:
# their lab budget tests train all four labs at full size (~10 s), so they are skipped there;
# tests/labs/test_lab_budgets.py runs them, in the bank.
os.environ.setdefault("LAB_BUDGETS", "off")

# Generated inputs (Hypothesis): in CI every run draws the same examples (derandomized, no example
# database), so a red CI is a fact about the commit, not about a draw; on a developer's machine
# each run draws afresh, which is where new failures are found.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _devices() -> list[str]:
    wanted = os.environ.get("SEQLAB_TEST_DEVICES")
    if wanted:
        return [d.strip() for d in wanted.split(",") if d.strip()]
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(params=_devices())
def device(request) -> torch.device:
    return torch.device(request.param)


@pytest.fixture(params=[torch.float64, torch.float32], ids=["float64", "float32"])
def dtype(request) -> torch.dtype:
    return request.param


@pytest.fixture
def gen() -> torch.Generator:
    """A CPU generator with a fixed seed: reference tests are deterministic."""
    return torch.Generator().manual_seed(20261129)


@pytest.fixture(scope="session", autouse=True)
def single_threaded_torch():
    """The tests' tensors are tiny: intra-op threads only add barrier waits on a 2-core
    machine that is running other processes (measured: 4x slower reference tests)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session", autouse=True)
def no_stray_gradebook():
    """nbgrader makes a gradebook.db wherever it is pointed (its apps: the current folder); one
    made by a test in the repository or the folder pytest ran from once got committed."""
    places = {Path(__file__).resolve().parents[1] / "gradebook.db", Path.cwd() / "gradebook.db"}
    before = {p for p in places if p.exists()}
    yield
    assert not {p for p in places if p.exists()} - before, "a test left a gradebook.db outside its tmp_path"


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Let pytest cache its assertion-rewritten test modules (``__pycache__/*-pytest-*.pyc``).

    It writes them only when ``sys.dont_write_bytecode`` is false, and this image sets
    PYTHONDONTWRITEBYTECODE: each worker rewrote all the test modules on every run, about 2 s
    of its collection. Only collection writes; the tests themselves run as the image says:
    several write a module (a grader, a helper) and import it again within the second, and a
    bytecode cache keyed on whole-second modification times could hand back the old one."""
    dont_write = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = dont_write


# --- running on several workers (pytest-xdist, `make test`) -------------------------------------


@pytest.hookimpl(tryfirst=True)  # before xdist turns the groups into scheduling keys
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` keep on one worker the tests of a module that share a
    module-scoped fixture (a released repository, an nbgrader course, a fresh venv: built once,
    not once per worker), and the tests given an ``xdist_group`` mark. Every other test is spread
    one by one, so a test must write only under its tmp_path or in a folder of its own worker (as
    the attack bank's canaries do)."""
    for item in items:
        if _uses_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))  # its module
        if getattr(config.option, "loadgroup", False):  # set in the workers of --dist loadgroup
            _tell_the_scheduler_its_group(item)
    # Longest first: xdist starts the groups first (largest first, --loadscopereorder), then hands
    # out the other tests in this order. The slow ones up front, so that no long test starts last
    # and keeps one worker busy alone at the end. A group keeps its order: its module fixture is
    # set up once, for its tests in a row.
    items.sort(key=lambda item: not _is_slow_and_free(item))


def _tell_the_scheduler_its_group(item) -> None:
    """The scheduler sees node ids only and reads a test's group from an ``@group`` suffix, which
    pytest-xdist 3.8 writes to ``item._nodeid``. pytest 9.2 keeps the id in ``item._id`` (a
    structured NodeId) and ignores that field, so every group was silently split over the workers
    and each worker built the group's module fixtures again (pytest-xdist issue #1386, open). Until
    xdist writes the suffix where pytest reads it, it is written here; a second suffix from a fixed
    xdist is harmless (the scheduler takes the text after the last ``@``)."""
    groups = sorted(
        {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
    )
    if not groups:
        return
    grouped = f"{item.nodeid}@{'_'.join(groups)}"
    if hasattr(item, "_id"):  # pytest >= 9.2: a NodeId
        item._id = type(item._id).parse(grouped)
    else:
        item._nodeid = grouped


def _is_slow_and_free(item) -> bool:
    return item.get_closest_marker("slow") is not None and item.get_closest_marker("xdist_group") is None


def _uses_module_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs[-1].scope in ("module", "class", "package") for defs in info.name2fixturedefs.values())


# --- the attack bank's canaries ------------------------------------------------------------------


def _canaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*")) if folder.exists() else []


@pytest.fixture(scope="session")
def canary_dir():
    """This worker's canary folder (tests.attacks.CANARY_DIR), emptied before its first attack and
    checked again when the worker ends, for a canary a detached process planted late."""
    from tests.attacks import CANARY_DIR

    folder = Path(CANARY_DIR)
    shutil.rmtree(folder, ignore_errors=True)
    yield folder
    assert not _canaries(folder), f"canary files found when the worker ended: {_canaries(folder)}"


@pytest.fixture
def no_canaries(canary_dir):
    """Fails the test after which a canary file appeared: its attack got out of the sandbox."""
    yield
    assert not _canaries(canary_dir), f"canary files appeared: {_canaries(canary_dir)}"
