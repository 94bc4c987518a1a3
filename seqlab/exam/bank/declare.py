"""How the bank declares a question: one line per fact, stacked over the function that answers it.

The top line names the kind and registers the question (``model.register``) with everything the
lines under it declared: ``numeric(id, sample, tolerance, hint=)`` (a number or a list of
numbers, graded within ``tolerance``; ``hint`` says how to write it) or ``formula(id, sample,
symbols)`` (a formula in ``symbols(params)``, graded by equivalence). A question declares no
minutes: ``exam/timing.py`` measures each draw's work (words, operations, values written), and
an exam's papers must fit its duration by that estimate. ``attn.memory`` in
``exams/questions/attention.py`` shows the whole shape. The answer function's docstring is the
question's title (its first line, without the final period), as a command's docstring is its help.

The facts, each optional except ``cites`` and ``text``:

- ``cites(*tags)``        the notes' sections it examines (``sections.validate_tag`` checks each);
- ``exercises(*names)``   the student functions (``topic.function``) it practises;
- ``forms(*names)``       forms of unequal difficulty; the sampler then takes ``(rng, form)``;
- ``own_entries()``       no key entry may be 0 or a number the question prints (a draw where one
                          is, by chance, is drawn again): per-entry credit pays every entry;
- ``text(template)``      required: the question's text as a jinja2 template, a ``question``
                          block and a ``solution`` block (``markdown.render_question``); a part
                          that several questions share is a Python string beside them, joined in
                          (``BPTT_SETUP`` of the RNN topic's ``gradients.py``);
- ``valid_when(rule)``    the question's own validity rule on top of ``model.fair_draw``'s;
- ``skips_work(why, rule)`` the question's own degenerate draws (``lint_draws.degenerate``): a
                          draw where ``rule(params, entries)`` holds skips part of the work the
                          question asks for (``why`` says which) and is drawn again;
- ``work(count)``         ``count(variant) -> (operations, values written)``: the calculator
                          operations of its worked solution and the intermediate values it
                          carries, counted for the sizes it draws (``timing``: a paper's minutes;
                          without it, a lower bound from the rendered solution's operators);
- ``unit(name)``          the unit an answer may carry where the hint names none (``"nats"`` for a
                          loss with the natural log; ``marking.asked_unit``);
- ``graded_steps(steps)`` ``{section: mistake name}``: notes' sections the question examines as
                          steps of its work, each by a named mistake of its own
                          (``coverage.missing_focus`` counts them as examined);
- ``by_hand(solution)``   the worked solution in plain Python, ``solution(params, r)`` with every
                          intermediate passed through ``r`` (``three_figures``: a 3-figure
                          student simulated in microseconds, where a torch path costs milliseconds);
- ``equivalents(other)``  ``other(params)``: other correct forms of a formula (tests, the key);
- ``mistake(name, feedback, value)``: a named wrong answer, ``value(params)``; or
  ``mistake(name, feedback, switch=...)``: the answer function called with that keyword, for an
  answer written with the mistake as a switch. Computed only when a draw is checked or graded;
  ``when=rule``: only draws where ``rule(params)`` holds can show it. They keep their written order.

The topic is the course's bank module's (``exams/questions/<topic>.py``; a topic split into a
folder, ``exams/questions/rnn/``, is still one topic: ``bank.load_questions``).
A question is this one declaration, its text included, and its line in an exam file.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ...tolerance import Tolerance
from ..errors import QuestionError
from ..model import NUMERIC, SYMBOLIC, Mistake, Question, register

# The name the course's question modules are imported under (``bank.load_questions``):
# ``course_questions.<topic>``, so a traceback names the topic, and a question's topic is the
# name's second part.
MODULE_PREFIX = "course_questions"
# the prefixes banks were loaded under: the course's, and a test's own folder of questions
BANK_PREFIXES = {MODULE_PREFIX}
# the facts the stacked lines gathered, on the answer function until the top line registers them
_FACTS = "__exam_question_facts__"
# Every line of the stack hands the answer function on as it is, so its name keeps its type.
Answer = TypeVar("Answer", bound=Callable[..., Any])


def _fact(name: str, value: Any) -> Callable[[Answer], Answer]:
    def add(answer: Answer) -> Answer:
        facts = answer.__dict__.setdefault(_FACTS, {})
        if facts is None:
            raise QuestionError(f"{answer.__qualname__}: {name} is declared above the question's kind; put it under")
        if name == "mistakes":  # lines apply bottom-up: prepend to keep the written order
            facts["mistakes"] = [value, *facts.get("mistakes", [])]
        elif name in facts:
            raise QuestionError(f"{answer.__qualname__}: {name} declared twice")
        else:
            facts[name] = value
        return answer

    return add


def cites(*tags: str) -> Callable[[Answer], Answer]:
    return _fact("sections", tags)


def exercises(*names: str) -> Callable[[Answer], Answer]:
    return _fact("exercises", names)


def own_entries() -> Callable[[Answer], Answer]:
    return _fact("own_entries", True)


def text(template: str) -> Callable[[Answer], Answer]:
    return _fact("text", template.strip() + "\n")


def forms(*names: str) -> Callable[[Answer], Answer]:
    return _fact("forms", names)


def valid_when(rule: Callable[[dict], bool]) -> Callable[[Answer], Answer]:
    return _fact("valid", rule)


def skips_work(why: str, rule: Callable[[dict, Any], bool]) -> Callable[[Answer], Answer]:
    return _fact("skips_work", (why, rule))


def work(count: Callable[[Any], tuple[int, int]]) -> Callable[[Answer], Answer]:
    return _fact("work", count)


def unit(name: str) -> Callable[[Answer], Answer]:
    return _fact("unit", name)


def graded_steps(steps: dict[str, str]) -> Callable[[Answer], Answer]:
    return _fact("graded_steps", tuple(steps.items()))


def by_hand(solution: Callable[..., Any]) -> Callable[[Answer], Answer]:
    return _fact("by_hand", solution)


def equivalents(other: Callable[[dict], list[str]]) -> Callable[[Answer], Answer]:
    return _fact("equivalents", other)


def mistake(
    name: str,
    feedback: str,
    value: Callable[[dict], Any] | None = None,
    *,
    when: Callable[[dict], bool] | None = None,
    **switch: Any,
) -> Callable[[Answer], Answer]:
    if (value is None) == (not switch):
        raise QuestionError(f"mistake {name!r}: give its value function or the answer's switch, one of the two")
    return _fact("mistakes", (name, feedback, value, when, switch))


def _named_mistakes(declared: list[tuple], answer: Callable) -> Callable[[dict], dict[str, Mistake]]:
    values = [value or functools.partial(answer, **switch) for _, _, value, _, switch in declared]

    def mistakes(p: dict) -> dict[str, Mistake]:
        return {
            name: Mistake(value(p), feedback)
            for (name, feedback, _, when, _), value in zip(declared, values)
            if when is None or when(p)
        }

    return mistakes


def _title(answer: Callable) -> str:
    lines = (answer.__doc__ or "").strip().splitlines()
    if not lines:
        raise QuestionError(
            f"{answer.__qualname__}: the answer function's docstring is the question's title; write one"
        )
    return lines[0].strip().removesuffix(".")


def _topic(module: str) -> str:
    """The topic of the declaring module: ``course_questions.rnn.forward`` -> ``rnn`` (a bank's
    modules, ``load_questions``); any other module's last name (a test's own question)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] in BANK_PREFIXES else parts[-1]


def _register(id: str, kind: str, sample: Callable, **declared: Any) -> Callable[[Answer], Answer]:
    def wrap(answer: Answer) -> Answer:
        facts = dict(answer.__dict__.get(_FACTS) or {})
        if "text" not in facts:
            raise QuestionError(
                f"{id}: declare its text with @text(...) under the kind line (its question and solution)"
            )
        mistakes = facts.pop("mistakes", None)
        unnamed = {name for _, name in facts.get("graded_steps", ())} - {m[0] for m in mistakes or ()}
        if unnamed:
            raise QuestionError(f"{id}: graded_steps names mistakes it does not declare: {sorted(unnamed)}")
        register(
            Question(
                id=id,
                kind=kind,
                title=_title(answer),
                sections=facts.pop("sections", ()),
                sample=sample,
                answer=answer,
                template="",
                mistakes=_named_mistakes(mistakes, answer) if mistakes else None,
                topic=_topic(answer.__module__),
                **declared,
                **facts,
            )
        )
        setattr(answer, _FACTS, None)  # registered: a fact written above the kind line is an error
        return answer

    return wrap


def numeric(id: str, sample: Callable, tolerance: Tolerance, *, hint: str = "") -> Callable[[Answer], Answer]:
    """A question answered by a number or a list of numbers, graded within ``tolerance``."""
    return _register(id, NUMERIC, sample, tolerance=tolerance, answer_hint=hint)


def formula(id: str, sample: Callable, symbols: Callable) -> Callable[[Answer], Answer]:
    """A question answered by a formula in ``symbols(params)``, graded by equivalence."""
    return _register(id, SYMBOLIC, sample, symbols=symbols)
