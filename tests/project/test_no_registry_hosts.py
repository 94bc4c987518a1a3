"""No tracked file names a package registry's host.

pip finds PyPI without a URL, and apt its mirrors from the machine's own sources: a host written
into a script, a lock or a doc only pins where a machine must fetch from (and breaks one that
fetches from a mirror). The one URL the set-up names is PyTorch's CPU wheel index
(seqlab.defaults.TORCH_CPU_INDEX), which serves the +cpu torch that no default index has.

The hosts are kept as digests, so that this file names none of them either: every dotted name in a
tracked file (and each of its parent domains, for a test. or upload. host) is hashed and looked up.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# sha256 (first 24 hex digits) of each host: PyPI and its files host (two spellings), the npm and
# yarn registries, Debian's archive and security hosts, Ubuntu's archive and security hosts,
# conda's two channels, the Go module proxy, crates and RubyGems.
HOST_DIGESTS = frozenset(
    {
        "a4aa2ac280bb8d1a0ce7a1be",
        "c899567ee906851741bf7f3b",
        "8b5bb5eb9d758455b8635855",
        "0dc11026ac75c015aaa1deaf",
        "70bb4000cd2fab03af01fed0",
        "e680c440a2e92079ab1bf7a9",
        "1ba4e37997a2e986efa6cd84",
        "a0f007d863a0ed19c5bd996e",
        "e514b0d3b0562f54b6622ba9",
        "4db460c55b85212e50a70cad",
        "15bdb44dafa6843b1e260ba6",
        "00a7dc5a0cc388586b866584",
        "789e46d79514e28093cabe2b",
        "71741fe2460a615058687c45",
    }
)
DOTTED = re.compile(r"(?<![\w-])[a-z0-9-]+(?:\.[a-z0-9-]+)+(?![\w-])", re.IGNORECASE)


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def hits(text: str) -> list[tuple[int, str]]:
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for match in DOTTED.finditer(line):
            parts = match[0].lower().split(".")
            if any(_digest(".".join(parts[i:])) in HOST_DIGESTS for i in range(len(parts) - 1)):
                found.append((n, match[0]))
    return found


def test_no_tracked_file_names_a_registry_host():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in tracked.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        found += [f"{name}:{n}: {host}" for n, host in hits(text)]
    assert not found, "registry hosts in tracked files (PyPI needs no URL; write 'PyPI' in prose): " + "; ".join(found)


def test_the_digests_find_a_host_in_a_url_and_leave_other_words_alone():
    host = "".join(map(chr, (112, 121, 112, 105, 46, 111, 114, 103)))  # PyPI's, spelled out of sight
    assert hits(f"a\npip install --extra-index-url https://{host}/simple\n") == [(2, host)]
    assert hits("test." + host.upper()) == [(1, "test." + host.upper())]
    assert hits(f"PyPI, the CPU index, my{host}an, seqlab.subset.rules") == []  # inside a longer name: not it
