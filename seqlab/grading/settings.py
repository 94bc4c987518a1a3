"""How a submission is graded, decided once: the command line (or a test, or the nbgrader server)
turns its options into one frozen :class:`GradingSettings` with :func:`grading_settings`, and
that object travels whole to the grading, to grade-all's workers and to the student's runner.
Nothing downstream parses a string again: the device is checked, the config read and the
sandbox probed here, so a problem is reported once, with the option that caused it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..config import GradingConfig, load_config
from ..errors import SeqlabError
from ..labs import labs_by_default
from ..paths import GRADERS_DIR
from ..student.sandbox import Sandbox

# The nodes a CUDA (NVIDIA) or ROCm (AMD, also torch.cuda) driver makes; with none of them torch
# sees no GPU.
GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd")


class GradingError(SeqlabError, RuntimeError):
    """The grader itself could not run (not the submission's fault), or an option of the
    grading names something that is not there (a device, a sandbox)."""


@dataclass(frozen=True)
class GradingSettings:
    """Every choice a grading depends on, each already checked.

    ``sandbox`` None means in-process (trusted code only); otherwise the sandbox the student's
    child runs in, with the reason it is not enforced where it is not. ``seed`` None: a fresh
    seed for each grading, reported in its result. ``static_policy=False`` is for the attack
    bank only: it lets hostile code run so that the layers beneath the policy (sandbox, audit
    hook) are shown to stop it on their own."""

    config: GradingConfig
    sandbox: Sandbox | None
    device: str = "cpu"
    seed: int | None = None
    only: str | None = None
    protected_dirs: tuple[str, ...] = ()
    graders_dir: Path = GRADERS_DIR
    static_policy: bool = True
    # False: the labs' functions are left out of the grading and of its points (a quick check of
    # the exercises: a lab trains for seconds); the project's tests set SEQLAB_LABS=0, so that
    # only the lab tests pay for training.
    labs: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.config, GradingConfig):
            raise TypeError(f"config must be a GradingConfig, not {type(self.config).__name__}")
        if self.sandbox is not None and not isinstance(self.sandbox, Sandbox):
            raise TypeError(f"sandbox must be a resolved Sandbox or None, not {self.sandbox!r}")
        if self.device != "cpu" and not self.device.startswith("cuda"):
            raise TypeError(f"device must be a resolved device (cpu, cuda), not {self.device!r}")
        if (
            self.device.startswith("cuda")
            and self.sandbox is not None
            and self.sandbox.enforced
            and self.sandbox.gpu is None
        ):
            # a child in this sandbox would see no GPU: grading_settings passes it in (for_device)
            raise TypeError("a CUDA grading in the bwrap sandbox needs the GPU passed in: sandbox.for_device(device)")

    @property
    def isolated(self) -> bool:
        return self.sandbox is not None

    @property
    def functions(self) -> tuple[str, ...]:
        """The contract functions a full grading under these settings covers."""
        return graded_functions(self.labs)

    @property
    def max_score(self) -> float:
        """The points a full grading under these settings can give."""
        return graded_max_score(self.config, self.labs)


def graded_functions(labs: bool) -> tuple[str, ...]:
    """The contract functions a full grading covers: all of them, or all but the labs."""
    from .. import contract

    return tuple(contract.FUNCTIONS if labs else contract.EXERCISES)


def graded_max_score(config: GradingConfig, labs: bool | None = None) -> float:
    """The points a full grading can give (``labs`` None: as SEQLAB_LABS says)."""
    return sum(config.rules(f).points for f in graded_functions(labs_by_default() if labs is None else labs))


def grading_settings(
    *,
    config: GradingConfig | str | Path | None = None,
    isolated: bool = True,
    sandbox: Sandbox | str | None = "auto",
    device: str = "cpu",
    seed: int | None = None,
    only: str | None = None,
    protected_dirs: Iterable[str | Path | None] = (),
    graders_dir: Path = GRADERS_DIR,
    static_policy: bool = True,
    labs: bool | None = None,
) -> GradingSettings:
    """The settings for these options, each checked here and only here: ``config`` a path (None:
    the course's grading_config.yaml) or a config already read; ``sandbox`` a ``--sandbox`` mode
    (probed now) or a Sandbox already resolved, unused in-process; ``device`` auto, cpu or cuda;
    ``labs`` None: graded unless the environment says SEQLAB_LABS=0."""
    if not isinstance(config, GradingConfig):
        config = load_config(config)
    box = resolve_sandbox(sandbox) if isolated else None
    device = resolve_device(device, box)
    return GradingSettings(
        config=config,
        # on CUDA the sandbox passes the GPU in (or says why it cannot); on the CPU it is unchanged
        sandbox=box.for_device(device) if box is not None else None,
        device=device,
        seed=None if seed is None else int(seed),
        only=only,
        protected_dirs=tuple(str(p) for p in protected_dirs if p),
        graders_dir=Path(graders_dir),
        static_policy=static_policy,
        labs=labs_by_default() if labs is None else bool(labs),
    )


def resolve_sandbox(sandbox: Sandbox | str | None) -> Sandbox:
    from ..student.sandbox import resolve

    if isinstance(sandbox, Sandbox):
        return sandbox
    return resolve(sandbox or "auto")  # its SandboxUnavailable is a SeqlabError naming the mode


def resolve_device(device: str, sandbox: Sandbox | None = None) -> str:
    """The device for ``--device DEVICE`` where the student's child runs in ``sandbox``."""
    return choose_device(device, sandbox)[0]


def choose_device(device: str, sandbox: Sandbox | None = None) -> tuple[str, str]:
    """The device for ``--device DEVICE``, and one line saying why ``auto`` took the CPU on a
    machine with a GPU driver ("" otherwise). ``cuda`` that torch cannot see is an error."""
    if device == "cpu":
        return device, ""  # without importing torch: grade-all's parent never needs it
    if device != "auto" and not device.startswith("cuda"):
        raise GradingError(f"unknown device {device!r} (use auto, cpu or cuda)")
    if device == "auto" and not any(os.path.exists(node) for node in GPU_DEVICE_NODES):
        # No GPU driver's device node, so no device torch could see: "cpu" without importing
        # torch here, which would come before the sandboxed child's start instead of beside it.
        return "cpu", ""
    import torch

    if device == "auto":
        return auto_device(torch.cuda.is_available(), sandbox)
    if not torch.cuda.is_available():
        raise GradingError("--device cuda was asked for, but torch sees no CUDA device here")
    return device, ""


def auto_device(torch_sees_cuda: bool, sandbox: Sandbox | None, root: str = "/") -> tuple[str, str]:
    """``--device auto`` on a machine with a GPU driver: cuda only where torch sees a CUDA device
    and the student's child can reach it (no kernel sandbox, or one that can pass in the NVIDIA
    driver's nodes found under ``root``); otherwise cpu, with the one line that says why."""
    if not torch_sees_cuda:
        return "cpu", "--device auto: cpu (a GPU driver is here, but torch sees no CUDA device)"
    if sandbox is not None and sandbox.enforced:
        from ..student.gpu import find

        why_not = find(root).why_not
        if why_not:
            return "cpu", f"--device auto: cpu (torch sees CUDA, but the sandbox cannot reach it: {why_not})"
    return "cuda", ""
