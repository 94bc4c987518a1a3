"""Known mistakes: wrong variants a grader computes on the test's own inputs, so that a failure
can say which classic slip the student's output matches, in one sentence that teaches.

Graders hand ``grade.check`` a *source* of mistakes: a list, or a function of the checked
call's arguments that returns one. The function runs only when the answer is wrong, so the
variants cost nothing on a correct submission.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ..tolerance import Tolerance
from .compare import matches
from .evidence import probe_evidence, row_evidence


@dataclass
class Mistake:
    """A known wrong variant: its output on the same input, and one sentence that teaches.

    ``tol``: match the variant within this tolerance instead of the check's own (e.g. "right
    only to float32 accuracy" is the reference's answer matched with the float32 tolerance).
    """

    name: str
    output: Any
    explain: str
    tol: Tolerance | None = None

    @property
    def hint(self) -> str:
        return f"{self.name}: {self.explain}"


def variant_output(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A known-wrong variant's output on these inputs, or None where it cannot even run on them
    (a variant written for one shape may fail on another: then it simply names nothing)."""
    try:
        with torch.no_grad():
            return fn(*args, **kwargs)
    except Exception:  # the docstring's case: a variant that cannot run here names nothing
        return None


def from_table(
    table: Iterable[tuple[str, Any, str]], variant: Callable[..., Any] | None = None
) -> Callable[..., list[Mistake]]:
    """A source of mistakes from rows ``(name, how, explanation)``, evaluated on the checked
    call's own arguments: ``how`` is a function of those arguments, or, with ``variant``, the
    keyword switches that turn ``variant`` into the mistake (``variant(*args, **kwargs, **how)``)."""
    rows = list(table)

    def build(*args: Any, **kwargs: Any) -> list[Mistake]:
        found = []
        for name, how, explain in rows:
            output = (
                variant_output(variant, *args, **kwargs, **how) if variant else variant_output(how, *args, **kwargs)
            )
            found.append(Mistake(name, output, explain))
        return found

    return build


def first_match(actual: Any, mistakes: Iterable[Mistake], tol: Tolerance) -> Mistake | None:
    """The first mistake whose output ``actual`` matches (structure and values), or None, also
    when mistakes of different names match: on some cases two slips give the same output (a
    causal mask of size 1 without its diagonal is also the inverted one), and naming either would
    be a guess; the other cases of the function tell them apart."""
    found = [m for m in mistakes if m.output is not None and matches(actual, m.output, m.tol or tol)]
    return found[0] if found and len({m.name for m in found}) == 1 else None


def consistent(value: Any, output: Any, expected: Any, tol: Tolerance) -> bool:
    """Whether a variant's output agrees with the student's on every part the student has right:
    a variant wrong where the student is right is not the student's mistake, even where the two
    agree on the part that fails (a last state taken one chunk early, by a variant that also drops
    the chunk from a loss the student has right)."""
    trees = (expected, value, output)
    if all(isinstance(x, (tuple, list)) for x in trees) and len(expected) == len(value) == len(output):
        return all(consistent(v, o, e, tol) for v, o, e in zip(value, output, expected))
    if isinstance(expected, dict) and isinstance(value, dict) and isinstance(output, dict):
        return all(consistent(value.get(k), output.get(k), e, tol) for k, e in expected.items())
    return output is None or not matches(value, expected, tol) or matches(output, value, tol)


class LazyMistakes:
    """A check's source of mistakes, built at most once and only when asked for.

    A source that raises (a grader's variant that cannot run on these inputs) names nothing:
    the student's failure stands as it is, with the variant's error kept for the instructor.
    """

    def __init__(
        self, source: Callable[..., list[Mistake]] | Iterable[Mistake], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        self.source, self.args, self.kwargs = source, args, kwargs
        self.built: list[Mistake] | None = None
        self.error = ""
        # for naming a mistake no variant lists (seqlab.grading.diagnose): the case's sizes and
        # the reference's outputs with one input left out, set by the check
        self.sizes: dict[str, Any] = {}
        self.probes: Callable[[], list[tuple[str, Any, str]]] | None = None
        # (where, the student's part, tolerance) -> the reference's one changed operation it
        # matches, said as feedback (seqlab.grading.rewrite), or ""
        self.rewrite: Callable[[Any, Any, Tolerance], str] | None = None
        # (where, tolerance) -> the inputs whose zeroing makes the answer right (seqlab.grading.sensitivity)
        self.sensitivity: Callable[[Any, Tolerance], str] | None = None
        self.before: Any = None  # what the checked value's parts start from (an update's w), if given

    def evidence(
        self, fits: list[Mistake], picked: list[Mistake], actual: Any, tol: Tolerance, at: tuple[Any, ...]
    ) -> dict[str, Any]:
        """What this failure rules out, for the function's other tests (seqlab.grading.evidence)."""
        computed = getattr(self.probes, "cache_info", None)  # probes are never computed for this alone
        probes = self.probes() if self.probes is not None and computed is not None and computed().currsize else []
        return {**row_evidence(self(), fits, picked, actual, tol), **probe_evidence(probes, at, actual, tol)}

    def __call__(self) -> list[Mistake]:
        if self.built is None:
            try:
                source = self.source
                self.built = list(source(*self.args, **self.kwargs) if callable(source) else source)
            except Exception as exc:  # a bug in a variant must not turn a failure into a crash
                self.built, self.error = [], f"{type(exc).__name__}: {exc}"
        return self.built


def _zeroed(value: Any) -> Any:
    return torch.zeros_like(value) if isinstance(value, torch.Tensor) and value.is_floating_point() else None


LEFT_OUT = "that term is left out (or the input not used)"
TRANSPOSED = "a weight applied the other way round (x @ W where x @ W.T belongs, or the reverse)"
SWAPPED = "the two are used in each other's place"
USED_FOR = "one input used where another of the same shape belongs"
DEFAULTED = "the argument given is not used (a fixed value in its place)"
# Only a bias: it enters as one added term, so doubling it is exactly "added twice" (b_ih and b_hh
# both given b); a doubled weight would also read as a scale, which diagnose.py names.
TWICE = "that term is added twice (once per projection, say), where it is added once"


def _bias(name: str) -> bool:
    return name.split("[")[-1].strip("']").startswith("b")


Slot = int | str  # an argument by position, or by keyword
# (slot, key, replacement): the argument (or, with a key, its dict entry) to replace; None drops it
Edit = tuple[Slot, Any, Any]


def _inputs(names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[tuple[str, Slot, Any, Any]]:
    """(name, slot, key, value): every argument, and every entry of a dict argument (key set)."""
    named: list[tuple[str, Slot, Any]] = [
        (names[i] if i < len(names) else f"argument {i}", i, v) for i, v in enumerate(args)
    ]
    for name, slot, value in named + [(k, k, v) for k, v in kwargs.items()]:
        if isinstance(value, dict):
            for key, entry in value.items():
                yield f"{name}[{key!r}]", slot, key, entry
        else:
            yield name, slot, None, value


def _changes(
    ref: Callable[..., Any], names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[tuple[str, str, list[Edit]]]:
    """(what, what it means, edits): the one-input changes a student's slip amounts to."""
    inputs = list(_inputs(names, args, kwargs))
    floats = [(n, s, k, v) for n, s, k, v in inputs if isinstance(v, torch.Tensor) and v.is_floating_point()]
    changes: list[tuple[str, str, list[Edit]]] = [
        (f"{n} = 0", LEFT_OUT, [(s, k, torch.zeros_like(v))]) for n, s, k, v in floats
    ]
    biases = [
        edit for what, _, edits in changes if what.split("[")[-1].strip("'] =0").startswith("b") for edit in edits
    ]
    if len(biases) > 1:
        changes.append(("every bias = 0", LEFT_OUT, biases))
    changes += [(f"{n} doubled", TWICE, [(s, k, 2 * v)]) for n, s, k, v in floats if _bias(n)]
    masks = [
        (n, s, k, v) for n, s, k, v in inputs if "mask" in n and isinstance(v, torch.Tensor) and v.dtype == torch.bool
    ]
    changes += [(f"no {n}", "the mask is not applied", [(s, k, None)]) for n, s, k, v in masks]
    changes += [(f"{n} inverted", "True means may attend / keep in this package", [(s, k, ~v)]) for n, s, k, v in masks]
    square = [(n, s, k, v) for n, s, k, v in floats if v.dim() == 2 and v.shape[0] == v.shape[1] > 1]
    changes += [(f"{n} transposed", TRANSPOSED, [(s, k, v.T)]) for n, s, k, v in square]
    for (a, sa, ka, va), (b, sb, kb, vb) in itertools.combinations(floats, 2):
        if va.shape == vb.shape and va.numel() > 1:
            changes.append((f"{a} and {b} swapped", SWAPPED, [(sa, ka, vb), (sb, kb, va)]))
            changes.append((f"{b} in place of {a}", USED_FOR, [(sa, ka, vb)]))
            changes.append((f"{a} in place of {b}", USED_FOR, [(sb, kb, va)]))
    for one, two in itertools.combinations(_bundles(names, args, kwargs), 2):
        if one[2].keys() == two[2].keys() and all(_shape(one[2][r][1]) == _shape(two[2][r][1]) for r in one[2]):
            two_for_one = [(one[1], one[2][r][0], two[2][r][1]) for r in one[2]]
            one_for_two = [(two[1], two[2][r][0], one[2][r][1]) for r in one[2]]
            changes.append((f"{two[0]} in place of {one[0]}", USED_FOR, two_for_one))
            changes.append((f"{one[0]} in place of {two[0]}", USED_FOR, one_for_two))
            changes.append((f"{one[0]} and {two[0]} swapped", SWAPPED, two_for_one + one_for_two))
    try:
        defaults = {p.name: p.default for p in inspect.signature(ref).parameters.values()}
    except (TypeError, ValueError):
        defaults = {}
    for n, s, k, v in inputs:
        if isinstance(v, float) and k is None:
            changes.append((f"{n} = 0", LEFT_OUT, [(s, k, 0.0)]))
            default = defaults.get(n)
            if isinstance(default, float) and default != v:
                changes.append((f"{n} = {default:g} (its default) instead of {v:g}", DEFAULTED, [(s, k, default)]))
    return changes


Bundle = tuple[str, Slot, dict[str, tuple[Any, Any]]]  # (name, slot, {role: (key, value)})


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _shape(v)) for k, v in value.items()))
    return tuple(value.shape) if isinstance(value, torch.Tensor) else None


def _bundles(names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Bundle]:
    """Inputs that go together, one used in place of another as a whole: a dict of tensors (an
    argument or an entry: params_fwd for params_bwd, params['norm2'] for params['norm1']), and
    the entries of a dict that share a suffix (W_k and b_k for W_v and b_v)."""
    found: list[Bundle] = []
    named = [(names[i] if i < len(names) else f"argument {i}", i, v) for i, v in enumerate(args)]
    for name, slot, value in named + [(k, k, v) for k, v in kwargs.items()]:
        if not isinstance(value, dict):
            continue
        if all(isinstance(v, torch.Tensor) for v in value.values()):
            found.append((name, slot, {"*": (None, value)}))
        groups: dict[str, dict[str, tuple[Any, Any]]] = {}
        for key, entry in value.items():
            if isinstance(entry, dict) and all(isinstance(v, torch.Tensor) for v in entry.values()):
                found.append((f"{name}[{key!r}]", slot, {"*": (key, entry)}))
            elif isinstance(key, str) and "_" in key and isinstance(entry, torch.Tensor):
                prefix, _, suffix = key.rpartition("_")
                groups.setdefault(suffix, {})[prefix] = (key, entry)
        for group in groups.values():
            if len(group) > 1:  # one entry alone is the single input's own change
                found.append((" and ".join(f"{name}[{k!r}]" for k, _ in group.values()), slot, group))
    return found


def _edited(args: tuple[Any, ...], kwargs: dict[str, Any], edits: list[Edit]) -> tuple[list[Any], dict[str, Any]]:
    # positions and keywords in one mapping: an int slot is a position, a str one a keyword
    values: dict[Slot, Any] = dict(enumerate(args))
    values.update(kwargs.items())
    for slot, key, replacement in edits:
        values[slot] = replacement if key is None else {**values[slot], key: replacement}
    return [values[i] for i in range(len(args))], {k: values[k] for k in kwargs}


def zeroed_inputs(
    names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[tuple[str, list[Any], dict[str, Any]]]:
    """(name, args, kwargs) with that one floating-point input (argument or dict entry) zeroed."""
    return [
        (n, *_edited(args, kwargs, [(s, k, torch.zeros_like(v))]))
        for n, s, k, v in _inputs(names, args, kwargs)
        if isinstance(v, torch.Tensor) and v.is_floating_point()
    ]


def without_inputs(
    ref: Callable[..., Any],
    names: list[str],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    time: int | None = None,
) -> list[tuple[str, Any, str]]:
    """The reference's output with one input changed the way a slip changes it, as ``(what,
    output, what it means)``: each floating-point input (argument or dict entry) set to zero,
    every bias together, a mask dropped or inverted, a square weight transposed, two inputs of one shape
    swapped, a float set to zero or to its default, the sequence inputs reversed in time (and the
    output reversed back: a recurrence run right to left). Computed only on a failure."""
    found: list[tuple[str, Any, str]] = []
    reversed_in_time = _reversed_in_time(names, args, kwargs, time)
    for what, meaning, edits in _changes(ref, names, args, kwargs) + reversed_in_time:
        new_args, new_kwargs = _edited(args, kwargs, edits)
        try:
            with torch.no_grad():
                output = ref(*new_args, **new_kwargs)
        except Exception:  # a change the reference cannot run with (a dropped mask) names nothing
            continue
        found.append((what, output, meaning))
        if edits and reversed_in_time and edits is reversed_in_time[0][2]:
            found.append((RIGHT_TO_LEFT[0], _flip_time(output, edits[0][2].shape[1]), RIGHT_TO_LEFT[1]))
    return found


READ_BACKWARDS = "the sequence reversed in time", "step t reads position T-1-t: the sequence is read backwards"
RIGHT_TO_LEFT = (
    "the sequence reversed in time and the result reversed back",
    "the recurrence runs from the last step to the first (right to left) where it runs left to right",
)


def _reversed_in_time(
    names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any], time: int | None
) -> list[tuple[str, str, list[Edit]]]:
    """Every sequence input (batch-first: axis 1 of size T) reversed along time, as one change.
    Without the case's T, the first input of two or more axes gives it."""
    inputs = [(s, k, v) for _, s, k, v in _inputs(names, args, kwargs) if isinstance(v, torch.Tensor)]
    sequences = [(s, k, v) for s, k, v in inputs if v.is_floating_point() and v.dim() >= 2]
    T = time if isinstance(time, int) else (sequences[0][2].shape[1] if sequences else 0)
    edits: list[Edit] = [(s, k, v.flip(1)) for s, k, v in sequences if v.shape[1] == T]
    return [(READ_BACKWARDS[0], READ_BACKWARDS[1], edits)] if T > 1 and edits else []


def _flip_time(tree: Any, T: int) -> Any:
    if isinstance(tree, (tuple, list)):
        return type(tree)(_flip_time(x, T) for x in tree)
    if isinstance(tree, torch.Tensor) and tree.dim() >= 2 and tree.shape[1] == T:
        return tree.flip(1)
    return tree
