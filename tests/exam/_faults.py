"""Bad answers files for `seqlab exam grade-all`, beside an honest class (test_answers_faults.py and
its bank): generated YAML of every wrong shape, and a folder maker."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from seqlab.exam.examfile import exam_from_dict
from seqlab.exam.render import key_answers
from seqlab.exam.variants import make_instance

HONEST = ("s1", "s2")
# A small exam: grading it costs milliseconds, so hundreds of generated classes stay cheap.
EXAM = exam_from_dict(
    {
        "title": "faults",
        "seed": 11,
        "visibility": "visible",
        "parts": [
            {
                "title": "p",
                "questions": [
                    {"id": "opt.adam_steps", "points": 4, "partial": {"per_element": True}},
                    {"id": "attn.var_qk", "points": 2},
                    {"id": "concept.bottleneck", "points": 1},
                    {"id": "concept.birnn_online", "points": 1},
                ],
            }
        ],
    }
)
GENERATED = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


def key_text(student: str) -> str:
    return yaml.safe_dump(key_answers(make_instance(EXAM, student)))


def honest_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for student in HONEST:
        (folder / f"{student}.yaml").write_text(key_text(student))
    return folder


def billion_laughs(levels: int = 9) -> str:
    """Nested YAML aliases: ``levels`` levels of ten references each (10**levels leaves)."""
    lines = ["student: s9", "answers:", '  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# --- generated answers files ----------------------------------------------------------------------

_ids = st.sampled_from(["opt.adam_steps", "attn.var_qk", "concept.bottleneck", "concept.birnn_online", "x"])
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(),
    st.text(max_size=40),
    st.sampled_from(["1, 2", "-0.0127, 0.0198", "d", "B", "true", "sqrt(d)", "1e999", "nan", "(((1)))"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=12,
)
_answers = st.one_of(st.dictionaries(_ids, _values, max_size=5), _values)
_tags = st.sampled_from(
    [
        "!!binary aGVsbG8=",
        "!!timestamp 2001-12-14t21:59:43.10-05:00",
        "!!set {a, b}",
        "!!omap [a: 1]",
        "!!python/object/apply:os.system [id]",
        "!!float .nan",
        "!!int 0x_ff",
        "2001-12-14",
        "9" * 5000,
        "!<tag:yaml.org,2002:str> x",
        "!local x",
    ]
)


@st.composite
def bad_answers_bytes(draw) -> bytes:
    """The bytes of a malformed answers file: wrong shapes and types, anchors and aliases, tags,
    deep nesting, truncation, text that is not UTF-8, oversized files, binary junk."""
    shape = draw(
        st.sampled_from(
            ["shape", "tag", "alias", "deep", "truncated", "not-utf8", "junk", "big", "flow", "keys", "empty"]
        )
    )
    data = {"student": draw(st.one_of(st.just("s9"), _values)), "answers": draw(_answers)}
    text = yaml.safe_dump(data, allow_unicode=draw(st.booleans()))
    if shape == "shape":
        return text.encode()
    if shape == "tag":
        return f"student: s9\nanswers:\n  attn.var_qk: {draw(_tags)}\n".encode()
    if shape == "alias":
        return billion_laughs(draw(st.integers(min_value=1, max_value=9))).encode()
    if shape == "deep":
        depth = draw(st.integers(min_value=17, max_value=5000))
        opener = draw(st.sampled_from(["[", "{a: "]))
        closer = "]" if opener == "[" else "}"
        return f"student: s9\nanswers:\n  attn.var_qk: {opener * depth}1{closer * depth}\n".encode()
    if shape == "truncated":
        return text.encode()[: draw(st.integers(min_value=0, max_value=max(0, len(text) - 1)))]
    if shape == "not-utf8":
        at = draw(st.integers(min_value=0, max_value=len(text)))
        return (
            text.encode()[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x00"]))
            + text.encode()[at:]
        )
    if shape == "junk":
        return draw(st.binary(max_size=300))
    if shape == "big":
        return b"student: s9\nanswers:\n  attn.var_qk: '" + b"d" * (1024 * 1024) + b"'\n"
    if shape == "flow":
        return draw(st.text(alphabet="[]{}:,-&*!|>'\"#%@`\n\t ?ab1", max_size=200)).encode()
    if shape == "keys":
        return f"student: s9\nanswers: {{}}\n{draw(st.text(max_size=10))!r}: 1\n".encode()
    return b""


def _a_file_name(name: str) -> bool:
    r"""A name this file system can hold: a lone surrogate other than the escaped bytes (\udc80-
    \udcff) has no bytes to be written as, and no hand-in can carry one (found by the bank:
    '\ud800.yaml' failed the test's own write, not the grader)."""
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        return False
    return True


# File names of every kind: outputs of grade-all, case twins, odd characters, bytes that are not
# UTF-8 (written through os.fsencode's surrogate escape), hidden names.
bad_names = (
    st.one_of(
        st.sampled_from(
            [
                "gradebook.csv.yaml",
                "GRADEBOOK.CSV.yml",
                "lms.yaml",
                "class_report.html.json",
                "item_analysis.csv.yaml",
                ".hidden.yaml",
                "answers-.yaml",
                "-.yaml",
                "a b.yaml",
                "new\nline.yaml",
                "\udcff.yaml",
            ]
        ),
        st.text(alphabet=st.characters(blacklist_characters="/\x00"), min_size=1, max_size=20).map(
            lambda s: s + ".yaml"
        ),
    )
    .filter(lambda name: Path(name).stem.removeprefix("answers-").casefold() not in HONEST)
    .filter(_a_file_name)
)
