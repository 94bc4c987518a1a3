"""Student code in a separate, limited child process (the default runner).

The parent keeps the reference solutions, the inputs and every comparison; the child gets the
contract, copies of the arguments (and the reference's recorded calls to the declared callees,
seqlab.student.callees) and returns plain data (seqlab.student.codec). A hang, a crash, a huge
allocation or a flood of output costs the current call: the parent records why, kills the
child's whole process group, and starts a fresh child for the next call.

The channel is strict. Every request carries a fresh random id; every frame the child sends
must carry that id and the next sequence number, be an op the request allows, and have the
fields that op needs. Anything else (a stray or forged frame, a frame for another request, an
undecodable or oversized frame, data arriving between calls) is an anomaly: the child is
killed, the current call (if any) is lost with a "protocol" error, the next starts afresh."""

from __future__ import annotations

import os
import secrets
import select
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import contract
from ..results import clean_text
from ..subset.modules import read_modules
from . import codec
from .answers import Anomaly, check_answer
from .base import Args, Backward, Kwargs, Outcome, Seconds, StudentCode, StudentError
from .callees import Matcher
from .children import retire_server_of, take
from .cputime import cpu_seconds, host_pid
from .spawn import Child

if TYPE_CHECKING:
    import torch

    from ..config import Limits
    from ..subset.modules import Modules
    from .sandbox import Sandbox

TIMEOUT_STRIKES = 2  # after this many timeouts a function is not called again in this run


class _ChildGone(Exception):
    pass


class IsolatedStudent(StudentCode):
    def __init__(
        self,
        submission: Path,
        reference: Any,
        *,
        limits: Limits,
        tolerances: dict[str, tuple[float, float]],
        device: str = "cpu",
        protected_dirs: tuple[str | Path, ...] = (),
        skip: dict[str, str] | None = None,
        sandbox: Sandbox | None = None,
        texts: Modules | None = None,
    ) -> None:
        self.submission = Path(submission).resolve()
        # what the parent read and checked, sent to the child, which never reads a module itself
        self.texts = texts if texts is not None else read_modules(self.submission / "exercises")
        self.reference = reference
        self.tolerances = tolerances
        self.limits = limits
        self.device = device
        self.protected = [str(Path(p).resolve()) for p in protected_dirs]
        self.skip: dict[str, str] = dict(skip or {})
        self.sandbox = sandbox
        self._load_errors: dict[str, str] | None = None
        self._retried = False
        self._cpu_pid: tuple[Child, int | None] | None = None
        self.timeouts: dict[str, int] = {}
        self.child: Child | None = None
        self.request_id, self.expected_seq, self.request_op = 0, 0, "load"
        self.reply_seq = 0  # the parent's frames within one request: its answers to the stand-ins
        self._spawn()

    # -- process management ------------------------------------------------------------------
    def _spawn(self) -> None:
        child = take(self.submission / "exercises", self.sandbox)
        self.child, self.fd_in, self.fd_out = child, child.fd_in, child.fd_out
        self.loaded = False
        try:
            self._request(
                {
                    "op": "load",
                    "contract": contract.table(),
                    "exercises": child.exercises,
                    "skip": self.skip,
                    "modules": self.texts.as_message(),
                    "protected": self.protected,
                    "scratch": str(child.scratch),
                    "device": self.device,
                    "tolerances": self.tolerances,
                    "limits": {k: getattr(self.limits, k) for k in ("memory_mb", "cpu_time_s", "output_kb")},
                }
            )
        except _ChildGone:
            pass  # dead before it read a word: the first read finds out why (_ensure_loaded)

    def _kill(self) -> None:
        if self.child is None:
            return
        self.child.handle.kill()
        for fd in (self.fd_in, self.fd_out):
            try:
                os.close(fd)
            except OSError:
                pass
        self.child = None
        self.loaded = False  # the next call starts a fresh child and loads the submission again

    def _death_reason(self) -> str:
        code = self.child.handle.wait(timeout=10) if self.child else None
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
        if self.child is not None and self.child.handle.poll() is None:
            try:
                self._request({"op": "exit"})
            except _ChildGone:
                pass
        self._kill()

    # -- framing -----------------------------------------------------------------------------
    def _request(self, message: dict[str, Any]) -> None:
        """Send a request under a fresh id; the child's answers must carry it, numbered from 0."""
        self.request_id, self.expected_seq, self.request_op = secrets.randbits(62), 0, message["op"]
        self.reply_seq = 0
        data = codec.encode(message, request=self.request_id, seq=0)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd_out, view) :]
        except (BrokenPipeError, OSError):
            raise _ChildGone() from None

    def _answer(self, matcher: Matcher, message: dict[str, Any]) -> None:
        """Answer a stand-in's question with the recorded result when the child's call is one the
        reference made (seqlab.student.callees.Matcher), under the request's id."""
        found, result = matcher.match(message["callee"], message["arguments"])
        self.reply_seq += 1
        data = codec.encode(
            {"op": "answer", "found": found, "result": result}, request=self.request_id, seq=self.reply_seq
        )
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd_out, view) :]
        except (BrokenPipeError, OSError):
            raise _ChildGone() from None

    def _receive(self, deadline: float) -> dict[str, Any]:
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

        request, seq, message = codec.decode(codec.read_frame(read_exact), device_map=self._device_map)
        if request != self.request_id or seq != self.expected_seq:
            raise Anomaly(
                f"a frame for request {request} #{seq} while answering {self.request_id} #{self.expected_seq}"
            )
        self.expected_seq += 1
        return check_answer(self.request_op, message)

    def _stray_data(self) -> bool:
        """Anything readable from the child between requests (a frame nobody asked for, or EOF)."""
        try:
            ready, _, _ = select.select([self.fd_in], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(ready)

    def _device_map(self, name: str) -> torch.device:
        import torch

        device = torch.device(name)
        if device.type == "cuda" and not torch.cuda.is_available():
            return torch.device("cpu")
        return device

    # -- loading -----------------------------------------------------------------------------
    def _ensure_loaded(self) -> None:
        while not self.loaded:
            if self.child is None:
                self._spawn()
            current = None
            deadline = time.monotonic() + self.limits.import_timeout_s + 30  # + interpreter and torch start
            try:
                while True:
                    message = self._receive(deadline)
                    if message["op"] == "loading":
                        # Modules load in contract order, each announced once: a forged announcement
                        # can only move forward, so skipping the module at fault always ends.
                        order = [m for m in contract.MODULES if m not in self.skip]
                        module = message["module"]
                        if module not in order or (current is not None and order.index(module) <= order.index(current)):
                            raise Anomaly(f"an out-of-order 'loading' frame ({module[:40]!r})")
                        current = module
                        deadline = time.monotonic() + self.limits.import_timeout_s
                    elif message["op"] == "loaded":
                        self._load_errors = dict(message["errors"])
                        self.loaded = True
                        break
            except TimeoutError:
                if current is None and self._retry_with_a_fresh_server():
                    continue
                self._kill()
                if current is None:
                    raise StudentError("protocol", "the student process did not start in time") from None
                self.skip[current] = (
                    f"exercises/{current}.py: importing it took longer than "
                    f"{self.limits.import_timeout_s:g} s (a loop at module level?)"
                )
            except (_ChildGone, codec.CodecError, Anomaly) as exc:
                if isinstance(exc, _ChildGone):
                    reason = self._death_reason()
                else:
                    reason = f"broke the grading protocol ({exc})"
                if current is None and self._retry_with_a_fresh_server():
                    continue
                self._kill()
                if current is None:
                    raise StudentError("crash", f"the student process {reason} before loading anything") from None
                self.skip[current] = f"exercises/{current}.py: importing it {reason}"

    def _retry_with_a_fresh_server(self) -> bool:
        """A forked child that failed before it loaded any module failed on what its server gave
        it (no student code had run in it yet): the server is shut down, so this submission and the
        next get a fresh one, and this load is tried once more. False where it was not forked, or
        the retry is spent."""
        if self._retried or not retire_server_of(self.child):
            return False
        self._retried = True
        self._kill()
        return True

    @property
    def load_errors(self) -> dict[str, str]:  # type: ignore[override]  # read when first asked: the child loads lazily
        self._ensure_loaded()
        return dict(self._load_errors or {})

    def cpu_clock(self) -> tuple[object, float] | None:
        """The child's CPU time so far, read from /proc by this process (cputime.py)."""
        if self.child is None:
            return None
        if self._cpu_pid is None or self._cpu_pid[0] is not self.child:
            self._cpu_pid = (self.child, host_pid(self.child))
        seconds = cpu_seconds(self._cpu_pid[1]) if self._cpu_pid[1] is not None else None
        return None if seconds is None else (self.child, seconds)

    # -- calls -------------------------------------------------------------------------------
    def run(
        self,
        qualname: str,
        args: Args = (),
        kwargs: Kwargs = None,
        *,
        kernels: bool = False,
        timeout: Seconds = None,
        own_callees: bool = False,
        backward: Backward = None,
    ) -> Outcome:
        if self.timeouts.get(qualname, 0) >= TIMEOUT_STRIKES:
            raise StudentError("timeout", f"timed out {TIMEOUT_STRIKES} times already in this run; not called again")
        timeout = timeout or self.limits.call_timeout_s
        # the recording stays here: the child's stand-ins ask for one result at a time (_answer)
        matcher = Matcher(self.recording(qualname, args, kwargs or {}, own_callees), self.tolerances)
        request = {
            "op": "call" if backward is None else "backward",
            "name": qualname,
            "args": list(args),
            "kwargs": dict(kwargs or {}),
            "callees": matcher.callees(),
            "kernels": kernels,
            **({} if backward is None else {"backward": backward}),
        }
        for attempt in range(2):
            if self.child is not None and self.loaded and self._stray_data():
                self._kill()  # it wrote after its last answer, or died since: no call is charged for that
            self._ensure_loaded()
            try:
                self._request(request)
                break
            except _ChildGone:  # it could not even take the request (it closed its end): a fresh one can
                self._kill()
                if attempt:
                    raise StudentError("crash", "the student process could not take the call") from None
        try:
            deadline = time.monotonic() + timeout
            message = self._receive(deadline)
            while message["op"] == "callee":  # a stand-in's question; the call goes on after it
                self._answer(matcher, message)
                message = self._receive(deadline)
        except TimeoutError:
            self._kill()
            self.timeouts[qualname] = self.timeouts.get(qualname, 0) + 1
            raise StudentError("timeout", f"did not return within {timeout:g} s (an infinite loop?)") from None
        except _ChildGone:
            reason = self._death_reason()
            self._kill()
            raise StudentError("crash", f"the call {reason}") from None
        except (codec.CodecError, Anomaly) as exc:
            self._kill()
            raise StudentError(
                "protocol",
                f"the student process broke the grading protocol ({exc}); it was stopped and this call scores nothing",
            ) from None
        if message["op"] == "error":
            raise StudentError(message["kind"], message["message"], message["ops"], message["output"])
        return Outcome(
            message["value"],
            tuple(message["args"]),
            dict(message["kwargs"]),
            list(message["aliased"]),
            dict(message["ops"]),
            int(message["op_count"]),
            clean_text(message["output"]),
            dict(message.get("grads", {})),
            clean_text(message.get("backward_error", "")),
            dict(message["updates"]),
        )
