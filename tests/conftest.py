"""Fixtures shared by the project's own tests.

``device`` runs every reference test on the CPU and, where one is present, on CUDA: the
same tests, one parameter, so a GPU machine checks everything with one command
(``pytest tests -k cuda`` or ``SEQLAB_TEST_DEVICES=cuda pytest tests``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch


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


# --- running on several workers (pytest-xdist, `make test`) -------------------------------------

# Test modules that share something outside their tmp_path with another module, so they must run
# one after the other on the same worker. The attack bank plants canaries in one fixed folder
# (tests/attacks.CANARY_DIR); test_attacks clears it before and asserts it is empty after, so a
# canary from test_isolation's attacks running alongside would be charged to the wrong module.
SHARED_STATE_GROUPS = {
    "test_attacks.py": "attack-canaries",
    "test_isolation.py": "attack-canaries",
}


@pytest.hookimpl(tryfirst=True)  # before xdist turns the groups into scheduling keys
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` keep on one worker what must stay together: a module whose tests
    share a module-scoped fixture (a released repository, an nbgrader course, a fresh venv: built
    once, not once per worker), and the modules of ``SHARED_STATE_GROUPS``. Every other test is
    spread one by one."""
    for item in items:
        module = item.path.name
        group = SHARED_STATE_GROUPS.get(module)
        if group is None and _uses_module_fixture(item):
            group = module
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _uses_module_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs[-1].scope in ("module", "class", "package") for defs in info.name2fixturedefs.values())
