"""The vetted shims, through the subset: a submission's module imports them as it would the
standard library, honest use works as it does there, and the known escapes are refused with a
rule and a line (or, for what only runs, with an error at the line that tries)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from seqlab.release.render import _subset_files
from seqlab.subset import check
from seqlab.subset.guards import SubsetViolation
from seqlab.subset.modules import ModuleFinder, Modules, install


@pytest.fixture
def load(tmp_path):
    """Run a module's text as the student's process does, and give the module back."""
    saved_path = list(sys.meta_path)
    saved = {k: v for k, v in sys.modules.items() if k == "exercises" or k.startswith("exercises.")}

    def run(text: str):
        text = textwrap.dedent(text)
        verdict = check(text, "exercises/helper.py", frozenset({"helper"}))
        assert not verdict.problems, verdict.problems
        install(Modules({"helper": text}, {}), tmp_path / "exercises")
        sys.modules.pop("exercises.helper", None)
        return __import__("exercises.helper", fromlist=["_"])

    yield run
    sys.meta_path[:] = saved_path
    for name in [k for k in sys.modules if k == "exercises" or k.startswith("exercises.")]:
        del sys.modules[name]
    sys.modules.update(saved)


def refusals(text: str) -> list[str]:
    return [p.render("exercises/helper.py") for p in check(textwrap.dedent(text), "exercises/helper.py").problems]


def test_honest_dataclasses_work_as_in_the_standard_library(load):
    m = load(
        """
        from dataclasses import asdict, dataclass, field, fields, replace, FrozenInstanceError

        @dataclass(frozen=True)
        class Config:
            d_model: int
            heads: int = 2
            tags: tuple = field(default_factory=tuple)

            def __post_init__(self):
                object.__setattr__(self, "head_dim", self.d_model // self.heads)

        @dataclass(order=True)
        class Step:
            t: int
            loss: float = 0.0

        a = Config(8)
        b = replace(a, heads=4)
        frozen = False
        try:
            a.d_model = 3
        except FrozenInstanceError:
            frozen = True
        RESULT = (a.head_dim, b.head_dim, asdict(b), [f.name for f in fields(a)], a == Config(8), repr(a),
                  frozen, sorted([Step(2), Step(1, 3.0)])[0], hash(a) == hash(Config(8)))
        """
    )
    head, head_b, as_dict, names, equal, shown, frozen, first, hashed = m.RESULT
    assert (head, head_b, names, equal, frozen, hashed) == (4, 2, ["d_model", "heads", "tags"], True, True, True)
    assert as_dict == {"d_model": 8, "heads": 4, "tags": ()}
    assert shown == "Config(d_model=8, heads=2, tags=())"
    assert (first.t, first.loss) == (1, 3.0)


def test_an_annotation_key_that_is_code_is_refused_not_run(load):
    with pytest.raises(TypeError, match="is not a name"):
        load(
            """
            from dataclasses import dataclass

            @dataclass
            class Sneaky:
                __annotations__ = {"x=print('ran')": int}
            """
        )


def test_what_writes_onto_an_object_writes_only_onto_the_submissions_own(load):
    m = load(
        """
        import functools
        import torch
        from dataclasses import dataclass

        def mine():
            return 1

        outcomes = []
        for attempt in (lambda: dataclass(torch.nn.Module), lambda: functools.wraps(mine)(torch.nn.functional.relu)):
            try:
                attempt()
                outcomes.append("written")
            except TypeError as exc:
                outcomes.append(str(exc))
        RELU = torch.nn.functional.relu.__name__
        """
    )
    assert m.outcomes == [
        "@dataclass applies to a class of your own",
        "functools.wraps applies to a function of your own",
    ]
    assert m.RELU == "relu"


def test_typing_names_are_inert_markers_and_namedtuples_need_no_eval(load):
    m = load(
        """
        import torch
        from collections import namedtuple
        from typing import Dict, NamedTuple, Optional, Protocol, TypeVar, cast

        T = TypeVar("T")

        class State(NamedTuple):
            h: Optional[torch.Tensor]
            c: int = 0

        class Rule(Protocol):
            def __call__(self, x: Dict[str, torch.Tensor]) -> torch.Tensor: ...

        Gates = namedtuple("Gates", ["r", "z", "n"])
        s = State(None)
        RESULT = (s.c, s._replace(c=2).c, tuple(Gates(1, 2, 3)), Gates(1, 2, 3).z, cast(int, 5))
        """
    )
    assert m.RESULT == (0, 2, (1, 2, 3), 2, 5)


def test_enumerations_from_the_class_body_and_no_functional_api(load):
    m = load(
        """
        import copy
        import enum
        import torch
        from enum import Enum, auto

        class Gate(enum.IntEnum):
            I = 0
            F = 1
            G = 2

        class Norm(Enum):
            POST = auto()
            PRE = auto()

            def describe(self):
                return self.name.lower()

        x = torch.arange(3.0)
        try:
            Enum("Color", "RED GREEN")
            FUNCTIONAL = "made"
        except TypeError:
            FUNCTIONAL = "refused"
        RESULT = (float(x[Gate.F]), Gate.G + 1, [g.name for g in Gate], Norm(2) is Norm.PRE, Norm["POST"].value,
                  Norm.PRE.describe(), len(Norm), copy.deepcopy(Norm.PRE) is Norm.PRE, repr(Norm.PRE), FUNCTIONAL)
        """
    )
    assert m.RESULT == (1.0, 3, ["I", "F", "G"], True, 1, "pre", 2, True, "<Norm.PRE: 2>", "refused")


def test_console_logging_and_no_brace_formats(load, capsys):
    m = load(
        """
        import logging
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
        log = logging.getLogger(__name__)
        log.info("step %d loss %.2f", 3, 0.5)
        log.debug("hidden")
        try:
            logging.Formatter("{message}", style="{")
            BRACE = "accepted"
        except ValueError as exc:
            BRACE = str(exc)
        """
    )
    err = capsys.readouterr().err
    assert "INFO exercises.helper: step 3 loss 0.50" in err and "hidden" not in err
    assert "only %-style" in m.BRACE


def test_functools_warnings_traceback_contextlib_pprint(load, capsys):
    m = load(
        """
        import contextlib, functools, pprint, traceback, warnings

        @functools.lru_cache(maxsize=8)
        def square(n):
            return n * n

        def timed(fn):
            @functools.wraps(fn)
            def inner(*a):
                return fn(*a)
            return inner

        @timed
        def add(a, b):
            return a + b

        @contextlib.contextmanager
        def tagged(log):
            log.append("in")
            yield 7
            log.append("out")

        log = []
        with tagged(log) as seven:
            pass
        with contextlib.suppress(KeyError):
            {}["x"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.warn("quiet")
        try:
            1 / 0
        except ZeroDivisionError:
            TEXT = traceback.format_exc()
        RESULT = (square(4), square.cache_info().hits, add.__name__, functools.reduce(add, [1, 2, 3]),
                  functools.partial(add, 1)(2), log, seven, pprint.pformat({"a": 1}))
        """
    )
    assert m.RESULT == (16, 0, "add", 6, 3, ["in", "out"], 7, "{'a': 1}")
    assert "ZeroDivisionError: division by zero" in m.TEXT and "File " not in m.TEXT
    assert "quiet" not in capsys.readouterr().err


# Strings handed to the shims where the standard library would run or resolve them: none runs.
STRING_ROUTES = {
    "namedtuple-field": 'namedtuple("N", ["a=print(\'PAYLOAD\')"])',
    "namedtuple-functional": 'NamedTuple("S", [("a=print(\'PAYLOAD\')", int)])',
    "optional-string-hint": "Optional[\"print('PAYLOAD')\"]",
    "percent-format-key": 'logging.Formatter("%(__class__)s")',
    "brace-message-as-data": 'logging.getLogger("x").warning("{0.__class__.__init__.__globals__}", 1)',
    "catch-warnings-record": "warnings.catch_warnings(record=True)",
}


@pytest.mark.parametrize("route", sorted(STRING_ROUTES))
def test_a_string_handed_to_a_shim_runs_and_resolves_nothing(load, capsys, route):
    m = load(
        f"""
        import logging
        import warnings
        from collections import namedtuple
        from typing import NamedTuple, Optional

        try:
            OUT = repr({STRING_ROUTES[route]})
        except (TypeError, ValueError) as exc:
            OUT = type(exc).__name__
        """
    )
    captured = capsys.readouterr()
    assert "PAYLOAD" not in captured.out and "PAYLOAD" not in captured.err
    assert "__builtins__" not in captured.err and "function" not in m.OUT


@pytest.mark.parametrize(
    "source, rule",
    [
        ("import unittest", "the module 'unittest' is not in the subset"),
        ("import re", "the module 're' is not in the subset"),
        ("from functools import singledispatch", "functools.singledispatch"),
        ("from dataclasses import make_dataclass", "dataclasses.make_dataclass"),
        ("from collections import UserString", "collections.UserString"),
        ("from functools import total_ordering", "functools.total_ordering"),
        ("import logging.handlers", "logging.handlers"),
        ("from typing import get_type_hints", "typing.get_type_hints"),
        ("from abc import update_abstractmethods", "abc.update_abstractmethods"),
        ("from enum import Flag", "enum.Flag"),
        ("from numpy import bmat", "numpy.bmat"),
    ],
)
def test_what_the_shims_leave_out_is_refused_with_its_line(source, rule):
    problems = refusals(f"import torch\n{source}\n")
    assert problems and all(p.startswith("exercises/helper.py, line 2: ") for p in problems), problems
    assert any(rule in p for p in problems), problems


def test_the_real_module_behind_a_shim_is_refused_however_reached(load):
    with pytest.raises(SubsetViolation, match=r"exercises/helper.py, line 4: .*standard library's dataclasses"):
        load(
            """
            import torch.nn.functional as F

            real = F.dataclasses
            """
        )


def test_the_release_ships_the_shims_and_the_finder_serves_them():
    shipped = _subset_files()
    for name in ("shims.py", "shim_dataclasses.py", "shim_logging.py", "shim_typing.py", "surface.py"):
        assert f"tests/_subset/{name}" in shipped
    finder = ModuleFinder(Modules({}, {}))
    assert finder.guarded_import("dataclasses").__name__ == "dataclasses"
    assert finder.guarded_import("dataclasses") is not sys.modules["dataclasses"]
