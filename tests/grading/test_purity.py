"""An argument changed in place is found exactly and named with what to write instead, on small
mutants of an SGD step and of a moment update (a tensor argument, a tensor inside a dict)."""

from __future__ import annotations

import torch

from seqlab.grading.compare import first_change, purity_failure


def _changed(step, *args):
    before = [{k: v.clone() for k, v in a.items()} if isinstance(a, dict) else a.clone() for a in args]
    step(*args)
    return next(filter(None, (first_change(b, a, n) for b, a, n in zip(before, args, ["w", "state"]))), None)


def test_a_tensor_changed_in_place_is_named_with_the_pure_form():
    def sgd(w, lr=0.1):
        return w.sub_(lr * torch.ones_like(w))

    where = _changed(sgd, torch.zeros(3))
    message, hint = purity_failure("optimizers.sgd", where)
    assert where == "w" and "modified its argument w in place" in message
    assert "w is changed in place" in hint and "w = w - lr * dw" in hint


def test_a_tensor_in_a_dict_changed_in_place_is_named_by_its_key():
    def moments(w, state):
        state["m"].mul_(0.9)
        return w + 1

    where = _changed(moments, torch.zeros(2), {"m": torch.ones(2)})
    assert where == "state['m']"
    assert "state['m'] is changed in place" in purity_failure("optimizers.adam", where)[1]


def test_a_pure_step_changes_nothing():
    assert _changed(lambda w: w - 0.1, torch.zeros(3)) is None
