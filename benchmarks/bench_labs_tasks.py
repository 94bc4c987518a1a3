"""The recall, reverser and selective-copy labs: the reference's CPU time and its held-out
figures over fresh seeds, and each lab's claim.

For every seed, each lab's task is drawn as a grading draws it, the reference trains in this
process on one thread (run the script under ``taskset -c 0`` to pin it to one core, as the
grader's child is), and the task's ``evaluate`` scores the result on the held-out data. The
claims are checked on the same task instances: the plain RNN trained the same way on the same
lag (it must stay near chance), and the time-invariant SSM on the same initial weights.

Prints per lab the CPU seconds (median, max), each metric (min, median, max) next to its bound,
and the claim's figures. Floor (exit status 1 otherwise): every seed meets every bound, the
slowest training is within the lab budget (5 s), the RNN's best recall accuracy and the
time-invariant model's best copy accuracy stay below the labs' bounds.

    taskset -c 0 .venv/bin/python benchmarks/bench_labs_tasks.py [--seeds 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from seqlab.labs import recall, reverser, selective_copy  # noqa: E402
from seqlab.labs.tasktools import generator  # noqa: E402
from seqlab.reference import load_reference  # noqa: E402

BUDGET_S = 5.0


def trained(train, child_inputs):
    started = time.process_time()
    params, _ = train(**child_inputs)
    return params, time.process_time() - started


def spread(values):
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--labs", default="recall,reverser,selective_copy", help="comma-separated subset")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ref = load_reference()
    labs = [
        ("recall", recall, ref.lstm_gru.train_recall),
        ("reverser", reverser, ref.transformer.train_reverser),
        ("selective_copy", selective_copy, ref.selective_scan.train_selective_copy),
    ]
    labs = [lab for lab in labs if lab[0] in args.labs.split(",")]
    cpu = {name: [] for name, _, _ in labs}
    metrics = {name: {} for name, _, _ in labs}
    claims = {"rnn": [], "time_invariant": [], "anti_diagonal": []}
    for seed in range(args.seeds):
        for name, task, train in labs:
            child_inputs, heldout = task.draw_task(seed)
            params, seconds = trained(train, child_inputs)
            cpu[name].append(seconds)
            for key, value in task.evaluate(params, child_inputs, heldout).items():
                metrics[name].setdefault(key, []).append(value)
            if name == "recall":
                rnn = dict(child_inputs, kind="rnn", generator=generator(seed, recall.NAME, "train"))
                rnn["params"] = recall.initial_params("rnn", generator(seed, recall.NAME, "instance"))
                claims["rnn"].append(recall.evaluate(trained(train, rnn)[0], rnn, heldout)["accuracy"])
            elif name == "reverser" and seed == 0:
                claims["anti_diagonal"].append(reverser.figures(params, child_inputs)["anti_diagonal"])
            elif name == "selective_copy":
                lti = dict(child_inputs, selective=False, generator=generator(seed, selective_copy.NAME, "train"))
                claims["time_invariant"].append(
                    selective_copy.evaluate(trained(train, lti)[0], lti, heldout)["accuracy"]
                )
        print(f"seed {seed} done", file=sys.stderr, flush=True)

    failed = []
    print(f"{args.seeds} seeds, one thread; metric: min / median / max (bound)")
    for name, task, _ in labs:
        print(
            f"{name:15s} cpu s: median {statistics.median(cpu[name]):.2f}, max {max(cpu[name]):.2f} (budget {BUDGET_S:g})"
        )
        if max(cpu[name]) > BUDGET_S:
            failed.append(f"{name} over budget")
        for key, values in metrics[name].items():
            bound = task.THRESHOLDS.get(key)
            print(f"{'':15s} {key:15s} {spread(values)}" + (f"  (>= {bound:g})" if bound is not None else ""))
            if bound is not None and min(values) < bound:
                failed.append(f"{name} {key} below {bound}")
    if claims["rnn"]:
        chance = 1 / (recall.K // 2)
        print(f"claim: plain RNN on the same recall tasks, accuracy {spread(claims['rnn'])} (chance {chance:g})")
        if max(claims["rnn"]) >= recall.THRESHOLDS["accuracy"]:
            failed.append("the RNN reaches the recall bound")
    if claims["time_invariant"]:
        print(
            f"claim: time-invariant SSM on the copy tasks, accuracy {spread(claims['time_invariant'])} (chance 0.125)"
        )
        if max(claims["time_invariant"]) >= selective_copy.THRESHOLDS["accuracy"]:
            failed.append("the time-invariant SSM reaches the copy bound")
    if claims["anti_diagonal"]:
        print(f"claim: reverser cross-attention on the anti-diagonal (seed 0): {claims['anti_diagonal'][0]:.3f}")
    for line in failed:
        print("FAIL:", line)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
