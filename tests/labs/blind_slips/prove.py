"""Train one lab from two submission folders on the same small inputs and print, as JSON, how the
second differs from the first. Run as a script in its own process (the two ``exercises``
packages are imported under two names, so neither sees the other's modules):

    python tests/labs/blind_slips/prove.py BASE_FOLDER SLIP_FOLDER LAB

Every input is float64, so two correct loops agree to about 1e-12 and a difference above
tests/labs/test_blind_slips_wrong.py's tolerance is the mistake, not rounding. Each run starts
the global generator from a different seed: a loop that draws from it instead of the
``generator`` it is given changes its batches between the two runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import sys
from pathlib import Path

import torch

F64 = torch.float64


def load(folder: str, name: str, topic: str):
    """``exercises.<topic>`` of ``folder``, imported as the package ``name``."""
    package = Path(folder) / "exercises"
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return importlib.import_module(f"{name}.{topic}")


def _normal(gen, *shape, scale=1.0):
    return torch.randn(*shape, generator=gen, dtype=F64) * scale


def char_rnn_configs():
    # L = 258 // 4 = 64 tokens per stream, (L - 1) // 8 = 7 windows: the 20 steps wrap the
    # streams twice (a reset is exercised), 64 is a multiple of 8 (an L // S count reads past the
    # end) and 258 is not a multiple of 4 (the tail is dropped). clip=0.5 is below the gradient's
    # norm at these sizes, so clipping acts on every step.
    gen = torch.Generator().manual_seed(3)
    V, H = 7, 10
    params = {
        "W_xh": _normal(gen, H, V, scale=0.3),
        "W_hh": _normal(gen, H, H, scale=0.5 / math.sqrt(H)),
        "b_h": torch.zeros(H, dtype=F64),
        "W_hy": _normal(gen, V, H, scale=0.1),
        "b_y": torch.zeros(V, dtype=F64),
    }
    # a text with structure (a repeated phrase, some noise), so the model has something to learn
    phrase = torch.tensor([0, 1, 2, 3, 1, 4, 5, 6, 2])
    tokens = phrase.repeat(30)[:258].clone()
    noise = torch.rand(258, generator=gen) < 0.2
    tokens[noise] = torch.randint(0, V, (int(noise.sum()),), generator=gen)
    args = {"tokens": tokens, "params": params, "steps": 20, "batch_size": 4, "seq_len": 8, "lr": 0.02, "clip": 0.5}
    return {"default": (args, None)}


def recall_configs():
    # the graded kind (gru) and the two others: a mistake in one branch shows in that branch
    configs = {}
    K, H = 8, 10
    for kind, gates in (("gru", 3), ("lstm", 4), ("rnn", 1)):
        gen = torch.Generator().manual_seed(5)
        bound = 1 / math.sqrt(H)

        def uniform(*shape):
            return (torch.rand(*shape, generator=gen, dtype=F64) * 2 - 1) * bound

        if kind == "rnn":
            params = {"W_xh": uniform(H, K), "W_hh": uniform(H, H), "b_h": uniform(H)}
        else:
            params = {"W_ih": uniform(gates * H, K), "W_hh": uniform(gates * H, H)}
            params |= {"b_ih": uniform(gates * H), "b_hh": uniform(gates * H)}
            if kind == "gru":
                params["b_ih"][H : 2 * H] += 3.0  # the update gate starts by keeping the state
            else:
                params["b_ih"][H : 2 * H] += 1.0  # the forget gate starts open
        params["W_y"], params["b_y"] = uniform(K, H), uniform(K)
        args = {"kind": kind, "params": params, "steps": 6, "batch_size": 16, "lag": 5, "lr": 0.01}
        configs[kind] = (args, 11)
    return configs


def reverser_configs():
    gen = torch.Generator().manual_seed(7)
    vocab, E, F = 5, 8, 16

    def matrix(rows, cols):
        return _normal(gen, rows, cols, scale=1 / math.sqrt(cols))

    def attention():
        out = {name: matrix(E, E) for name in ("W_q", "W_k", "W_v", "W_o")}
        return out | {name: torch.zeros(E, dtype=F64) for name in ("b_q", "b_k", "b_v", "b_o")}

    def ffn():
        return {
            "W1": matrix(F, E),
            "b1": torch.zeros(F, dtype=F64),
            "W2": matrix(E, F),
            "b2": torch.zeros(E, dtype=F64),
        }

    def norm():
        return {"weight": torch.ones(E, dtype=F64), "bias": torch.zeros(E, dtype=F64)}

    params = {
        "embedding": matrix(vocab + 1, E),
        "encoder": {"self_attn": attention(), "ffn": ffn(), "norm1": norm(), "norm2": norm()},
        "decoder": {"self_attn": attention(), "cross_attn": attention(), "ffn": ffn()}
        | {"norm1": norm(), "norm2": norm(), "norm3": norm()},
        "W_out": matrix(vocab, E),
        "b_out": torch.zeros(vocab, dtype=F64),
    }
    args = {"params": params, "steps": 4, "batch_size": 8, "seq_len": 4, "vocab": vocab, "lr": 0.003}
    return {"default": (args, 13)}


def selective_copy_configs():
    # the graded selective model and the time-invariant one (whose unused weights must come back unchanged)
    configs = {}
    M, D, N, count = 4, 8, 4, 4
    for selective in (True, False):
        gen = torch.Generator().manual_seed(9)
        params = {
            "embedding": _normal(gen, M + 1 + count, D),
            "W_delta": _normal(gen, D, D, scale=1 / math.sqrt(D)),
            "b_delta": torch.full((D,), -3.0, dtype=F64),
            "W_B": _normal(gen, N, D, scale=1 / math.sqrt(D)),
            "b_B": _normal(gen, N, scale=1 / math.sqrt(N)),
            "W_C": _normal(gen, N, D, scale=1 / math.sqrt(D)),
            "b_C": _normal(gen, N, scale=1 / math.sqrt(N)),
            "A_log": torch.log(torch.arange(1, N + 1, dtype=F64)).repeat(D, 1),
            "D": torch.ones(D, dtype=F64),
            "W_out": _normal(gen, M, D, scale=1 / math.sqrt(D)),
            "b_out": torch.zeros(M, dtype=F64),
        }
        args = {"params": params, "steps": 4, "batch_size": 8, "selective": selective, "lr": 0.02}
        configs["selective" if selective else "time-invariant"] = (args, 17)
    return configs


LABS = {
    "train_char_rnn": ("rnn", char_rnn_configs),
    "train_recall": ("lstm_gru", recall_configs),
    "train_reverser": ("transformer", reverser_configs),
    "train_selective_copy": ("selective_scan", selective_copy_configs),
}


def flat(tree, prefix=""):
    """``{path: tensor}`` of a nested dict of tensors."""
    if isinstance(tree, torch.Tensor):
        return {prefix: tree}
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            out |= flat(value, f"{prefix}/{key}")
        return out
    return {prefix: tree}


def run(fn, args, generator_seed, global_seed):
    """Train once; the outcome as (params_out, losses, violations) or the error's text."""
    fresh = {key: (value.clone() if isinstance(value, torch.Tensor) else value) for key, value in args.items()}
    fresh["params"] = {path: tensor.clone() for path, tensor in flat(args["params"]).items()}
    fresh["params"] = _unflat(fresh["params"])
    before = {path: tensor.clone() for path, tensor in flat(fresh["params"]).items()}
    if generator_seed is not None:
        fresh["generator"] = torch.Generator().manual_seed(generator_seed)
    torch.manual_seed(global_seed)
    try:
        params_out, losses = fn(**fresh)
    except Exception as exc:  # the slip's own error is the outcome being reported
        return None, None, [], f"{type(exc).__name__}: {exc}"
    violations = []
    for path, tensor in flat(fresh["params"]).items():
        if not torch.equal(tensor, before[path]):
            violations.append(f"modified its argument params{path}")
    if not isinstance(losses, torch.Tensor) or losses.shape != (args["steps"],):
        violations.append(f"losses is not a ({args['steps']},) tensor")
    elif losses.dtype != F64:
        violations.append(f"losses are {losses.dtype}, not the params' float64")
    out = flat(params_out)
    for path, tensor in before.items():
        got = out.get(path)
        if not isinstance(got, torch.Tensor) or got.shape != tensor.shape or got.dtype != tensor.dtype:
            violations.append(f"params_out{path} lost the shape or dtype of params{path}")
    return out, losses, violations, None


def _unflat(paths):
    tree: dict = {}
    for path, tensor in paths.items():
        node = tree
        *parents, leaf = path.strip("/").split("/")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = tensor
    return tree


def distance(a, b):
    """Largest absolute difference; inf where shapes differ or only one side is finite."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return math.inf
    a, b = a.detach().to(F64), b.detach().to(F64)
    if a.numel() == 0:
        return 0.0
    same_nonfinite = (~torch.isfinite(a) & ~torch.isfinite(b)) & ((a == b) | (a.isnan() & b.isnan()))
    if (torch.isfinite(a) != torch.isfinite(b)).any():
        return math.inf
    diff = torch.where(same_nonfinite, torch.zeros_like(a), (a - b).abs())
    return float(diff.max())


def compare(base_folder, slip_folder, lab):
    topic, configs = LABS[lab]
    base = getattr(load(base_folder, "blind_base", topic), lab)
    slip = getattr(load(slip_folder, "blind_slip", topic), lab)
    report = {}
    for name, (args, generator_seed) in configs().items():
        b_out, b_losses, b_viol, b_err = run(base, args, generator_seed, global_seed=101)
        s_out, s_losses, s_viol, s_err = run(slip, args, generator_seed, global_seed=202)
        entry = {"base_error": b_err, "slip_error": s_err, "base_violations": b_viol, "slip_violations": s_viol}
        if b_err is None and s_err is None:
            entry["loss_diff"] = distance(b_losses, s_losses)
            keys = set(b_out) | set(s_out)
            entry["param_diff"] = max((distance(b_out.get(k), s_out.get(k)) for k in keys), default=0.0)
            entry["base_losses"] = [round(float(x), 6) for x in b_losses]
            entry["slip_losses"] = (
                [round(float(x), 6) for x in s_losses] if isinstance(s_losses, torch.Tensor) else None
            )
        report[name] = entry
    return report


if __name__ == "__main__":
    torch.set_num_threads(1)  # a shared machine: one thread, and float64 sums in one order
    print(json.dumps(compare(*sys.argv[1:4])))
