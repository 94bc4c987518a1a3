"""The student's process: loads the submission and runs graded calls, nothing else.

Started by ``IsolatedStudent`` with ``python -I`` from an empty scratch directory, a minimal
environment (no CI tokens) and two pipes. Before any student code is imported it lowers its
own resource limits and installs an audit hook (see guards.install_audit_hook). It holds no
reference solution and no recorded answer: a call arrives with the names of the declared callees
the reference called on the test's own inputs, and a stand-in asks the parent for one callee's
recorded result when the student's code makes that call (``ask``, seqlab.student.callees). Every
frame it sends carries the request's id and its own sequence number (codec).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the child imports nothing it does not need before torch
    import types
    from collections.abc import Callable
    from typing import Any


def _read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def prepare() -> None:
    """Everything the child does before it knows its submission: import torch and our own code,
    leave the course checkout's sys.path, warm the codec. A fork server (seqlab.student.forkserver) does this
    once and forks a child per submission from it; a child started alone does it first."""
    import torch

    # Imported now: after the fork the child must not need the course checkout's sys.path.
    import seqlab.student.guards
    import seqlab.student.invoke
    import seqlab.student.loader
    import seqlab.subset.modules  # noqa: F401  (RestrictedPython too: imported before student code)
    from seqlab.student import codec
    from seqlab.student.policy import is_course_checkout

    # Our own code is imported; the course checkout that held it leaves sys.path before student
    # code runs (site-packages stays: the codec imports safetensors lazily, students import numpy).
    sys.path[:] = [p for p in sys.path if p and not is_course_checkout(p)]
    torch.set_num_threads(int(os.environ.get("SEQLAB_CHILD_THREADS", "1")))

    # Warm the codec up on every kind of value it sends: whatever it imports lazily (safetensors,
    # numpy's helpers) is imported now, before student code runs. Code that breaks the import
    # machinery later (emptied closures, popped sys.modules) then cannot break the answers of
    # the functions graded after it.
    warm = {
        "t": [torch.zeros(2, dtype=d) for d in (torch.float32, torch.float64, torch.int64, torch.bool)],
        "n": [1, 2.5, float("nan"), True, None, "x"],
    }
    codec.decode(codec.encode(warm, request=0, seq=0)[8:])  # [8:]: past the frame's length prefix


# The module's own namespace, read past any __getattribute__ or __dict__ a module subclass defines.
_NAMESPACE = vars(type(sys))["__dict__"].__get__


def _lookup(
    modules: dict[str, types.ModuleType],
    errors: dict[str, str],
    qualname: str,
    resolve: Callable[[dict[str, types.ModuleType], dict[str, str], str], Callable[..., Any]],
) -> Callable[..., Any]:
    """The student's callable for ``qualname``, found in its module's namespace: a lookup runs no
    student code, so a name that is not there (the grader's timing ping, which must cost the same
    whatever the submission) never reaches a module-level ``__getattr__``."""
    module, function = qualname.split(".", 1)
    if module in modules and function not in _NAMESPACE(modules[module]):
        raise LookupError(f"exercises/{module}.py has no function {function}()")
    return resolve(modules, errors, qualname)


def main() -> None:
    """A child started on its own (``python -I -c ... FD_IN FD_OUT``, its two pipes' numbers)."""
    fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
    prepare()
    serve(fd_in, fd_out)


def serve(fd_in: int, fd_out: int) -> None:
    """Load the submission the parent names and answer its calls, until told to exit."""
    import resource

    from seqlab import contract
    from seqlab.student import codec
    from seqlab.student.callees import Answers
    from seqlab.student.guards import install_audit_hook
    from seqlab.student.invoke import CallFailed, CappedText, invoke
    from seqlab.student.loader import contract_objects, load_submission, resolve
    from seqlab.subset.modules import Modules

    current = {"id": 0, "seq": 0}

    def send(message: Any) -> None:
        _write_all(fd_out, codec.encode(message, request=current["id"], seq=current["seq"]))
        current["seq"] += 1

    def receive() -> Any:
        request_id, _, message = codec.decode(codec.read_frame(lambda n: _read_exact(fd_in, n)))
        current["id"], current["seq"] = request_id, 0
        return message

    def ask(callee: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """One stand-in's question to the parent, inside a call: the recorded result, if any."""
        try:
            send({"op": "callee", "callee": callee, "arguments": arguments})
        except codec.CodecError:  # arguments that cannot travel (a sparse tensor, ...) match nothing
            return False, None
        request_id, _, answer = codec.decode(codec.read_frame(lambda n: _read_exact(fd_in, n)))
        if request_id != current["id"] or not isinstance(answer, dict) or answer.get("op") != "answer":
            os._exit(3)  # the parent never sends anything else here: the channel is broken
        return bool(answer["found"]), answer["result"]

    request = receive()
    assert request["op"] == "load"
    contract.install(request["contract"])
    limits = request["limits"]
    memory = int(limits["memory_mb"]) << 20
    if memory and request["device"] == "cpu":  # CUDA needs a huge virtual address space
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = int(limits["cpu_time_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    install_audit_hook(request["protected"], request["scratch"])

    import_output = CappedText(int(limits["output_kb"]) * 1024)
    sys.stdout = sys.stderr = import_output
    modules, errors = load_submission(
        request["exercises"],
        skip=request["skip"],
        on_module=lambda m: send({"op": "loading", "module": m}),
        texts=Modules.from_message(request["modules"]),
    )
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    functions = contract_objects(modules, errors)
    send({"op": "loaded", "errors": errors})

    tolerances = {name: (float(rtol), float(atol)) for name, (rtol, atol) in request["tolerances"].items()}

    output_limit = int(limits["output_kb"]) * 1024
    while True:
        try:
            request = receive()
        except EOFError:
            os._exit(0)
        if request["op"] == "exit":
            os._exit(0)
        name = request["name"]
        try:
            fn = _lookup(modules, errors, name, resolve)
        except LookupError as exc:
            send({"op": "error", "kind": "missing", "message": str(exc), "ops": {}, "output": ""})
            continue
        try:
            report = invoke(
                fn,
                tuple(request["args"]),
                dict(request["kwargs"]),
                graded=name,
                modules=modules,
                functions=functions,
                recording=Answers(list(request["callees"]), ask),
                tolerances=tolerances,
                kernels=request["kernels"],
                output_limit=output_limit,
                backward=request.get("backward"),
            )
        except CallFailed as exc:
            send(
                {
                    "op": "error",
                    "kind": exc.kind,
                    "message": exc.message,
                    "ops": exc.report.get("ops", {}),
                    "output": exc.report.get("output", ""),
                }
            )
            continue
        try:
            send(
                {
                    "op": "result",
                    "value": report["value"],
                    "args": list(report["args"]),
                    "kwargs": report["kwargs"],
                    "aliased": report["aliased"],
                    "updates": report["updates"],
                    "ops": report["ops"],
                    "op_count": report["op_count"],
                    "output": report["output"],
                    **(
                        {"grads": report["grads"], "backward_error": report["backward_error"]}
                        if "grads" in report
                        else {}
                    ),
                }
            )
        except Exception as exc:  # a value we cannot send: a costume of a tensor, a generator, ...
            send(
                {
                    "op": "error",
                    "kind": "exception",
                    "message": f"returned something that is not plain data: {exc}",
                    "ops": report["ops"],
                    "output": report["output"],
                }
            )
