"""How the bank declares a question: one line per fact, stacked over the function that answers it.

    @numeric("attn.memory", "Memory of the attention matrix", _sample_memory, FOUR_DIGITS)
    @cites("W8 §14", "L5 §17", "L7-8 (Lecture 8) §五", "W8 §18", "L5 §14")
    @exercises("attention.multi_head_attention")
    @hint("one number, in MiB (2^20 bytes)")
    @mistake("one_head", "every head has its own N x M weights", lambda p: _memory(p, heads=False))
    def memory(p):
        return _memory(p)

The top line names the kind and registers the question (``model.register``) with everything
the lines under it declared: ``numeric`` (id, title, sampler, tolerance) or ``formula`` (id,
title, sampler, symbols). The facts, each optional except ``cites``:

- ``cites(*tags)``        the notes' sections it examines (``sections.validate_tag`` checks each);
- ``exercises(*names)``   the student functions (``topic.function``) it practises;
- ``forms(*names)``       forms of unequal difficulty; the sampler then takes ``(rng, form)``;
- ``valid_when(rule)``    the question's own validity rule on top of ``model.fair_draw``'s;
- ``hint(text)``          how to write a numeric answer (shown under the question);
- ``equivalents(other)``  ``other(params)``: other correct forms of a formula (tests, the key);
- ``mistake(name, feedback, value, when=None)``: a named wrong answer, ``value(params)``
  computed only when a draw is checked or graded; ``when(params)`` false: not a mistake this
  draw can show. Mistakes keep the order they are written in.

The topic is the bank module's (a topic split into a package, ``bank/rnn/``, is still one topic);
the text template is ``templates/exam/questions/<id>.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tolerance import Tolerance
from ..model import NUMERIC, SYMBOLIC, Mistake, Question, register

# the facts the stacked lines gathered, on the answer function until the top line registers them
_FACTS = "__exam_question_facts__"


def _fact(name: str, value: Any) -> Callable:
    def add(answer: Callable) -> Callable:
        facts = answer.__dict__.setdefault(_FACTS, {})
        if facts is None:
            raise ValueError(f"{answer.__qualname__}: {name} is declared above the question's kind; put it under")
        if name == "mistakes":  # lines apply bottom-up: prepend to keep the written order
            facts["mistakes"] = [value, *facts.get("mistakes", [])]
        elif name in facts:
            raise ValueError(f"{answer.__qualname__}: {name} declared twice")
        else:
            facts[name] = value
        return answer

    return add


def cites(*tags: str) -> Callable:
    return _fact("sections", tags)


def exercises(*names: str) -> Callable:
    return _fact("exercises", names)


def forms(*names: str) -> Callable:
    return _fact("forms", names)


def valid_when(rule: Callable[[dict], bool]) -> Callable:
    return _fact("valid", rule)


def hint(text: str) -> Callable:
    return _fact("answer_hint", text)


def equivalents(other: Callable[[dict], list[str]]) -> Callable:
    return _fact("equivalents", other)


def mistake(name: str, feedback: str, value: Callable[[dict], Any], when: Callable[[dict], bool] | None = None):
    return _fact("mistakes", (name, feedback, value, when))


def _named_mistakes(declared: list[tuple]) -> Callable[[dict], dict[str, Mistake]]:
    def mistakes(p: dict) -> dict[str, Mistake]:
        return {
            name: Mistake(value(p), feedback) for name, feedback, value, when in declared if when is None or when(p)
        }

    return mistakes


def _topic(module: str) -> str:
    return module.split(".bank.", 1)[1].split(".")[0] if ".bank." in module else module.rsplit(".", 1)[-1]


def _register(id: str, kind: str, title: str, sample: Callable, **declared) -> Callable:
    def wrap(answer: Callable) -> Callable:
        facts = dict(answer.__dict__.get(_FACTS) or {})
        mistakes = facts.pop("mistakes", None)
        register(
            Question(
                id=id,
                kind=kind,
                title=title,
                sections=facts.pop("sections", ()),
                sample=sample,
                answer=answer,
                template=f"questions/{id}.md.j2",
                mistakes=_named_mistakes(mistakes) if mistakes else None,
                topic=_topic(answer.__module__),
                **declared,
                **facts,
            )
        )
        setattr(answer, _FACTS, None)  # registered: a fact written above the kind line is an error
        return answer

    return wrap


def numeric(id: str, title: str, sample: Callable, tolerance: Tolerance) -> Callable:
    """A question answered by a number or a list of numbers, graded within ``tolerance``."""
    return _register(id, NUMERIC, title, sample, tolerance=tolerance)


def formula(id: str, title: str, sample: Callable, symbols: Callable) -> Callable:
    """A question answered by a formula in ``symbols(params)``, graded by equivalence."""
    return _register(id, SYMBOLIC, title, sample, symbols=symbols)
