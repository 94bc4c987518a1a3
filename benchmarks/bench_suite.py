"""The test suite's wall and CPU time: what `make test` (or `make test-banks`) costs this machine.

The floor of the suite's wall time is its CPU time over the cores, so both are printed: the wall
time of the run, the CPU the whole machine spent over it (read from /proc/stat, so the grading
children and the tools the tests start are counted, and so is anything else running), and the
idle share (idle cores are time a better spread could give back). Run it on an otherwise idle
machine; the load average is printed before and after.

    .venv/bin/python benchmarks/bench_suite.py [--target test|test-banks] [--jobs 2]

Floor: none (it measures; the suite's limit, 4 minutes on the 2-core machine, is kept by
choosing what runs in `make test` and what in `make test-banks`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_ticks() -> tuple[int, int]:
    """(busy, idle) clock ticks of all CPUs since boot."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, idle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=("test", "test-banks", "test-fast"), default="test")
    parser.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers (the Makefile's JOBS)")
    args = parser.parse_args(argv)
    ticks_per_s = os.sysconf("SC_CLK_TCK")
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    busy0, idle0 = cpu_ticks()
    started = time.perf_counter()
    done = subprocess.run(["make", args.target, f"JOBS={args.jobs}"], cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    busy1, idle1 = cpu_ticks()
    busy, idle = (busy1 - busy0) / ticks_per_s, (idle1 - idle0) / ticks_per_s
    minutes, seconds = divmod(wall, 60)
    print(
        f"make {args.target} JOBS={args.jobs}: exit {done.returncode}, wall {int(minutes)}:{seconds:04.1f}, "
        f"CPU {busy:.0f} s, idle {idle:.0f} s ({100 * idle / max(busy + idle, 1e-9):.0f}% of the cores' time)"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
