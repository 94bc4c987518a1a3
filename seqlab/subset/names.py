"""The rules on names, shared by the static check and the runtime guards: which attribute names
are never reachable, which modules and module attributes are outside the subset."""

from __future__ import annotations

from . import rules

_SETATTR = frozenset({"__setattr__", "__delattr__"})  # open on ``object`` and one's own objects (guards)


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def is_guard_name(name: str) -> bool:
    """``_getattr_``, ``_write_``, ...: the names the transformed code calls its guards by."""
    return len(name) > 2 and name.startswith("_") and name.endswith("_") and not is_dunder(name)


def attribute_problem(name: str, *, store: bool = False) -> tuple[str, str] | None:
    """Why the attribute ``name`` may never be reached, whatever the object, or None."""
    if name in rules.INTERPRETER_INTERNALS:
        return (
            f"the interpreter's internal attribute {name!r}",
            "frames, code and tracebacks are not part of the exercise",
        )
    if is_dunder(name):
        if store and name not in ("__doc__", "__name__", "__qualname__"):
            return f"assignment to {name!r}", "set ordinary attributes of your own objects"
        readable = rules.HARMLESS_DUNDERS | rules.SPECIAL_METHODS | rules.OWN_ONLY_DUNDERS | _SETATTR
        if name not in readable:
            return f"the dunder attribute {name!r}", "use the public API: type(x), isinstance, x.__name__"
    if is_guard_name(name):
        return f"the name {name!r} is reserved for the grader's guards", "choose another name"
    return None


def attribute_refusal(owner: str, name: str) -> str | None:
    """Why ``from owner import name`` (or ``owner.name`` on the module) is refused, or None."""
    if name in rules.HARMLESS_DUNDERS:
        return None
    if name.startswith("_"):
        return f"the private name {owner}.{name}"
    if f"{owner}.{name}" in rules.DENIED_MODULES:
        return f"{owner}.{name}: {rules.DENIED_MODULES[f'{owner}.{name}']}"
    reason = rules.DENIED_ATTRIBUTES.get(owner, {}).get(name)
    if reason:
        return f"{owner}.{name}: {reason}"
    allowed = rules.ALLOWED_ONLY.get("posixpath" if owner == "os.path" else owner)
    if allowed is not None and name not in allowed:
        return f"{owner}.{name} (of {owner}, only {', '.join(sorted(allowed))} are in the subset)"
    return None


def module_refusal(dotted: str, siblings: frozenset[str] = frozenset()) -> str | None:
    """Why the module ``dotted`` may not be imported or held, or None."""
    parts = dotted.split(".")
    if parts[0] == rules.PACKAGE or (parts[0] in siblings and parts[0] not in rules.ALLOWED_MODULES):
        return None
    if parts[0] not in rules.ALLOWED_MODULES:
        return f"the module {parts[0]!r} is not in the subset"
    for depth in range(1, len(parts)):
        refused = attribute_refusal(".".join(parts[:depth]), parts[depth])
        if refused:
            return refused
    return None
