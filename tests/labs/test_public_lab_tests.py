"""The labs' public tests: the earlier functions they name when they fail are the ones the
grader names (seqlab.labs.LABS), and the character lab's protocol, written out in the public
test with Adam spelled out (torch.optim would load PyTorch's compiler, seconds of the
students' 5-second budget), is the reference's, step by step."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
import torch

from seqlab.labs import LABS
from seqlab.reference import load_reference

PUBLIC = Path(__file__).resolve().parents[2] / "public_tests"


def test_the_public_tests_name_the_functions_the_grader_names():
    spec = importlib.util.spec_from_file_location("public_labs", PUBLIC / "_labs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {function: lab.uses for function, lab in LABS.items()} == module.LAB_USES
    for function in LABS:  # each lab's public test is marked, so its failure names them
        topic = function.split(".")[0]
        assert f'@lab_test("{function}")' in (PUBLIC / f"test_{topic}.py").read_text(encoding="utf-8")


def _public_function(path: Path, name: str):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    namespace = {"torch": torch, "T64": torch.float64}
    exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("clip", [0.5, 100.0])
def test_the_public_protocol_by_autograd_is_the_reference_run(clip):
    protocol = _public_function(PUBLIC / "test_rnn.py", "protocol_by_autograd")
    gen = torch.Generator().manual_seed(3)
    V, H, B, seq_len, steps = 5, 4, 2, 3, 8
    tokens = torch.randint(0, V, (B * (3 * seq_len + 1) + 1,), generator=gen)
    params = {
        "W_xh": torch.randn(H, V, generator=gen, dtype=torch.float64),
        "W_hh": torch.randn(H, H, generator=gen, dtype=torch.float64) * 0.5,
        "b_h": torch.randn(H, generator=gen, dtype=torch.float64),
        "W_hy": torch.randn(V, H, generator=gen, dtype=torch.float64),
        "b_y": torch.randn(V, generator=gen, dtype=torch.float64),
    }
    want_params, want_losses = load_reference()("rnn.train_char_rnn")(tokens, params, steps, B, seq_len, 0.05, clip)
    got_params, got_losses = protocol(tokens, params, steps, B, seq_len, 0.05, clip)
    assert torch.allclose(got_losses, want_losses, rtol=1e-10, atol=1e-12)
    assert all(torch.allclose(got_params[k], want_params[k], rtol=1e-10, atol=1e-12) for k in want_params)
