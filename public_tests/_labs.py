"""What a lab's public test adds to a failure: the earlier functions the lab runs that failed
their own public tests in this run. A lab trains with your own functions (not correct copies),
so a bug in one of them fails the lab too; the failure then names it first, as the grader does.
Needs no torch for that: conftest.py fills RESULTS as the tests run.

And each lab's budget test (``check_budget``): your training function, once, at the sizes the
grader trains it at, its CPU time against the lab's budget on your core.
"""

from __future__ import annotations

import functools
import os

import pytest

# The earlier functions each lab runs (yours, not correct copies): when a lab's test fails and
# one of these failed its own public tests in the same run, the failure names it first.
LAB_USES = {
    "rnn.train_char_rnn": (
        "rnn.truncated_bptt", "rnn.rnn_bptt", "rnn.rnn_forward", "rnn.rnn_cell", "rnn.softmax_cross_entropy",
        "optimizers.clip_grad_norm", "optimizers.adam",
    ),
    "lstm_gru.train_recall": ("lstm_gru.gru_forward", "lstm_gru.gru_cell", "rnn.softmax_cross_entropy", "optimizers.adam"),
    "transformer.train_reverser": (
        "transformer.encoder_block", "transformer.decoder_block", "attention.multi_head_attention",
        "attention.scaled_dot_product_attention", "transformer.layer_norm", "transformer.feed_forward",
        "attention.causal_mask", "positional.embed_tokens", "positional.sinusoidal_encoding", "optimizers.adam",
    ),
    "selective_scan.train_selective_copy": (
        "selective_scan.selective_scan", "selective_scan.discretize", "selective_scan.linear_scan",
        "rnn.softmax_cross_entropy", "optimizers.adam",
    ),
}  # fmt: skip

# function -> {"passed": n, "total": n, ...}, filled by conftest.py as the tests run (in
# teaching order, a lab's after the functions it runs).
RESULTS: dict = {}


def lab_test(qualname: str):
    """Marks a lab's test: a failure of it starts by naming the functions of LAB_USES[qualname]
    whose own public tests failed earlier in this run (the lab runs them: fix those first), or
    the ones that did not run at all (run every test file to know)."""

    def wrap(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            __tracebackhide__ = True
            try:
                return test(*args, **kwargs)
            except pytest.fail.Exception as exc:
                note = _culprits(qualname)
                if not note:
                    raise
                message = f"{note}\n{exc.msg}"
            except Exception as exc:  # your code raised: its traceback, with the note under it
                note = _culprits(qualname)
                if note:
                    exc.add_note(note)
                raise
            pytest.fail(message, pytrace=False)  # out of the except: no "during handling" chain

        return run

    return wrap


def _culprits(qualname: str) -> str:
    uses = LAB_USES.get(qualname, ())
    failed = [f for f in uses if f in RESULTS and RESULTS[f]["passed"] < RESULTS[f]["total"]]
    if failed:
        return (
            f"{qualname} runs your own {', '.join(failed)}, which failed public tests of their own: "
            f"fix {'it' if len(failed) == 1 else 'those'} first"
        )
    untested = [f for f in uses if f not in RESULTS]
    if untested:
        return f"{qualname} runs your own {', '.join(untested)}, not tested in this run (run all the tests)"
    return ""


# --- the labs' CPU budgets, checked at the grading sizes ----------------------------------------
#
# Each lab trains your function once at the sizes the grader uses (the costliest instance where a
# size is drawn per grading: the longest lag, the largest vocabulary and length) and counts its CPU
# time against the lab's budget, on your core measured the way the grader measures its own
# (_budget.py: the same workload, the same standard core, the same words when it refuses). The
# sizes are the ones each lab's docstring states; the instructor's tests check that the two agree.
GRADING = {
    "rnn.train_char_rnn": {
        "vocab": 28, "hidden": 48, "chars": 9616, "steps": 200, "batch_size": 16, "seq_len": 24,
        "lr": 0.02, "clip": 5.0,
    },
    "lstm_gru.train_recall": {
        "kind": "gru", "symbols": 16, "hidden": 48, "steps": 160, "batch_size": 128, "lag": 32, "lr": 0.01,
    },
    "transformer.train_reverser": {
        "vocab": 12, "seq_len": 8, "embed": 32, "ffn": 64, "steps": 160, "batch_size": 32, "lr": 0.003,
    },
    "selective_scan.train_selective_copy": {
        "symbols": 8, "channels": 16, "states": 8, "copy_count": 4, "steps": 320, "batch_size": 32,
        "selective": True, "lr": 0.02,
    },
}  # fmt: skip

# The grader counts the CPU of a training call made under its watch: every torch call named and
# counted, and a hook on every tensor autograd saves. Those cost CPU in proportion to the number
# of small operations, 1.1-2.7x a plain call's depending on the style (measured on the
# references and on loop-style hand-ins). So the training call here runs under the same kind of
# watch (_Watch), and its CPU is counted as the grader counts it. GRADER_OVERHEAD is what is
# left: the grader's count over this one was 0.73-1.50x, median 1.0, for the references and the
# loop styles, measured side by side in three runs (benchmarks/bench_lab_budgets.py), so it is
# 1.0. The spread is noise of a busy machine more than a bias; the budget's margin over the
# slowest honest style (1.4x) covers it, so no honest run fails one side and passes the other.
GRADER_OVERHEAD = 1.0


class _Watch:
    """What the grader runs a training call under, as far as its CPU goes: a mode that names and
    counts every torch function called, and saved-tensor hooks on every save."""

    def __init__(self):
        import collections

        import torch
        from torch.overrides import TorchFunctionMode, resolve_name

        names: dict = {}
        counts: collections.Counter = collections.Counter()
        getter = type(torch.Tensor.shape.__get__)

        def name_of(func):
            owner = func.__self__ if type(func) is getter else func
            key = (id(owner), getattr(func, "__name__", ""))
            known = names.get(key)
            if known is not None and known[0] is owner:
                return known[1]
            name = resolve_name(func) or f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', func)}"
            if len(names) >= 4096:
                names.clear()
            names[key] = (owner, name)
            return name

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                counts[name_of(func)] += 1
                return func(*args, **(kwargs or {}))

        self.mode, self.counts = Mode(), counts
        from _forbidden import unpack_checked, version_checked  # autograd's in-place check kept, as the grader's

        self.hooks = torch.autograd.graph.saved_tensors_hooks(version_checked, unpack_checked)

    def __enter__(self):
        self.hooks.__enter__()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)
        self.hooks.__exit__(*exc)


# LAB_BUDGETS=off skips these four tests (a quick run of the rest); the grader measures anyway.
BUDGETS_OFF = os.environ.get("LAB_BUDGETS", "").lower() == "off"

_SLOWDOWN: list[float] = []


def _core_slowdown() -> float:
    """This core against the standard one, measured once per run (~0.1-0.3 s)."""
    if not _SLOWDOWN:
        import _budget
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as the grader measures its core, and as a lab trains
        try:
            _SLOWDOWN.append(_budget.slowdown_of(_budget.measure()))
        finally:
            torch.set_num_threads(threads)
    return _SLOWDOWN[0]


def grading_inputs(qualname: str, seed: int = 0) -> dict:
    """The keyword arguments of ``qualname`` at the grading sizes (GRADING): its initial
    parameters drawn like the grader's (the values differ, the shapes and dtypes do not)."""
    import math

    import torch

    size = GRADING[qualname]
    gen = torch.Generator().manual_seed(seed)

    def normal(*shape, scale=1.0, dtype=torch.float32):
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(dtype)

    if qualname == "rnn.train_char_rnn":
        V, H, f64 = size["vocab"], size["hidden"], torch.float64
        params = {
            "W_xh": normal(H, V, scale=0.3, dtype=f64),
            "W_hh": normal(H, H, scale=0.5 / H**0.5, dtype=f64),
            "b_h": torch.zeros(H, dtype=f64),
            "W_hy": normal(V, H, scale=0.1, dtype=f64),
            "b_y": torch.zeros(V, dtype=f64),
        }
        tokens = torch.randint(0, V, (size["chars"],), generator=gen)
        keys = ("steps", "batch_size", "seq_len", "lr", "clip")
        return {"tokens": tokens, "params": params, **{k: size[k] for k in keys}}
    if qualname == "lstm_gru.train_recall":
        K, H = size["symbols"], size["hidden"]
        bound = 1 / math.sqrt(H)

        def uniform(*shape):
            return ((torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound).float()

        params = {"W_ih": uniform(3 * H, K), "W_hh": uniform(3 * H, H), "b_ih": uniform(3 * H), "b_hh": uniform(3 * H)}
        params["b_ih"][H : 2 * H] += 3.0  # the update gate starts by keeping the state
        params["W_y"], params["b_y"] = uniform(K, H), uniform(K)
        keys = ("kind", "steps", "batch_size", "lag", "lr")
        return {"params": params, **{k: size[k] for k in keys}, "generator": torch.Generator().manual_seed(seed + 1)}
    if qualname == "transformer.train_reverser":
        vocab, E, F = size["vocab"], size["embed"], size["ffn"]

        def matrix(rows, cols):
            return normal(rows, cols, scale=1 / math.sqrt(cols))

        def attention():
            out = {name: matrix(E, E) for name in ("W_q", "W_k", "W_v", "W_o")}
            return out | {name: torch.zeros(E) for name in ("b_q", "b_k", "b_v", "b_o")}

        def ffn():
            return {"W1": matrix(F, E), "b1": torch.zeros(F), "W2": matrix(E, F), "b2": torch.zeros(E)}

        def norm():
            return {"weight": torch.ones(E), "bias": torch.zeros(E)}

        params = {
            "embedding": matrix(vocab + 1, E),
            "encoder": {"self_attn": attention(), "ffn": ffn(), "norm1": norm(), "norm2": norm()},
            "decoder": {"self_attn": attention(), "cross_attn": attention(), "ffn": ffn()}
            | {"norm1": norm(), "norm2": norm(), "norm3": norm()},
            "W_out": matrix(vocab, E),
            "b_out": torch.zeros(vocab),
        }
        keys = ("steps", "batch_size", "seq_len", "vocab", "lr")
        return {"params": params, **{k: size[k] for k in keys}, "generator": torch.Generator().manual_seed(seed + 1)}
    if qualname == "selective_scan.train_selective_copy":
        M, D, N = size["symbols"], size["channels"], size["states"]
        params = {
            "embedding": normal(M + 1 + size["copy_count"], D),
            "W_delta": normal(D, D, scale=1 / math.sqrt(D)),
            "b_delta": torch.full((D,), -3.0),
            "W_B": normal(N, D, scale=1 / math.sqrt(D)),
            "b_B": normal(N, scale=1 / math.sqrt(N)),
            "W_C": normal(N, D, scale=1 / math.sqrt(D)),
            "b_C": normal(N, scale=1 / math.sqrt(N)),
            "A_log": torch.log(torch.arange(1, N + 1, dtype=torch.float64)).repeat(D, 1).float(),
            "D": torch.ones(D),
            "W_out": normal(M, D, scale=1 / math.sqrt(D)),
            "b_out": torch.zeros(M),
        }
        keys = ("steps", "batch_size", "selective", "lr")
        return {"params": params, **{k: size[k] for k in keys}, "generator": torch.Generator().manual_seed(seed + 1)}
    raise KeyError(f"{qualname} is not a lab")


class _OverBudget(BaseException):
    """Raised in the training call once its process has used more CPU than the budget (a
    BaseException, so a broad ``except Exception`` in the loop does not swallow it)."""


def _stop_after(cpu_s: float):
    """Stop the call once this process has used ``cpu_s`` more seconds of CPU (a profiling
    timer, which counts CPU, not wall time): a loop far over its budget fails at the budget, not
    minutes later. Where the platform has no such timer (Windows) the call runs to its end."""
    import contextlib
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()

    def over(signum, frame):
        raise _OverBudget

    @contextlib.contextmanager
    def armed():
        before = signal.signal(signal.SIGPROF, over)
        signal.setitimer(signal.ITIMER_PROF, cpu_s)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, before)

    return armed()


def check_budget(qualname: str, fn) -> float:
    """Train ``fn`` once at the grading sizes and fail, with the grader's own refusal, when its
    CPU time (times GRADER_OVERHEAD) is over the lab's budget on this core. Returns the CPU
    time counted. On one intra-op thread, as the grader's process trains; stopped a little past
    the budget (a tenth more), which the refusal then says."""
    __tracebackhide__ = True
    import time

    import _budget
    import torch
    from _check import call

    slowdown = _core_slowdown()
    inputs = grading_inputs(qualname)
    spent: list[float] = []
    stop_s = 1.1 * _budget.CPU_BUDGET_S * slowdown / GRADER_OVERHEAD

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        watch = _Watch()
        started = time.thread_time()
        try:
            with _stop_after(stop_s), watch:
                return fn(*args, **kwargs)
        finally:
            spent.append(time.thread_time() - started)
            torch.set_num_threads(threads)

    size = ", ".join(f"{k}={v}" for k, v in GRADING[qualname].items())
    stopped = ""
    try:
        call(qualname, timed, case=f"the grading sizes: {size}", **inputs)
    except _OverBudget:
        stopped = " and stopped there, before its end"
    # Stopped, the call used its process's CPU past the budget: the timer counts every thread's,
    # so this thread's own may read a little less, and a stopped run is refused all the same.
    counted = (max(spent[0], stop_s) if stopped else spent[0]) * GRADER_OVERHEAD
    refusal = _budget.over_budget(qualname, counted, _budget.CPU_BUDGET_S, slowdown)
    if refusal:
        pytest.fail(
            f"{refusal}\n(counted here as {spent[0]:.1f} s of CPU at the grading sizes ({size}){stopped}, "
            f"under a watch of torch calls like the grader's, times {GRADER_OVERHEAD:g} for the rest of its "
            f"process's checks; this core measures {slowdown:.2f}x the standard one)",
            pytrace=False,
        )
    return counted


def check_adam_steps(qualname: str, fn, steps: int = 4, optimizers=None) -> None:
    """Train ``fn`` for ``steps`` steps at the grading sizes with your ``adam`` counted, and fail,
    in the grader's own words (_updates.py), unless each tensor of ``params`` took one step of it
    per training step at the lab's ``lr`` and adam's default betas and eps, and ``params_out`` is
    what those steps returned. The grader counts the same way during the lab's graded run."""
    __tracebackhide__ = True
    import sys

    import _updates
    from _check import call, unpack

    if optimizers is None:
        from exercises import optimizers
    inputs = {**grading_inputs(qualname), "steps": steps}
    own, package = optimizers.adam, optimizers.__name__.rpartition(".")[0]
    tap = _updates.UpdateTap(own, len(_updates.tensors(inputs["params"])))
    replaced = [
        (module, name)
        for key, module in list(sys.modules.items())
        if key.startswith(package + ".")
        for name, value in list(vars(module).items())
        if value is own
    ]
    for module, name in replaced:  # as in the grader: every name bound to your adam, for the call
        setattr(module, name, tap.wrapper)
    try:
        out = call(qualname, fn, **inputs, case=f"{steps} steps at the grading sizes")
    finally:
        for module, name in replaced:
            setattr(module, name, own)
    params_out, _ = unpack(qualname, out, ("params_out", "losses"), case=f"{steps} steps at the grading sizes")
    problem = _updates.update_problem(qualname, tap.report(), params_out, steps, float(inputs["lr"]))
    if problem:
        pytest.fail(problem, pytrace=False)
