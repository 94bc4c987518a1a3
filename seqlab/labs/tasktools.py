"""What the recall, reverser and selective-copy tasks share: their seeds, the reference, the
counts a loss may be off by, and a guard on what comes back.

The session already refuses returns of the wrong structure before it evaluates, but a task's
``evaluate`` is also called by the notebook and the benchmark on whatever a training call gave,
so it checks for itself and scores an unusable return as zero instead of raising: one bad
tensor must cost the lab, never the grading.
"""

from __future__ import annotations

import torch

from ..seeds import derive_seed


def task_seed(seed: int, lab: str, part: str) -> int:
    """A 63-bit seed for one part (``"instance"``, ``"train"``, ``"heldout"``) of a task."""
    return derive_seed(seed, lab, part, nbytes=8) & ((1 << 63) - 1)


def generator(seed: int, lab: str, part: str) -> torch.Generator:
    return torch.Generator().manual_seed(task_seed(seed, lab, part))


def reference():
    """The reference solutions, imported on first use: a task module is imported wherever the
    labs are declared, and only the trusted side ever evaluates."""
    from ..reference import load_reference

    return load_reference()


def loss_counts(batch_size: int, per_sequence: int, outputs: str, size: str) -> dict[str, int]:
    """The counts a loss summed where the protocol averages is off by (the first steps' hint),
    for ``per_sequence`` ``outputs`` in each sequence (``size`` names that number)."""
    return {
        f"{outputs} of a sequence ({size})": per_sequence,
        "sequences in a batch (batch_size)": batch_size,
        f"{outputs} in a batch (batch_size * {size})": batch_size * per_sequence,
    }


def problem(returned, sent, path: str = "params_out") -> str | None:
    """Why ``returned`` cannot stand for ``sent`` (a dict of tensors, nested dicts allowed):
    a missing key, a wrong shape or dtype, a non-tensor, a NaN or an infinity; None if usable.
    Extra keys are ignored (the forward never reads them); their size is the channel's concern."""
    if isinstance(sent, dict):
        if not isinstance(returned, dict):
            return f"{path} should be a dict, got {type(returned).__name__}"
        for key, value in sent.items():
            if key not in returned:
                return f"{path} has no {key!r}"
            found = problem(returned[key], value, f"{path}[{key!r}]")
            if found:
                return found
        return None
    if not isinstance(returned, torch.Tensor):
        return f"{path} should be a tensor, got {type(returned).__name__}"
    if tuple(returned.shape) != tuple(sent.shape) or returned.dtype != sent.dtype:
        return f"{path} is {tuple(returned.shape)} {returned.dtype}, expected {tuple(sent.shape)} {sent.dtype}"
    if not bool(torch.isfinite(returned).all()):
        return f"{path} holds NaN or infinite values"
    return None


def usable(returned, sent) -> dict | None:
    """``returned`` restricted to the keys of ``sent``, detached and on the CPU, or None."""
    if problem(returned, sent) is not None:
        return None

    def pick(r, s):
        if isinstance(s, dict):
            return {k: pick(r[k], v) for k, v in s.items()}
        return r.detach().cpu()

    return pick(returned, sent)
