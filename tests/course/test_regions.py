"""seqlab/regions.py: the solution markers parsed once, the stubs written once.

Mirrors the module the way nbgrader's test_clearsolutions.py mirrors its preprocessor: one test
per rule of the transformation, then the three users (build, release, nbgrader) shown to agree.
"""

from __future__ import annotations

import pytest

from seqlab import build, contract
from seqlab.nbgrader.source import load_topics, parse_topic
from seqlab.paths import EXERCISES_DIR, SOLUTIONS_DIR
from seqlab.regions import (
    PROVIDED_HEADER,
    SOLUTION_REGIONS,
    STUB_HEADER,
    SolutionRegionError,
    SolutionRegions,
    clear_solutions,
    strip_markers,
    stub_module,
)

TWO_REGIONS = '''def f(x):
    """Doc stays."""
    ### BEGIN SOLUTION
    y = x + 1
    return y
    ### END SOLUTION


def g(x):
    if x:
        ### BEGIN SOLUTION
        return 2 * x
        ### END SOLUTION
    return 0
'''


def test_a_region_becomes_the_stub_lines_at_the_markers_indentation():
    assert (
        clear_solutions(TWO_REGIONS)
        == '''def f(x):
    """Doc stays."""
    # YOUR CODE HERE
    raise NotImplementedError()


def g(x):
    if x:
        # YOUR CODE HERE
        raise NotImplementedError()
    return 0
'''
    )


def test_strip_removes_only_the_marker_lines():
    stripped = strip_markers(TWO_REGIONS)
    assert "SOLUTION" not in stripped
    assert stripped.splitlines() == [line for line in TWO_REGIONS.splitlines() if "SOLUTION" not in line]


def test_regions_and_split_report_every_line_with_its_number():
    regions = SOLUTION_REGIONS.regions(TWO_REGIONS)
    assert [(r.begin_line, r.end_line, r.indent) for r in regions] == [(3, 6, "    "), (11, 13, "        ")]
    assert regions[0].body == ("    y = x + 1", "    return y")
    inside, outside = SOLUTION_REGIONS.split(TWO_REGIONS)
    assert inside == [(4, "    y = x + 1"), (5, "    return y"), (12, "        return 2 * x")]
    assert "    return 0" in outside and not any("SOLUTION" in line for line in outside)


def test_a_marker_must_stand_alone_on_its_line():
    # Code or a comment after the marker makes it ordinary text: half-marked files are not
    # silently cleared, they are left whole (and the release's leak check catches the text).
    source = "def f():\n    x = 1  ### BEGIN SOLUTION\n    return x\n"
    assert clear_solutions(source) == source
    assert not SOLUTION_REGIONS.has_regions(source)
    assert SOLUTION_REGIONS.is_marker("    ### END SOLUTION   \n")


@pytest.mark.parametrize(
    "source, message",
    [
        ("    ### BEGIN SOLUTION\n    x = 1\n", "f.py:1: ### BEGIN SOLUTION is never closed"),
        ("    ### END SOLUTION\n", "f.py:1: ### END SOLUTION without a matching"),
        (
            "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n",
            "f.py:2: ### BEGIN SOLUTION inside the region opened at line 1",
        ),
    ],
)
def test_markers_that_do_not_pair_up_name_the_line(source, message):
    for transform in (SOLUTION_REGIONS.clear, SOLUTION_REGIONS.strip, SOLUTION_REGIONS.split, SOLUTION_REGIONS.regions):
        with pytest.raises(SolutionRegionError, match=message):
            transform(source, filename="f.py")


def test_delimiters_and_stub_lines_are_configured_once():
    custom = SolutionRegions(begin="# >>> answer", end="# <<< answer", stub_lines=("pass  # your turn",))
    source = "def f():\n    # >>> answer\n    return 1\n    # <<< answer\n"
    assert custom.clear(source) == "def f():\n    pass  # your turn\n"
    assert clear_solutions(source) == source  # the default markers are not these


def test_stub_module_header_says_what_to_do():
    assert stub_module(TWO_REGIONS, "rnn").startswith(STUB_HEADER.format(module="rnn"))
    assert stub_module('"""Package docstring."""\n', "__init__") == PROVIDED_HEADER + '"""Package docstring."""\n'
    for header in (STUB_HEADER, PROVIDED_HEADER):
        # The release ships this header: it must pass the leak check's word list.
        assert not {"seqlab", "solutions", "graders", "grading_config"} & set(header.lower().split())


# --- the three users agree ---------------------------------------------------------------------


def test_exercises_on_disk_are_the_stubs_of_the_solutions():
    for stub in build.render_stubs(SOLUTIONS_DIR):
        assert (EXERCISES_DIR / stub.name).read_text(encoding="utf-8") == stub.text, stub.name


def test_the_release_ships_exercises_byte_for_byte():
    from seqlab.release import render_release

    files = render_release()
    shipped = {path.split("/", 1)[1]: text for path, text in files.items() if path.startswith("exercises/")}
    assert shipped == {p.name: p.read_text(encoding="utf-8") for p in sorted(EXERCISES_DIR.glob("*.py"))}


def test_notebook_answer_cells_are_the_same_stubs():
    for topic in load_topics(SOLUTIONS_DIR):
        stub_text = (EXERCISES_DIR / f"{topic.topic}.py").read_text(encoding="utf-8")
        assert {c.qualname for c in topic.functions} == set(contract.functions_of(topic.topic))
        for chunk in topic.answers:
            assert chunk.stub.strip() in stub_text, f"{topic.topic}.{chunk.name}"


def test_nbgrader_reports_a_broken_region_as_it_is(tmp_path):
    # The region's own error, not re-wrapped: it already names the file, the function and the line.
    path = tmp_path / "rnn.py"
    path.write_text((SOLUTIONS_DIR / "rnn.py").read_text(encoding="utf-8").replace("    ### END SOLUTION\n", "", 1))
    with pytest.raises(SolutionRegionError, match=r"rnn\.py:\w+:\d+: .* is never closed"):
        parse_topic(path, "rnn")
