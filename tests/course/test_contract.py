"""The contract holds in solutions/ and exercises/, and exercises/ is exactly what build writes."""

from __future__ import annotations

import importlib.util
import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from seqlab import build, contract
from seqlab.config import load_config
from seqlab.regions import SolutionRegionError, clear_solutions

ROOT = Path(__file__).resolve().parents[2]


def _load(folder: str, module: str):
    name = f"_contract_{folder}"
    if name not in sys.modules:
        package = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(name, None, is_package=True))
        package.__path__ = [str(ROOT / folder)]
        sys.modules[name] = package
    spec = importlib.util.spec_from_file_location(f"{name}.{module}", ROOT / folder / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_contract_lists_the_exercises_and_the_labs():
    # every contract function has its points in the config, and is an exercise or a lab, not both
    assert set(contract.FUNCTIONS) <= set(load_config().functions)
    assert len(contract.EXERCISES) + len(contract.LABS) == len(contract.FUNCTIONS)
    assert set(contract.LABS) <= set(contract.FUNCTIONS) and set(contract.EXERCISES).isdisjoint(contract.LABS)
    assert {contract.split(f)[0] for f in contract.FUNCTIONS} == set(contract.MODULES)
    with pytest.raises(KeyError, match="not a contract function"):
        contract.split("attention.flash_attention")


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("qualname", contract.FUNCTIONS)
def test_signature_matches_contract(folder, qualname):
    module, function = contract.split(qualname)
    fn = getattr(_load(folder, module), function, None)
    assert fn is not None, f"{folder}/{module}.py has no {function}"
    assert str(inspect.signature(fn)) == contract.SIGNATURES[qualname]
    assert fn.__doc__ and len(fn.__doc__) > 200, f"{qualname} needs a docstring with the math and shapes"


@pytest.mark.parametrize("qualname", contract.FUNCTIONS)
def test_every_stub_raises_not_implemented(qualname):
    module, function = contract.split(qualname)
    fn = getattr(_load("exercises", module), function)
    args = [torch.zeros(1)] * len([p for p in inspect.signature(fn).parameters.values() if p.default is p.empty])
    with pytest.raises(NotImplementedError):
        fn(*args)


def test_no_solution_text_in_exercises():
    for path in (ROOT / "exercises").glob("*.py"):
        text = path.read_text()
        assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text, path
    for path in (ROOT / "solutions").glob("*.py"):
        source = path.read_text()
        stub = (ROOT / "exercises" / path.name).read_text()
        inside, body = False, []
        for line in source.splitlines():
            if "### BEGIN SOLUTION" in line:
                inside = True
            elif "### END SOLUTION" in line:
                inside = False
            elif inside and len(line.strip()) > 12 and not line.strip().startswith("#"):
                body.append(line.strip())
        leaked = [line for line in body if line in {s.strip() for s in stub.splitlines()}]
        assert not leaked, f"{path.name}: solution lines in the stub: {leaked[:3]}"


def test_build_check_passes_on_the_repo():
    assert build.stale_files(ROOT / "solutions", ROOT / "exercises") == []


def test_build_check_fails_on_a_stale_stub(tmp_path):
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    cli = [
        sys.executable,
        "-m",
        "seqlab",
        "build",
        "--solutions",
        str(tmp_path / "solutions"),
        "--exercises",
        str(tmp_path / "exercises"),
    ]
    assert subprocess.run([*cli, "--check"], capture_output=True).returncode == 0
    path = tmp_path / "solutions" / "attention.py"
    path.write_text(
        path.read_text().replace("def causal_mask(T, device=None):", "def causal_mask(T, device=None):  # edited")
    )
    stale = subprocess.run([*cli, "--check"], capture_output=True, text=True)
    assert stale.returncode == 1 and "attention.py" in stale.stderr
    assert subprocess.run(cli, capture_output=True).returncode == 0
    assert subprocess.run([*cli, "--check"], capture_output=True).returncode == 0


def test_clear_solutions_rule():
    source = "def f(x):\n    '''doc'''\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n"
    assert (
        clear_solutions(source) == "def f(x):\n    '''doc'''\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    )
    with pytest.raises(SolutionRegionError, match="never closed"):
        clear_solutions("    ### BEGIN SOLUTION\n    x = 1\n")
    with pytest.raises(SolutionRegionError, match="without a matching"):
        clear_solutions("    ### END SOLUTION\n")


def test_the_contract_is_read_from_the_solutions_defs(tmp_path):
    """Topics from TOPICS, signatures as written, callees from the calls each reference makes
    (across topics by a relative import); helpers starting with ``_`` are not exercises."""
    (tmp_path / "__init__.py").write_text('TOPICS = ("a", "b")\n')
    (tmp_path / "a.py").write_text("def f(x, eps=1e-6):\n    return _g(x)\n\n\ndef _g(x):\n    return x\n")
    (tmp_path / "b.py").write_text(
        "from .a import f\n\n\ndef h(x, *, n=2):\n    return f(x) + k(x)\n\n\ndef k(x):\n    return h(x)\n"
    )
    read = contract.read(tmp_path)
    assert read["modules"] == ["a", "b"]
    assert read["signatures"] == {"a.f": "(x, eps=1e-06)", "b.h": "(x, *, n=2)", "b.k": "(x)"}
    assert read["callees"] == {"b.h": ["a.f", "b.k"], "b.k": ["b.h"]}


def test_the_table_a_child_is_sent_is_the_parents_contract():
    # the child's copy of the table (sent in its load message) is the parent's, plain data
    assert contract.table()["signatures"] == contract.SIGNATURES
    assert tuple(contract.table()["modules"]) == contract.MODULES
    assert contract.declared_callees("rnn.rnn_bptt") == ("rnn.rnn_forward", "rnn.softmax_cross_entropy")
