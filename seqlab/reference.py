"""The reference solutions, loaded for the trusted side only (graders, exams, notebooks).

They are imported from solutions/ under a private package name, so nothing a submission
imports as ``exercises`` or ``solutions`` can reach them through ``sys.modules``.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from functools import lru_cache
from pathlib import Path

from . import contract
from .contract import MODULES, SIGNATURES
from .paths import SOLUTIONS_DIR

PACKAGE = "_seqlab_reference"


class Reference:
    def __init__(self, solutions_dir: Path = SOLUTIONS_DIR):
        self.solutions_dir = Path(solutions_dir)
        package = types.ModuleType(PACKAGE)
        package.__path__ = [str(self.solutions_dir)]
        sys.modules[PACKAGE] = package
        self.modules: dict[str, types.ModuleType] = {}
        for module in MODULES:
            name = f"{PACKAGE}.{module}"
            spec = importlib.util.spec_from_file_location(name, self.solutions_dir / f"{module}.py")
            assert spec is not None and spec.loader is not None  # a .py path always has a source loader
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            self.modules[module] = mod

    def __call__(self, qualname: str):
        if qualname not in SIGNATURES:
            raise KeyError(f"{qualname!r} is not a contract function")
        module, function = contract.split(qualname)
        return getattr(self.modules[module], function)

    def __getattr__(self, module: str) -> types.ModuleType:
        try:
            return self.__dict__["modules"][module]
        except KeyError:
            raise AttributeError(module) from None


@lru_cache(maxsize=1)
def load_reference() -> Reference:
    return Reference()
