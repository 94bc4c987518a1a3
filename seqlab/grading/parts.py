"""The parts of a returned tuple: the names a grader gives its items (nested for a nested
tuple), the arity gate's wording, and picking one part out of a returned tree."""

from __future__ import annotations

from typing import Any

from ..contract import SIGNATURES

Names = tuple[Any, ...]  # ("hs", ("h_T", "c_T")): the names of a returned tuple's items, nested for a nested tuple


def render(names: Names) -> str:
    return ", ".join(f"({render(n)})" if isinstance(n, tuple) else n for n in names)


def _kind(value: Any) -> str:
    return f"a {type(value).__name__}" + (f" of {len(value)}" if isinstance(value, (tuple, list)) else "")


def arity_problem(value: Any, names: Names) -> str | None:
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        return f", got {_kind(value)}"
    for i, (item, name) in enumerate(zip(value, names)):
        if isinstance(name, tuple) and arity_problem(item, name):
            return f"; its item {i} should be the tuple ({render(name)}), got {_kind(item)}"
    return None


At = tuple[Any, ...]  # where a part sits in the returned tree: (1, 0) is value[1][0], (0, "W") a key


def named_parts(names: Names, at: At = ()) -> list[tuple[str, At]]:
    """``[("hs", (0,)), ("h_T", (1, 0)), ("c_T", (1, 1))]`` for ``("hs", ("h_T", "c_T"))``."""
    parts: list[tuple[str, At]] = []
    for i, name in enumerate(names):
        parts += named_parts(name, (*at, i)) if isinstance(name, tuple) else [(name, (*at, i))]
    return parts


def pick(tree: Any, at: At) -> Any:
    for key in at:
        tree = tree[key]
    return tree


def pick_or_none(tree: Any, at: At) -> Any:
    """A mistake's part, or None where its output has no such part (then it names nothing)."""
    try:
        return pick(tree, at)
    except (IndexError, KeyError, TypeError):
        return None


def split_dicts(parts: list[tuple[str, At]], expected: Any) -> list[tuple[str, At]]:
    """Each dict-valued part replaced by one part per key (structure already checked equal)."""
    split: list[tuple[str, At]] = []
    for label, at in parts:
        part = pick(expected, at)
        split += [(f"{label}[{key!r}]", (*at, key)) for key in part] if isinstance(part, dict) else [(label, at)]
    return split


def param_names(qualname: str) -> list[str]:
    """A contract function's parameter names, in order (what feedback calls its inputs)."""
    return [p.split("=")[0].strip() for p in SIGNATURES[qualname].strip("()").split(",") if p.strip()]
