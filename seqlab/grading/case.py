"""A test case: its sizes and options written once, the inputs drawn from them, and the name
the feedback gives the case.

    case = Case(make, B=3, T=6, D=4, H=5, dtype=dtype).note("nonzero h0")
    x = case.randn("B", "T", "D")           # (3, 6, 4), in the case's dtype, on the test's device
    h0 = case.randn("B", "H", scale=0.5)
    str(case)                               # "B=3, T=6, D=4, H=5, float64, nonzero h0"

Dimensions are named sizes of the case or plain ints; a size may itself be a shape (a tuple).
Draws go through the test's ``make`` (one seeded generator per test), in the order they are made.
"""

from __future__ import annotations

from typing import Any

import torch


class Make:
    """Random inputs drawn on the CPU from the test's generator, then moved to the device, so
    a seed means the same numbers on every device (the graders' ``make`` fixture)."""

    def __init__(self, gen: torch.Generator, device: torch.device) -> None:
        self.gen, self.device = gen, device

    def randn(self, *shape: int, dtype: torch.dtype = torch.float64, scale: float = 1.0) -> torch.Tensor:
        return (torch.randn(*shape, generator=self.gen, dtype=torch.float64) * scale).to(self.device, dtype)

    def uniform(
        self, *shape: int, low: float = 0.0, high: float = 1.0, dtype: torch.dtype = torch.float64
    ) -> torch.Tensor:
        x = torch.rand(*shape, generator=self.gen, dtype=torch.float64) * (high - low) + low
        return x.to(self.device, dtype)

    def randint(self, high: int, *shape: int, low: int = 0) -> torch.Tensor:
        return torch.randint(low, high, shape, generator=self.gen).to(self.device)

    def mask(self, *shape: int, p_keep: float = 0.7) -> torch.Tensor:
        return (torch.rand(*shape, generator=self.gen) < p_keep).to(self.device)

    def integer(self, low: int, high: int) -> int:
        """A Python int in [low, high], from the same generator."""
        return int(torch.randint(low, high + 1, (), generator=self.gen))


def describe_case(**params: Any) -> str:
    """``B=2, T=5, float64``: how a case is named in feedback (a dtype by its name, a True
    option by its name alone, False and None options left out)."""
    parts: list[str] = []
    for key, value in params.items():
        if isinstance(value, torch.dtype):
            parts.append(str(value).replace("torch.", ""))
        elif value is True:
            parts.append(key)
        elif value is False or value is None:
            continue
        else:
            parts.append(f"{key}={value}")
    return ", ".join(parts)


class Case:
    def __init__(self, make: Make, /, **params: Any) -> None:
        self.make, self.params = make, dict(params)
        self.notes: list[str] = []

    def __getattr__(self, name: str) -> Any:
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(f"this case has no size or option {name!r} (it has {', '.join(params)})")

    def note(self, text: str) -> Case:
        """Add free text to the case's name ("batch 1 fully masked"); returns the case."""
        self.notes.append(text)
        return self

    def __str__(self) -> str:
        return ", ".join(part for part in (describe_case(**self.params), *self.notes) if part)

    # -- drawing ---------------------------------------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        dtype: torch.dtype = self.params.get("dtype", torch.float64)
        return dtype

    @property
    def device(self) -> torch.device:
        return self.make.device

    def shape(self, *dims: str | int | tuple[int, ...]) -> tuple[int, ...]:
        """The shape whose dimensions are these sizes of the case (names) or ints."""
        shape: list[int] = []
        for dim in dims:
            size = self.params[dim] if isinstance(dim, str) else dim
            shape.extend(size if isinstance(size, tuple) else (size,))
        return tuple(shape)

    def randn(
        self, *dims: str | int | tuple[int, ...], scale: float = 1.0, dtype: torch.dtype | None = None
    ) -> torch.Tensor:
        return self.make.randn(*self.shape(*dims), dtype=dtype or self.dtype, scale=scale)

    def uniform(
        self, *dims: str | int | tuple[int, ...], low: float = 0.0, high: float = 1.0, dtype: torch.dtype | None = None
    ) -> torch.Tensor:
        return self.make.uniform(*self.shape(*dims), low=low, high=high, dtype=dtype or self.dtype)

    def randint(self, high: str | int, *dims: str | int | tuple[int, ...]) -> torch.Tensor:
        """Integers in [0, high) (``high`` a size of the case, e.g. the vocabulary "V")."""
        return self.make.randint(self.shape(high)[0], *self.shape(*dims))

    def mask(self, *dims: str | int | tuple[int, ...], p_keep: float = 0.7) -> torch.Tensor:
        return self.make.mask(*self.shape(*dims), p_keep=p_keep)

    def integer(self, low: int, high: int) -> int:
        return self.make.integer(low, high)


def case_sizes(case: Case | str, names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A case's sizes and options; for a case named by a string, the call's int arguments by
    their parameter names (``sinusoidal_encoding(12, 16)``: num_positions=12, d_model=16), so
    that a scale written with a size can still be named by it."""
    if isinstance(case, Case):
        return dict(case.params)
    found = {names[i]: a for i, a in enumerate(args) if i < len(names) and type(a) is int}
    return {**found, **{k: v for k, v in kwargs.items() if type(v) is int}}
