"""The test suite's own scheduling on two workers (``make test``): the tests of a module that share
a module-scoped fixture, and the tests of one ``xdist_group`` mark, run on one worker; a fixture
built once per module is built once in all (tests/conftest.py)."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from tests.mutants import ROOT

pytest_plugins = ["pytester"]

SHARED = """
import os
import pytest

@pytest.fixture(scope="module")
def built():
    return os.environ["PYTEST_XDIST_WORKER"]

@pytest.mark.parametrize("i", range(6))
def test_shared(built, i):
    pass
"""

MARKED = """
import pytest

@pytest.mark.parametrize("i", [pytest.param(i, marks=pytest.mark.xdist_group("pack")) for i in range(6)])
def test_marked(i):
    pass

@pytest.mark.parametrize("i", range(6))
def test_free(i):
    pass
"""


@pytest.mark.slow  # two workers start, each imports torch
def test_a_module_fixture_and_a_group_mark_keep_their_tests_on_one_worker(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n")
    pytester.makepyfile(test_shared=SHARED, test_marked=MARKED)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-v", "-p", "no:randomly")
    result.assert_outcomes(passed=18)
    workers = defaultdict(set)
    for line in result.outlines:
        ran = re.match(r"\[(gw\d)\] .*PASSED (\S+?)::(test_\w+)\[", line)
        if ran:
            workers[ran.group(3)].add(ran.group(1))
    assert len(workers["test_shared"]) == 1, workers
    assert len(workers["test_marked"]) == 1, workers
    assert workers["test_free"], workers
