"""The labs' public tests: the earlier functions they name when they fail are the ones the
grader names (seqlab.labs.LABS), and every lab's protocol, written out in the public test with
Adam spelled out (torch.optim would load PyTorch's compiler, seconds of the students' 5-second
budget), is the reference's, step by step: a public test that disagreed with the grader's
replay would fail honest code, or pass code the grader refuses."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from seqlab.cli import main
from seqlab.labs import LABS
from seqlab.paths import SOLUTIONS_DIR
from seqlab.reference import load_reference
from seqlab.regions import strip_markers

PUBLIC = Path(__file__).resolve().parents[2] / "public_tests"


def test_the_public_tests_name_the_functions_the_grader_names():
    spec = importlib.util.spec_from_file_location("public_labs", PUBLIC / "_labs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {function: lab.uses for function, lab in LABS.items()} == module.LAB_USES
    for function in LABS:  # each lab's public test is marked, so its failure names them
        topic = function.split(".")[0]
        assert f'@lab_test("{function}")' in (PUBLIC / f"test_{topic}.py").read_text(encoding="utf-8")


def _public_function(path: Path, name: str, helpers: tuple[str, ...] = (), **names):
    """``name`` (and the module-level ``helpers`` it calls) of a public test file, run with
    ``names`` in place of the test file's imports (the reference's modules for ``exercises``')."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in (name, *helpers)]
    namespace = {"torch": torch, "T64": torch.float64, **names}
    exec(compile(ast.Module(nodes, []), str(path), "exec"), namespace)
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


def _close(got, want) -> bool:
    # both float64 runs of one protocol: only the order of operations differs (~1e-15)
    return torch.allclose(got, want, rtol=1e-10, atol=1e-12)


def _randn(gen, *shape, scale=1.0):
    return torch.randn(*shape, generator=gen, dtype=torch.float64) * scale


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_the_recall_lab_public_protocol_is_the_reference_run(kind):
    ref = load_reference()
    protocol = _public_function(
        PUBLIC / "test_lstm_gru.py", "protocol_by_autograd", ("adam_by_hand",), lstm_gru=ref.lstm_gru
    )
    gen, (K, H) = torch.Generator().manual_seed(11), (6, 4)
    gates = {"rnn": 1, "lstm": 4, "gru": 3}[kind]
    cell = ("W_xh", "W_hh", "b_h") if kind == "rnn" else ("W_ih", "W_hh", "b_ih", "b_hh")
    shapes = {"W_xh": (H, K), "W_ih": (gates * H, K), "W_hh": (gates * H, H), "b_h": (H,), "b_ih": (gates * H,)}
    shapes |= {"b_hh": (gates * H,), "W_y": (K, H), "b_y": (K,)}
    params = {k: _randn(gen, *shapes[k], scale=0.5) for k in (*cell, "W_y", "b_y")}
    want_params, want_losses = ref("lstm_gru.train_recall")(
        kind, params, 7, 5, 4, lr=0.04, generator=torch.Generator().manual_seed(12)
    )
    got_params, got_losses = protocol(kind, params, 7, 5, 4, 0.04, torch.Generator().manual_seed(12))
    assert _close(got_losses, want_losses)
    assert all(_close(got_params[k], want_params[k]) for k in want_params)


def test_the_reverser_lab_public_protocol_is_the_reference_run():
    ref = load_reference()
    protocol = _public_function(PUBLIC / "test_transformer.py", "protocol_by_autograd", transformer=ref.transformer)
    gen, (V, E, F) = torch.Generator().manual_seed(13), (5, 6, 10)

    def attention():
        return {k: _randn(gen, E, E, scale=0.4) for k in ("W_q", "W_k", "W_v", "W_o")} | {
            k: _randn(gen, E, scale=0.1) for k in ("b_q", "b_k", "b_v", "b_o")
        }

    def block(names):
        out = {"self_attn": attention(), "ffn": {"W1": _randn(gen, F, E, scale=0.4), "b1": _randn(gen, F, scale=0.1)}}
        out["ffn"] |= {"W2": _randn(gen, E, F, scale=0.3), "b2": _randn(gen, E, scale=0.1)}
        out |= {"cross_attn": attention()} if "norm3" in names else {}
        return out | {n: {"weight": 1 + _randn(gen, E, scale=0.1), "bias": _randn(gen, E, scale=0.1)} for n in names}

    params = {
        "embedding": _randn(gen, V + 1, E, scale=0.4),
        "encoder": block(("norm1", "norm2")),
        "decoder": block(("norm1", "norm2", "norm3")),
        "W_out": _randn(gen, V, E, scale=0.4),
        "b_out": _randn(gen, V, scale=0.1),
    }
    want_params, want_losses = ref("transformer.train_reverser")(
        params, 6, 4, 4, V, lr=0.02, generator=torch.Generator().manual_seed(14)
    )
    got_params, got_losses = protocol(params, 6, 4, 4, V, 0.02, torch.Generator().manual_seed(14))
    assert _close(got_losses, want_losses)
    for path, got in got_params.items():
        want = want_params
        for key in path:
            want = want[key]
        # b_k's gradient is zero but for rounding (softmax ignores a shift shared by every key),
        # and Adam divides that rounding by its eps: b_k drifts by ~1e-11 whatever the order of
        # operations, moving no loss. 1e-8 is the public test's own tolerance for it.
        tol = 1e-8 if path[-1] == "b_k" else 1e-12
        assert torch.allclose(got, want, rtol=1e-10, atol=tol), path


@pytest.mark.parametrize("selective", [True, False])
def test_the_copy_lab_public_protocol_is_the_reference_run(selective):
    ref = load_reference()
    protocol = _public_function(PUBLIC / "test_selective_scan.py", "protocol_by_autograd", ss=ref.selective_scan)
    gen, (M, D, N) = torch.Generator().manual_seed(15), (4, 5, 3)
    shapes = {"embedding": (M + 1 + ref.selective_scan.COPY_COUNT, D), "W_delta": (D, D), "b_delta": (D,)}
    shapes |= {"W_B": (N, D), "b_B": (N,), "W_C": (N, D), "b_C": (N,), "A_log": (D, N), "D": (D,)}
    shapes |= {"W_out": (M, D), "b_out": (M,)}
    params = {k: _randn(gen, *shape, scale=0.5) for k, shape in shapes.items()}
    want_params, want_losses = ref("selective_scan.train_selective_copy")(
        params, 6, 3, selective, lr=0.03, generator=torch.Generator().manual_seed(16)
    )
    got_params, got_losses = protocol(params, 6, 3, selective, 0.03, torch.Generator().manual_seed(16))
    assert _close(got_losses, want_losses)
    assert all(_close(got_params[k], want_params[k]) for k in want_params)


# Two slips of a task lab's loop, each put in front of the reference's own loop: every adam step
# after a parameter's third an SGD step (a loop that swaps its update rule), and the loss
# multiplied by the batch size (a sum where the protocol averages).
SLIPS = {
    "sgd after step 3": (
        "    from .optimizers import adam\n",
        """    from .optimizers import adam as _adam

    def adam(w, dw, state, lr=1e-3):
        t = state.get("step", 0)
        if t < 3:
            return _adam(w, dw, state, lr=lr)
        return w - 0.05 * dw, {**state, "step": t + 1}
""",
    ),
    "loss times batch_size": (
        "    from .rnn import softmax_cross_entropy\n",
        """    from .rnn import softmax_cross_entropy as _cross_entropy

    def softmax_cross_entropy(logits, targets):
        return _cross_entropy(logits, targets) * batch_size
""",
    ),
}
PROTOCOL_TESTS = {  # the public protocol tests of each task lab, with their cases
    "lstm_gru.train_recall": ("test_lstm_gru.py", ["kind='rnn'", "kind='lstm'", "kind='gru'"]),
    "transformer.train_reverser": ("test_transformer.py", ["vocab=4"]),
    "selective_scan.train_selective_copy": ("test_selective_scan.py", ["selective=True", "selective=False"]),
}


@pytest.mark.bank  # a release and a pytest run of three public test files in it, per slip
@pytest.mark.parametrize("slip", list(SLIPS))
def test_a_task_loop_off_the_protocol_fails_its_public_test_by_name(tmp_path, slip):
    repo = tmp_path / "repo"
    assert main(["release", str(repo)]) == 0
    old, new = SLIPS[slip]
    for path in SOLUTIONS_DIR.glob("*.py"):
        if path.name != "__init__.py":
            text = strip_markers(path.read_text(encoding="utf-8"))
            if path.stem in {qualname.split(".")[0] for qualname in PROTOCOL_TESTS}:
                assert old in text, (path.name, old)
                text = text.replace(old, new, 1)
            (repo / "exercises" / path.name).write_text(text, encoding="utf-8")
    files = [f"tests/{name}" for name, _ in PROTOCOL_TESTS.values()]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files, "-k", "follows_the_protocol"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    cases = sum(len(c) for _, c in PROTOCOL_TESTS.values())
    assert done.returncode == 1 and f"{cases} failed" in done.stdout, done.stdout[-3000:]
    for qualname, (_, labels) in PROTOCOL_TESTS.items():
        for label in labels:  # the function, the case, the losses and how far off
            assert f"{qualname}, case {label}" in done.stdout, (qualname, label, done.stdout[-3000:])
    assert done.stdout.count("losses: ") >= cases and "max abs error" in done.stdout, done.stdout[-3000:]
