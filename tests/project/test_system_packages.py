"""scripts/system-packages.sh, run by `make setup`: present, installed, or a stop with the command.

The script runs against stand-ins for dpkg-query, apt-get and id on PATH, so each case is the
script's own decision and nothing is installed.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "system-packages.sh"
PACKAGES = re.search(r"^PACKAGES=\((.*)\)$", SCRIPT.read_text(), re.M)[1].split()


def run(tmp_path: Path, *, installed: list[str], uid: int, apt: bool = True, **env: str):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "apt.log"
    stand_ins = {
        # dpkg-query -W -f='${Package} ${Status}\n' NAME...: a line for each known package
        "dpkg-query": 'for p in "${@:3}"; do case " $INSTALLED " in *" $p "*) '
        'echo "$p install ok installed";; esac; done',
        "id": f"echo {uid}",
    }
    if apt:
        stand_ins["apt-get"] = f'echo "$*" >> {log}'
    for name, body in stand_ins.items():
        (bin_dir / name).write_text(f"#!/bin/bash\n{body}\n")
        (bin_dir / name).chmod(0o755)
    path = f"{bin_dir}:/usr/bin:/bin"
    if not apt:  # the real apt-get in /usr/bin must not be found either
        path = str(bin_dir)
        for tool in ("bash", "sed", "grep", "cat"):
            (bin_dir / tool).symlink_to(subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip())
    done = subprocess.run(
        ["/bin/bash", str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": path, "INSTALLED": " ".join(installed), **env},
    )
    return done, (log.read_text().splitlines() if log.exists() else [])


def test_all_present_costs_one_query_and_says_nothing(tmp_path):
    done, apt = run(tmp_path, installed=PACKAGES, uid=1000)
    assert (done.returncode, done.stdout, done.stderr, apt) == (0, "", "", [])


def test_root_with_apt_installs_what_is_missing_after_an_update(tmp_path):
    done, apt = run(tmp_path, installed=PACKAGES[2:], uid=0)
    assert done.returncode == 0, done.stderr
    assert apt[0] == "update -qq"
    assert apt[1].startswith("install -y") and apt[1].split()[-2:] == PACKAGES[:2]


@pytest.mark.parametrize("uid, apt", [(1000, True), (0, False)])
def test_without_root_or_apt_it_stops_with_the_command_to_run(tmp_path, uid, apt):
    done, log = run(tmp_path, installed=PACKAGES[1:], uid=uid, apt=apt)
    assert done.returncode == 1 and log == []
    assert f"sudo apt-get install -y {PACKAGES[0]}\n" in done.stderr
    assert "SEQLAB_NO_SYSTEM_PACKAGES=1" in done.stderr


def test_the_escape_hatch_goes_on_and_names_what_is_missing(tmp_path):
    done, apt = run(tmp_path, installed=PACKAGES[1:], uid=1000, SEQLAB_NO_SYSTEM_PACKAGES="1")
    assert done.returncode == 0 and apt == []
    assert f"going on without {PACKAGES[0]} (SEQLAB_NO_SYSTEM_PACKAGES=1)" in done.stderr


def test_make_setup_runs_it_every_time():
    # a stamp would not see a package removed; the check is one dpkg-query
    shown = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "setup"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert shown.splitlines()[0] == "bash scripts/system-packages.sh"
