"""The GPU in the sandbox, without a GPU: the NVIDIA driver's nodes and files are passed into the
bubblewrap sandbox when grading on CUDA and only then, and ``--device auto`` never takes a GPU the
sandboxed child cannot reach.

Stand-in device files are laid out in a temporary folder that plays the host's root (its dev/,
proc/, sys/ and a driver library folder); as root they are real character devices made with
mknod (the same numbers as /dev/zero, so opening one proves the node works in the sandbox, which
a ``nodev`` mount would refuse), else plain files of four zero bytes, read the same way. The
real GPU path is scripts/gpu-check.sh, on a machine with one.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from seqlab.grading.settings import GradingError, GradingSettings, auto_device, choose_device, grading_settings
from seqlab.student import gpu, sandbox, spawn
from seqlab.student.sandbox import Sandbox, SandboxUnavailable
from tests.student.test_sandbox import need_bwrap

NODES = ("nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-caps/nvidia-cap1")


def stand_in_host(root: Path, nodes=NODES, proc: bool = True) -> tuple[str, tuple[str, ...]]:
    """A host root holding the driver's nodes, /proc/driver/nvidia, a sysfs device tree and a
    library folder with libcuda; returns the root and the library folders for gpu.find.

    ``proc=False`` leaves /proc/driver/nvidia out: the sandbox's own /proc, where it is bound,
    has that folder only where a driver made it (every procfs shows the driver's entries), and
    bwrap cannot make a mount point in a procfs, so a stand-in of it can be shown in the
    command line only."""
    for node in nodes:
        path = root / "dev" / node
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers
        else:
            path.write_bytes(b"\0" * 4)
    if proc:
        (root / "proc" / "driver" / "nvidia").mkdir(parents=True)
        (root / "proc" / "driver" / "nvidia" / "version").write_text("stand-in driver\n")
    (root / "sys" / "devices").mkdir(parents=True)
    (root / "sys" / "devices" / "stand-in").write_text("a sysfs entry\n")
    libs = root / "driver-libs"
    libs.mkdir()
    (libs / "libcuda.so.550.1").write_text("stand-in libcuda\n")
    (libs / "libcuda.so.1").symlink_to("libcuda.so.550.1")
    (libs / "libunrelated.so").write_text("not the driver's\n")
    return str(root), (str(libs),)


def test_find_lists_the_nodes_the_driver_files_and_what_is_missing(tmp_path):
    root, libs = stand_in_host(tmp_path)
    found = gpu.find(root, libs)
    assert found.reachable and found.why_not == ""
    assert sorted(seen for _, seen in found.devices) == [
        "/dev/nvidia-caps",
        "/dev/nvidia-uvm",
        "/dev/nvidia-uvm-tools",
        "/dev/nvidia0",
        "/dev/nvidiactl",
    ]
    assert all(host == os.path.join(root, "dev", seen[len("/dev/") :]) for host, seen in found.devices)
    read_only = dict(found.read_only)
    assert read_only[f"{root}/proc/driver/nvidia"] == "/proc/driver/nvidia"
    assert read_only[f"{root}/sys/devices"] == "/sys/devices"
    # the library both by the name the loader opens and as the file it resolves to; nothing else
    assert f"{libs[0]}/libcuda.so.1" in read_only and f"{libs[0]}/libcuda.so.550.1" in read_only
    assert not any("unrelated" in p for p in read_only)
    args = found.bwrap_args()
    assert args[args.index(f"{root}/dev/nvidia0") - 1] == "--dev-bind"  # a node, never nodev
    assert args[args.index(f"{root}/proc/driver/nvidia") - 1] == "--ro-bind"

    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "dev").mkdir()
    (partial / "dev" / "nvidiactl").write_bytes(b"")
    missing = gpu.find(str(partial), ())
    assert not missing.reachable
    assert missing.missing == ("/dev/nvidia-uvm", "/dev/nvidiaN (a GPU's node)")


def test_on_the_cpu_the_bwrap_command_is_the_same_and_cuda_only_adds_the_driver(tmp_path):
    root, libs = stand_in_host(tmp_path)
    box = Sandbox("bwrap")
    args = dict(exercises="/sub/exercises", scratch="/tmp/seqlab-student-x", seccomp_fd=7)
    before = sandbox.bwrap_command(["python"], **args)  # the call every CPU grading has made
    on_cpu = box.for_device("cpu", root)
    assert on_cpu is box and on_cpu.gpu is None  # a layout on the host changes nothing on the CPU
    cpu_argv = sandbox.bwrap_command(["python"], **args, gpu=on_cpu.gpu)
    assert cpu_argv == before
    assert "--dev-bind" not in cpu_argv and not any("nvidia" in a or a.startswith("/sys") for a in cpu_argv)

    on_cuda = gpu_box(root, libs)
    cuda_argv = sandbox.bwrap_command(["python"], **args, gpu=on_cuda.gpu)
    at = cpu_argv.index("--dev") + 2  # right after the sandbox's own /dev, which would hide them
    assert cuda_argv == cpu_argv[:at] + on_cuda.gpu.bwrap_args() + cpu_argv[at:]
    assert on_cuda.description.endswith(" + NVIDIA devices") and box.description in on_cuda.description
    # the CPU child and the CUDA child are different children: neither serves the other
    assert spawn.child_key("/sub/exercises", box) != spawn.child_key("/sub/exercises", on_cuda)


def gpu_box(root: str, libs: tuple[str, ...]) -> Sandbox:
    """The bwrap sandbox as for_device("cuda") makes it, from the stand-in host's layout (and
    its library folder rather than this machine's)."""
    made = Sandbox("bwrap").for_device("cuda", root)
    assert made.gpu == gpu.find(root)
    from dataclasses import replace

    return replace(made, gpu=gpu.find(root, libs))


LOOK = r"""
import json, os, stat
look = {}
for path in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvidia-caps/nvidia-cap1", LIB,
             "/sys/devices/stand-in"):
    try:
        with open(path, "rb") as f:
            look[path] = [stat.S_ISCHR(os.fstat(f.fileno()).st_mode), f.read(4).hex()]
    except OSError as exc:
        look[path] = type(exc).__name__
try:
    open("/dev/nvidia0", "wb").write(b"x")
    look["write"] = "ok"
except OSError as exc:
    look["write"] = type(exc).__name__
os.write(FD, json.dumps(look).encode())
"""


def look_inside(box: Sandbox, lib: str) -> dict:
    """What a child started as the grading starts one (spawn.launch: bwrap, rlimits, the
    minimal environment) sees of the stand-ins, in the sandbox ``box``."""
    read, write = os.pipe()
    scratch = Path(tempfile.mkdtemp(prefix="seqlab-student-"))
    try:
        code = LOOK.replace("LIB", repr(lib)).replace("FD", str(write))
        proc = spawn.launch(code, scratch=scratch, sandbox=box, pass_fds=[write])
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            said = pipe.read()
        assert proc.wait(timeout=60) == 0, f"exit {proc.returncode}"
    finally:
        os.rmdir(scratch)
    return json.loads(said)


def test_a_sandboxed_child_on_the_cuda_plan_sees_and_opens_the_driver(tmp_path):
    need_bwrap()
    root, libs = stand_in_host(tmp_path, proc=False)
    lib = f"{libs[0]}/libcuda.so.1"
    on_cuda = look_inside(gpu_box(root, libs), lib)
    is_node = os.geteuid() == 0
    for node in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvidia-caps/nvidia-cap1"):
        assert on_cuda[node] == [is_node, "00000000"], (node, on_cuda[node])  # there, and it opens
    assert on_cuda[lib] == [False, b"stan".hex()]
    assert on_cuda["/sys/devices/stand-in"] == [False, b"a sy".hex()]
    assert on_cuda["write"] == "ok"  # as the driver opens its nodes: read and write


def test_a_sandboxed_child_on_the_cpu_plan_sees_none_of_it(tmp_path):
    need_bwrap()
    root, libs = stand_in_host(tmp_path, proc=False)
    on_cpu = look_inside(Sandbox("bwrap").for_device("cpu", root), f"{libs[0]}/libcuda.so.1")
    looked = [p for p in on_cpu if p != "write"]  # (the write made a plain file in its own tmpfs /dev)
    assert len(looked) == 6 and all(on_cpu[p] == "FileNotFoundError" for p in looked), on_cpu


def test_device_auto_takes_cuda_only_where_the_sandboxed_child_can_reach_it(tmp_path):
    full, _ = stand_in_host(tmp_path / "full")
    (tmp_path / "bare" / "dev").mkdir(parents=True)
    no_uvm = tmp_path / "no-uvm"
    stand_in_host(no_uvm, nodes=("nvidiactl", "nvidia0"))
    bwrap, none = Sandbox("bwrap"), Sandbox("none", "--sandbox none was asked for")

    assert auto_device(True, bwrap, str(full)) == ("cuda", "")
    assert auto_device(True, none, str(tmp_path / "bare")) == ("cuda", "")  # nothing between: no nodes needed
    assert auto_device(True, None, str(tmp_path / "bare")) == ("cuda", "")  # in-process
    device, why = auto_device(True, bwrap, str(no_uvm))
    assert device == "cpu" and "\n" not in why
    assert (
        why
        == "--device auto: cpu (torch sees CUDA, but the sandbox cannot reach it: no /dev/nvidia-uvm to pass into the sandbox)"
    )
    device, why = auto_device(False, bwrap, str(full))
    assert (device, why) == ("cpu", "--device auto: cpu (a GPU driver is here, but torch sees no CUDA device)")


def test_cuda_asked_for_where_the_sandbox_cannot_reach_it_fails_and_names_the_way_out(tmp_path):
    (tmp_path / "dev").mkdir()
    with pytest.raises(
        SandboxUnavailable, match=r"--device cuda in the bwrap sandbox: no /dev/nvidiactl.*--device cpu"
    ):
        Sandbox("bwrap").for_device("cuda", str(tmp_path))
    assert Sandbox("none", "asked").for_device("cuda", str(tmp_path)).gpu is None  # no sandbox to pass into
    # this machine's torch is the CPU build: cuda is refused before any sandbox is asked
    with pytest.raises(GradingError, match="torch sees no CUDA device"):
        grading_settings(device="cuda", sandbox="none")
    assert choose_device("cpu", Sandbox("bwrap")) == ("cpu", "")
    # settings made by hand cannot pair CUDA with a sandbox that shows no GPU
    config = grading_settings(device="cpu", sandbox="none").config
    with pytest.raises(TypeError, match="needs the GPU passed in"):
        GradingSettings(config=config, sandbox=Sandbox("bwrap"), device="cuda")
    assert grading_settings(device="cpu", sandbox="none").sandbox == Sandbox("none", "--sandbox none was asked for")


def test_the_gpu_module_imports_without_torch():
    import subprocess

    probe = "import sys; import seqlab.student.gpu as g; g.find(); print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.bank  # four gradings of one topic in the real sandbox: ~20 s
@pytest.mark.parametrize("forkserver", ["1", "0"])
def test_a_grading_with_the_driver_passed_in_grades_as_without_it(tmp_path, monkeypatch, forkserver):
    """The child (forked by a server started with the pass-through, or started alone) runs the
    graders' calls the same with the stand-in driver mounted: every test's score, status and
    message equal the plain sandbox's, on the references and on a known-wrong variant. (On the
    CPU: a grading device of cuda needs a GPU, scripts/gpu-check.sh.)"""
    need_bwrap()
    from seqlab.grading import grade_submission
    from tests.mutants import all_variants, make_submission

    monkeypatch.setenv("SEQLAB_FORKSERVER", forkserver)
    root, libs = stand_in_host(tmp_path / "host", proc=False)
    wrong = next(v for v in all_variants("MUTANTS") if v.module == "optimizers")
    graded = {}
    for name, box in (("plain", Sandbox("bwrap")), ("driver", gpu_box(root, libs))):
        for i, variant in enumerate((None, wrong)):
            submission = make_submission(tmp_path / f"{name}-{i}", variant)
            settings = grading_settings(seed=3, only="optimizers", sandbox=box)
            assert settings.sandbox is box  # on the CPU the sandbox given is the one used
            result = grade_submission(submission, settings)
            graded[name, i] = [
                (t.name, t.score, t.max_score, t.status, t.output.replace(str(submission), "<s>")) for t in result.tests
            ]
    assert graded["plain", 0] == graded["driver", 0] and graded["plain", 1] == graded["driver", 1]
    if forkserver == "1":  # and the children were forked by a server with the driver passed in
        from seqlab.student import children

        server = children.server_for(box)
        assert server is not None and server.was_ready
    assert all(t[3] == "passed" for t in graded["driver", 0]) and any(t[3] != "passed" for t in graded["driver", 1])
