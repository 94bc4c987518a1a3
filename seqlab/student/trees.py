"""Plain data (tensors and generators in lists, tuples and dicts), copied: the one rule both runners and the
recorded callees use, so that nothing the student's code receives aliases what the grader keeps."""

from __future__ import annotations

from typing import Any

import torch


def clone_tree(obj: Any) -> Any:
    """A deep copy of plain data: tensors cloned, containers rebuilt."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, list):
        return [clone_tree(x) for x in obj]
    if isinstance(obj, tuple):
        return tuple(clone_tree(x) for x in obj)
    if isinstance(obj, dict):
        return {k: clone_tree(v) for k, v in obj.items()}
    if isinstance(obj, torch.Generator):  # a copy draws the same numbers; the grader's stays put
        return torch.Generator(obj.device).set_state(obj.get_state())
    return obj


__all__ = ["clone_tree"]
