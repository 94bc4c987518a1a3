"""The allowed surface: the audit lists nothing on it, catches each known escape when its module
is (hypothetically) allowed, and the vetted shims keep what honest code reaches for."""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
import unittest

import pytest

from seqlab.subset import rules, shims, surface

# Each known way out through allowed library code, and the finding that names it: the audit must
# see it were the module put back on the surface.
KNOWN_ESCAPES = {
    # @dataclass pastes __annotations__ keys into source it exec's
    "dataclasses.dataclass": (dataclasses.dataclass, "dataclasses._create_fn", "calls exec"),
    # singledispatch's register() evaluates a string annotation
    "functools.singledispatch": (functools.singledispatch, "typing.ForwardRef._evaluate", "calls eval"),
    # loadTestsFromName imports any module by string and calls what it names
    "unittest.TestLoader": (unittest.TestLoader, "unittest.loader.TestLoader.loadTestsFromName", "calls __import__"),
    # a {-style format reads attributes of the record's values
    "logging.Formatter": (logging.Formatter, "logging.Formatter.formatMessage", "formats a computed template"),
}


def test_the_allowed_surface_lists_nothing():
    start = time.process_time()
    findings = surface.audit()
    elapsed = time.process_time() - start
    assert not findings, surface.report(findings)
    # 0.2 s of CPU here (wall time on a shared machine says little); ten times that means the
    # walk lost its memo and reads functions again
    assert elapsed < 2, elapsed


@pytest.mark.bank  # walks numpy: about 2 s
def test_the_open_modules_are_named_and_what_they_hold_is_listed():
    """numpy stays allowed for honest code while the audit still flags code it reaches: what it
    holds is listed (never silently), every finding reached from numpy's own names, and none of
    them from a name the rules deny."""
    assert set(surface.OPEN) == {"numpy"} and set(surface.OPEN) <= set(rules.ALLOWED_MODULES)
    findings = surface.open_findings()
    assert findings and all(f.via.startswith("numpy.") for f in findings)
    denied = {f"numpy.{name}" for name in rules.DENIED_ATTRIBUTES["numpy"]}
    assert not {f.via for f in findings} & denied


@pytest.mark.bank  # each walks a large part of the standard library: 1 to 3 s
@pytest.mark.parametrize("name", sorted(KNOWN_ESCAPES))
def test_the_audit_catches_each_known_escape(name):
    value, function, what = KNOWN_ESCAPES[name]
    findings = surface.audit({name: value})
    assert any(f.function == function and f.what.startswith(what) for f in findings), surface.report(findings)


def test_the_audit_sees_a_string_run_inside_a_helper_it_reaches():
    def helper(text):
        return eval(text)

    def surface_function(x):
        return helper(x)

    surface_function.__globals__["helper"] = helper  # reached through a global, as library code is
    try:
        findings = surface.audit({"m.surface_function": surface_function})
    finally:
        del surface_function.__globals__["helper"]
    assert [f.what for f in findings] == ["calls eval"]


def test_the_shims_hold_exactly_what_the_rules_let_a_submission_read():
    for name in shims.SHIMS:
        assert rules.ALLOWED_ONLY[name] == shims.exports(name), name
        assert name in rules.ALLOWED_MODULES, name


def test_the_real_module_behind_a_shim_is_an_impostor():
    import torch.nn.functional as F

    assert shims.impostor(F.dataclasses) is not None  # torch.nn.functional.dataclasses is the real one
    assert shims.impostor(shims.SHIMS["dataclasses"]) is None


def test_refused_modules_are_off_the_surface():
    for name in ("unittest", "re", "json", "string", "textwrap", "fractions"):
        assert name not in rules.ALLOWED_MODULES, name


def test_the_cli_exits_zero_on_the_surface(capsys):
    assert surface.main() == 0
    assert "nothing reachable" in capsys.readouterr().out
