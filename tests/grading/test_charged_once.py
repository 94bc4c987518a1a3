"""A bug is charged once: a forbidden operation inside a student's callee costs that callee.

When a caller's call to a declared callee is not one the reference made (the caller has a bug of
its own), the student's own callee runs (seqlab.student.callees). An operation that callee's own
rules forbid is then the callee's to answer for: its own grading and the static scan of its
source already void it. Charging it to the caller too would make the caller's grade depend on
whether it also had an unrelated bug (found by benchmarks/bench_nbgrader.py: a decoder block with
a mask bug lost all 6 points instead of 2.25 because its student's layer_norm used F.layer_norm).
An operation the callee's rules allow but the caller's forbid still voids the caller, so nothing
can be smuggled through a callee.
"""

from __future__ import annotations

import pytest

from seqlab.build import replace_function
from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from seqlab.grading.checks import Grade, Voided
from tests.mutants import all_variants, make_submission

DECODER = "transformer.decoder_block"


def _variant(function: str, words: str):
    return next(v for v in all_variants("MUTANTS") if v.function == function and words in v.description)


def _submission(target, *variants):
    make_submission(target, variants[0])
    for variant in variants[1:]:
        path = target / "exercises" / f"{variant.module}.py"
        path.write_text(replace_function(path.read_text(), variant.function.split(".", 1)[1], variant.source))
    return target


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "isolated"])
def test_forbidden_callee_does_not_void_its_buggy_caller(tmp_path, isolated):
    mask_bug = _variant(DECODER, "replaces self_mask")
    forbidden_norm = _variant("transformer.layer_norm", "F.layer_norm")
    alone = grade_submission(
        _submission(tmp_path / "a", mask_bug), grading_settings(isolated=isolated, seed=7, only="transformer")
    )
    both = grade_submission(
        _submission(tmp_path / "b", mask_bug, forbidden_norm),
        grading_settings(isolated=isolated, seed=7, only="transformer"),
    )
    decoder_alone, decoder_both = alone.by_function()[DECODER], both.by_function()[DECODER]
    assert 0 < decoder_alone[0] < decoder_alone[1], decoder_alone
    assert decoder_both == decoder_alone, "the decoder's grade must not depend on its callee's forbidden op"
    assert both.by_function()["transformer.layer_norm"][0] == 0
    assert not [t for t in both.tests if t.function == DECODER and "forbids" in t.output]


def _decoder_grade() -> Grade:
    config = load_config()
    return Grade(
        function=DECODER,
        student=None,
        reference=None,
        tolerances={},
        forbidden_match=config.rules(DECODER).forbidden_match,
        forbidden_in=lambda callee: config.rules(callee).forbidden_match,
    )


def test_an_op_the_callee_itself_forbids_is_the_callees():
    _decoder_grade()._void_if_forbidden({"torch.nn.functional.layer_norm@transformer.layer_norm": 1})
    # nested: inside the student's own scaled_dot_product_attention, called by its own multi_head_attention
    _decoder_grade()._void_if_forbidden(
        {
            "aten._scaled_dot_product_attention_math@attention.scaled_dot_product_attention@attention.multi_head_attention": 2
        }
    )


@pytest.mark.parametrize(
    "ops",
    [
        {"torch.nn.functional.layer_norm": 1},  # the caller's own code
        {"torch.nn.TransformerDecoderLayer.forward@transformer.layer_norm": 1},  # smuggled through a callee
    ],
    ids=["own-code", "smuggled-through-callee"],
)
def test_an_op_only_the_caller_forbids_voids_the_caller(ops):
    with pytest.raises(Voided, match="forbids") as failure:
        _decoder_grade()._void_if_forbidden(ops)
    if "@" in next(iter(ops)):
        assert "inside its call to transformer.layer_norm" in failure.value.message
