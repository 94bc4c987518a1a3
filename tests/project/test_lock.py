"""The locks agree with pyproject.toml, and pin nothing without a hash.

The course venv, CI and the Gradescope image install the locks (``make lock`` writes them) with
``--require-hashes --no-deps``: a dependency added to pyproject.toml but not locked would be
missing there, and one whose lock pin left its bound would be installed anyway.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from seqlab.defaults import GRADING_LOCK, LOCK, TORCH_VERSION

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# lock path -> the extra it locks, on top of [project] dependencies
EXTRA_OF = {LOCK: "instructor", GRADING_LOCK: "grading"}
# Left out of every lock on purpose (scripts/lock.sh says why); the install uses --no-deps.
LEFT_OUT = {"rfc3987-syntax"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)$")
HASH = re.compile(r"^--hash=sha256:[0-9a-f]{64}$")


def parse_lock(text: str) -> dict[str, tuple[str, list[str]]]:
    """``{canonical name: (version, [hashes])}``; raises ValueError on a line that is neither a
    pin, its hashes, nor a comment (an unpinned requirement, an index option)."""
    pins: dict[str, tuple[str, list[str]]] = {}
    # a requirement spans its continuation lines: "name==1.0 \\" then "    --hash=... \\"
    logical = re.sub(r"\s*\\\n\s*", " ", text)
    for number, line in enumerate(logical.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        first, *options = line.split()
        pin = PIN.match(first)
        if not pin or not all(HASH.match(o) for o in options):
            raise ValueError(f"line {number}: not a pin with hashes: {line[:100]}")
        pins[canonicalize_name(pin[1])] = (pin[2], [o.split(":", 1)[1] for o in options])
    return pins


def locked(path: str) -> dict[str, tuple[str, list[str]]]:
    return parse_lock((ROOT / path).read_text(encoding="utf-8"))


def disagreements(declared: list[str], pins: dict[str, tuple[str, list[str]]]) -> list[str]:
    problems = []
    for text in declared:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name not in pins:
            problems.append(f"{text}: not in the lock")
        elif not requirement.specifier.contains(pins[name][0], prereleases=True):
            problems.append(f"{text}: the lock pins {pins[name][0]}")
    return problems


@pytest.mark.parametrize("path", sorted(EXTRA_OF))
def test_every_declared_dependency_is_pinned_inside_its_bound(path):
    declared = PROJECT["dependencies"] + PROJECT["optional-dependencies"][EXTRA_OF[path]]
    problems = disagreements(declared, locked(path))
    assert not problems, f"{path} disagrees with pyproject.toml (run `make lock`): {problems}"


def test_a_missing_pin_and_a_pin_outside_its_bound_are_both_seen():
    pins = {"torch": ("2.15.0+cpu", ["0" * 64])}
    assert disagreements(["torch>=2.1,<2.15", "Jinja2>=3.1"], pins) == [
        "torch>=2.1,<2.15: the lock pins 2.15.0+cpu",
        "Jinja2>=3.1: not in the lock",
    ]


@pytest.mark.parametrize("path", sorted(EXTRA_OF))
def test_every_pin_has_a_hash_and_torch_is_the_cpu_build(path):
    pins = locked(path)  # a pin without its hash does not parse
    assert all(hashes for _version, hashes in pins.values()), [n for n, (_v, h) in pins.items() if not h]
    assert pins["torch"][0] == f"{TORCH_VERSION}+cpu", (
        "the lock's torch is not seqlab.defaults.TORCH_VERSION's CPU build"
    )
    assert not LEFT_OUT & set(pins), f"{path} pins what it must leave out: {LEFT_OUT & set(pins)}"


def test_the_grading_lock_is_the_instructor_lock_cut_down():
    # One resolution for both: the Gradescope image grades with the versions the tests ran with.
    instructor, grading = locked(LOCK), locked(GRADING_LOCK)
    differing = {
        n: (v, instructor.get(n, (None,))[0]) for n, (v, _h) in grading.items() if instructor.get(n) != (v, _h)
    }
    assert not differing, f"pinned differently in {GRADING_LOCK} and {LOCK} (run `make lock`): {differing}"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("numpy>=1.24\n", "not a pin"),
        ("numpy==2.0 \\\n    --hash=md5:abc\n", "not a pin"),
        ("--extra-index-url https://example.invalid/simple\nnumpy==2.0 --hash=sha256:" + "0" * 64 + "\n", "not a pin"),
    ],
)
def test_the_parser_refuses_an_unhashed_pin_and_an_index_option(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_lock(text)
