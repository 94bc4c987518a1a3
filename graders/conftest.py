"""Fixtures for the hidden graders. They come from the seqlab plugin of the running grade.

* ``grade``   -- the per-test helper (seqlab.grading.checks.Grade) bound to the function named
                 by the test's ``@grades`` marker: ``grade.check(*args, case=..., mistakes=...)``
* ``ref``     -- the reference solutions, ``ref("attention.multi_head_attention")(...)``
* ``rng``     -- a CPU ``torch.Generator`` seeded from the run's seed and this test's id
* ``device``  -- the device inputs must be created on
* ``make``    -- tensor factory: ``make.randn(2, 3, dtype=..)`` on ``device`` from ``rng``
"""

from __future__ import annotations

import pytest
import torch

from seqlab.grading.checks import Grade


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


class Make:
    """Random inputs drawn on the CPU from the test's generator, then moved to the device, so
    a seed means the same numbers on every device."""

    def __init__(self, gen: torch.Generator, device: torch.device):
        self.gen, self.device = gen, device

    def randn(self, *shape, dtype=torch.float64, scale: float = 1.0):
        return (torch.randn(*shape, generator=self.gen, dtype=torch.float64) * scale).to(self.device, dtype)

    def uniform(self, *shape, low=0.0, high=1.0, dtype=torch.float64):
        x = torch.rand(*shape, generator=self.gen, dtype=torch.float64) * (high - low) + low
        return x.to(self.device, dtype)

    def randint(self, high: int, *shape, low: int = 0):
        return torch.randint(low, high, shape, generator=self.gen).to(self.device)

    def mask(self, *shape, p_keep: float = 0.7):
        return (torch.rand(*shape, generator=self.gen) < p_keep).to(self.device)

    def integer(self, low: int, high: int) -> int:
        """A Python int in [low, high], from the same generator."""
        return int(torch.randint(low, high + 1, (), generator=self.gen))


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
    )
