"""The labs' CPU budgets and the clock they are read on, shared by the grader and the student's
own tests (this file ships with the student release as tests/_budget.py, unchanged, so both
sides measure the core with the same workload and refuse a run with the same words).

A budget is CPU seconds on a *standard* core. A budget in seconds is a fact about a machine,
not about a training loop, so the core that runs a lab is measured with a fixed workload shaped
like the labs' (small tensors, a Python loop, autograd: the labs are bound by per-operation
dispatch, ~110,000 torch calls for the recall lab) and every budget is stretched by how much
slower than the standard core it is, never shrunk (a faster core keeps the stated budget).

Why CPU_BUDGET_S is 15 s, the same for every lab. The references train in the grader in
1.2 s (characters), 2.3 s (recall), 2.4 s (reverser) and 2.7 s (selective copy) on the
standard core (REFERENCE_CPU_S), 8.6 s together. A loop-style student (benchmarks/loop_style.py:
loops over time, over heads, over parameters, the causal mask and the positional table element
by element, BPTT's sums step by step, a sequential linear_scan) takes 1.4-3.7x the reference's
CPU in the grader, lab by lab, 15 s for the four; one that also writes the cross-entropy row by
row (the loopiest honest style measured) takes 2.1-7.3x, 29 s for the four and up to 10.7 s for
one lab (benchmarks/bench_lab_budgets.py, two benchmarks of two rounds each on a 2-core machine
at load 4-8). 15 s admits the loop style with a margin of 2.5x or more on every lab and the
row-by-row style with 1.4x (the room for a busier machine than that one); it is 5.6x
(selective copy) to 12.5x (characters) the reference's own time.

What it still stops: a loop over the hidden units inside every step (the GRU's cell one unit at
a time: the recall lab runs past its wall limit, four times the budget), a loop over batch rows
inside every step, training several times the steps the task asks for. A forward recomputed from
the first step at every step (quadratic in the length) runs the recall lab out of the child's
memory first, but costs the character lab, whose backward pass is by hand, only 5.8x its
reference: the budget does not stop that one. What it costs: a submission's four labs may use up
to 60 s of CPU on the standard core, where the references use 8.6 s, a loop style 15 s and the
row-by-row style 29 s; on two standard cores a class of 300 spends about 22 minutes on the
references' labs, 38 on loop styles', 73 on row-by-row ones' and 150 if every lab used its
whole budget (docs/labs.md, "Budgets").
"""

from __future__ import annotations

import time

CPU_BUDGET_S = 15.0

# Each lab's reference training, in the grader, on the standard core (seconds of CPU): what the
# budget's factor is stated against, and what a refusal tells the student to aim for.
REFERENCE_CPU_S = {
    "rnn.train_char_rnn": 1.2,
    "lstm_gru.train_recall": 2.3,
    "transformer.train_reverser": 2.4,
    "selective_scan.train_selective_copy": 2.7,
}

# The workload's CPU time on the standard core. In a grading on a machine where the references
# trained 3.3x as long as on the core the budgets were first set on (the median of the four labs'
# ratios, 2.7-3.7), it took 0.077 s (the fastest of 3): so the standard is 0.077 / 3.3.
STANDARD_CALIBRATION_S = 0.023
# A workload run is ~0.08 s there: long against the clock's resolution, short against a grading.
RUNS = 3
# Above this the machine, not the loop, is the problem: the budget stops stretching (a child
# cannot slow the measuring thread down by much through shared caches, but the bound says how
# much it could gain if it did).
MAX_SLOWDOWN = 6.0


def workload() -> None:
    """A fixed stand-in for a lab's training: an RNN of 32 units over 10 steps on 8 sequences,
    its gradient by autograd and a plain update, 40 times (~4,000 torch calls)."""
    import torch

    generator = torch.Generator().manual_seed(0)
    weights = (0.1 * torch.randn(32, 32, generator=generator, dtype=torch.float64)).requires_grad_(True)
    inputs = torch.randn(10, 8, 32, generator=generator, dtype=torch.float64)
    for _ in range(40):
        state = torch.zeros(8, 32, dtype=torch.float64)
        for x_t in inputs:
            state = torch.tanh(x_t @ weights + state @ weights.T)
        (grad,) = torch.autograd.grad((state * state).mean(), weights)
        weights = (weights - 0.01 * grad).detach().requires_grad_(True)


def measure(runs: int = RUNS) -> list[float]:
    """The workload's CPU time in this thread, ``runs`` times; call it on one intra-op thread
    (``torch.set_num_threads(1)``), as the labs train: a team of threads for these tiny
    operations doubles the CPU."""
    found = []
    for _ in range(runs):
        started = time.thread_time()
        workload()
        found.append(time.thread_time() - started)
    return found


def slowdown_of(measured: list[float]) -> float:
    """How many times slower than the standard core a core is, from its workload times (the
    fastest run, the one least disturbed): at least 1, at most MAX_SLOWDOWN."""
    return min(MAX_SLOWDOWN, max(1.0, min(measured) / STANDARD_CALIBRATION_S))


def over_budget(function: str, cpu_s: float, cpu_budget_s: float, slowdown: float) -> str | None:
    """The refusal of a lab's run that trained for ``cpu_s`` seconds of CPU on a core
    ``slowdown`` times slower than the standard one, or None when it is within the budget."""
    budget_s = cpu_budget_s * slowdown
    if cpu_s <= budget_s:
        return None
    on_this_core = f", as this core is {slowdown:.1f}x slower than the standard one" if slowdown > 1 else ""
    reference = REFERENCE_CPU_S.get(function)
    needs = f" (the reference trains in about {reference:g} s there)" if reference else ""
    return (
        f"{function} trained for {cpu_s:.1f} s of CPU, over the lab's budget of {budget_s:.1f} s "
        f"({cpu_budget_s:g} s on a standard core{on_this_core}): its parameters are not scored{needs}"
    )
