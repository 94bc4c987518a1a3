"""Fixtures shared by the project's own tests.

``device`` runs every reference test on the CPU and, where one is present, on CUDA: the
same tests, one parameter, so a GPU machine checks everything with one command
(``pytest tests -k cuda`` or ``SEQLAB_TEST_DEVICES=cuda pytest tests``).
"""
from __future__ import annotations

import os

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
