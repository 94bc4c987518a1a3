"""Fixtures for the hidden graders. They come from the seqlab plugin of the running grade.

* ``grade``   -- the per-test helper (seqlab.grading.checks.Grade) bound to the function named
                 by the test's ``@grades`` marker: ``grade.check(*args, case=..., mistakes=...)``
                 (docs/DESIGN.md, "Writing a grader": every form of it, Case, Mistake, the marker)
* ``ref``     -- the reference solutions, ``ref("attention.multi_head_attention")(...)``
* ``rng``     -- a CPU ``torch.Generator`` seeded from the run's seed and this test's id
* ``device``  -- the device inputs must be created on
* ``lab``     -- a lab's one training run in this grading (seqlab.labs.session.LabSession):
                 ``lab.check_metrics("progress")``, ``lab.check_trajectory(mistakes)``
* ``make``    -- tensor factory (seqlab.grading.case.Make): ``make.randn(2, 3, dtype=..)`` on ``device``
                 from ``rng``; ``Case(make, B=2, T=3)`` draws a case from named sizes
"""

from __future__ import annotations

import pytest
import torch

from seqlab.grading.checks import Grade, Make


def _plugin(request):
    plugin = request.config.pluginmanager.get_plugin("seqlab")
    if plugin is None:
        pytest.exit("graders run only under `seqlab grade` (they need the seqlab plugin)", returncode=4)
    return plugin


@pytest.fixture
def device(request) -> torch.device:
    return torch.device(_plugin(request).device)


@pytest.fixture
def rng(request) -> torch.Generator:
    return torch.Generator().manual_seed(_plugin(request).test_seed(request.node.nodeid))


@pytest.fixture
def make(rng, device) -> Make:
    return Make(rng, device)


@pytest.fixture
def ref(request):
    return _plugin(request).reference


@pytest.fixture
def grade(request) -> Grade:
    plugin = _plugin(request)
    marker = request.node.get_closest_marker("grades")
    function = marker.args[0]
    rules = plugin.config.rules(function)
    tolerances = dict(plugin.config.tolerances)
    return Grade(
        function=function,
        student=plugin.student,
        reference=plugin.reference,
        tolerances=tolerances,
        forbidden_match=rules.forbidden_match,
        kernels=bool(rules.forbidden),
        forbidden_in=lambda callee: plugin.config.rules(callee).forbidden_match,
        rewrite_spent=plugin.rewrite_spent,
    )


@pytest.fixture
def lab(request, grade):
    from seqlab.labs import lab_of
    from seqlab.labs.session import LabSession

    plugin = _plugin(request)
    return LabSession(lab_of(grade.function), grade, plugin.lab_runs, plugin.seed, plugin.records)
