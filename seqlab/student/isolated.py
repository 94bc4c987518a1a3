"""Student code in a separate, limited child process (the default runner).

The parent keeps the reference solutions, the inputs and every comparison; the child gets
copies of the arguments and returns plain data (seqlab.student.codec). A hang, a crash, a huge
allocation or a flood of output costs the current call: the parent records why, kills the
child's whole process group, and starts a fresh child for the next call.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

from . import codec
from .base import Outcome, StudentCode, StudentError
from .spawn import take

TIMEOUT_STRIKES = 2   # after this many timeouts a function is not called again in this run


class _ChildGone(Exception):
    pass


class IsolatedStudent(StudentCode):
    def __init__(self, submission: Path, reference, *, limits, device: str = "cpu", protected_dirs=(), skip=None,
                 sandbox=None):
        self.submission = Path(submission).resolve()
        self.reference = reference
        self.limits = limits
        self.device = device
        self.protected = [str(Path(p).resolve()) for p in protected_dirs]
        self.skip: dict[str, str] = dict(skip or {})
        self.sandbox = sandbox
        self._load_errors: dict[str, str] | None = None
        self.timeouts: dict[str, int] = {}
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self._spawn()

    # -- process management ------------------------------------------------------------------
    def _spawn(self) -> None:
        child = take(self.submission / "exercises", self.sandbox)
        self.proc, self.fd_in, self.fd_out = child.proc, child.fd_in, child.fd_out
        self.child_scratch = child.scratch
        self.loaded = False
        self._send({"op": "load", "exercises": str(self.submission / "exercises"), "skip": self.skip,
                    "protected": self.protected, "scratch": str(child.scratch), "device": self.device,
                    "limits": {"memory_mb": self.limits.memory_mb, "cpu_time_s": self.limits.cpu_time_s,
                               "output_kb": self.limits.output_kb}})

    def _kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for fd in (self.fd_in, self.fd_out):
            try:
                os.close(fd)
            except OSError:
                pass
        self.proc = None
        shutil.rmtree(self.child_scratch, ignore_errors=True)
        self.loaded = False   # the next call starts a fresh child and loads the submission again

    def _death_reason(self) -> str:
        code = self.proc.wait(timeout=10) if self.proc else None
        if code is not None and self.sandbox is not None and self.sandbox.enforced:
            from .sandbox import exit_status

            code = exit_status(code)
        if code is None:
            return "the student process stopped answering"
        if code < 0:
            sig = signal.Signals(-code)
            if sig == signal.SIGXCPU:
                return f"used more than {self.limits.cpu_time_s:g} s of CPU time and was stopped"
            if sig == signal.SIGKILL:
                return "was killed (out of memory?)"
            return f"crashed ({sig.name})"
        return f"exited the process (exit code {code})"

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self._send({"op": "exit"})
            except _ChildGone:
                pass
        self._kill()

    # -- framing -----------------------------------------------------------------------------
    def _send(self, message) -> None:
        data = codec.encode(message)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd_out, view):]
        except (BrokenPipeError, OSError):
            raise _ChildGone() from None

    def _receive(self, deadline: float):
        def read_exact(n: int) -> bytes:
            chunks, left = [], n
            while left:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                ready, _, _ = select.select([self.fd_in], [], [], remaining)
                if not ready:
                    raise TimeoutError
                chunk = os.read(self.fd_in, min(left, 1 << 20))
                if not chunk:
                    raise _ChildGone()
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)

        return codec.decode(*codec.read_frame(read_exact), device_map=self._device_map)

    def _device_map(self, name: str):
        import torch

        device = torch.device(name)
        if device.type == "cuda" and not torch.cuda.is_available():
            return torch.device("cpu")
        return device

    # -- loading -----------------------------------------------------------------------------
    def _ensure_loaded(self) -> None:
        while not self.loaded:
            if self.proc is None:
                self.restarts += 1
                self._spawn()
            current = None
            deadline = time.monotonic() + self.limits.import_timeout_s + 30   # + interpreter and torch start
            try:
                while True:
                    message = self._receive(deadline)
                    if message["op"] == "loading":
                        current = message["module"]
                        deadline = time.monotonic() + self.limits.import_timeout_s
                    elif message["op"] == "loaded":
                        self._load_errors = dict(message["errors"])
                        self.loaded = True
                        break
            except TimeoutError:
                self._kill()
                if current is None:
                    raise StudentError("protocol", "the student process did not start in time") from None
                self.skip[current] = (f"exercises/{current}.py: importing it took longer than "
                                      f"{self.limits.import_timeout_s:g} s (a loop at module level?)")
            except (_ChildGone, codec.CodecError):
                reason = self._death_reason()
                self._kill()
                if current is None:
                    raise StudentError("crash", f"the student process {reason} before loading anything") from None
                self.skip[current] = f"exercises/{current}.py: importing it {reason}"

    @property
    def load_errors(self) -> dict[str, str]:
        self._ensure_loaded()
        return dict(self._load_errors or {})

    # -- calls -------------------------------------------------------------------------------
    def run(self, qualname, args=(), kwargs=None, *, substitute=True, kernels=False, timeout=None) -> Outcome:
        if self.timeouts.get(qualname, 0) >= TIMEOUT_STRIKES:
            raise StudentError("timeout", f"timed out {TIMEOUT_STRIKES} times already in this run; not called again")
        self._ensure_loaded()
        timeout = timeout or self.limits.call_timeout_s
        try:
            self._send({"op": "call", "name": qualname, "args": list(args), "kwargs": dict(kwargs or {}),
                        "substitute": substitute, "kernels": kernels})
            deadline = time.monotonic() + timeout
            while True:
                message = self._receive(deadline)
                if message["op"] == "callback":
                    self._answer_callback(message)
                    continue
                break
        except TimeoutError:
            self._kill()
            self.timeouts[qualname] = self.timeouts.get(qualname, 0) + 1
            raise StudentError("timeout", f"did not return within {timeout:g} s (an infinite loop?)") from None
        except _ChildGone:
            reason = self._death_reason()
            self._kill()
            raise StudentError("crash", f"the call {reason}") from None
        except codec.CodecError as exc:
            self._kill()
            raise StudentError("protocol", f"sent back malformed data ({exc})") from None
        if message["op"] == "error":
            raise StudentError(message["kind"], message["message"], message.get("ops"), message.get("output", ""))
        return Outcome(message["value"], tuple(message["args"]), dict(message["kwargs"]), list(message["aliased"]),
                       dict(message["ops"]), int(message["op_count"]), str(message["output"]))

    def _answer_callback(self, message) -> None:
        name = message.get("name")
        try:
            value = self.reference(name)(*message["args"], **message["kwargs"])
            reply = {"op": "callback_result", "value": value}
        except Exception as exc:  # the student passed bad arguments to a correct callee
            reply = {"op": "callback_error", "message": f"{name}: {type(exc).__name__}: {exc}"}
        self._send(reply)
