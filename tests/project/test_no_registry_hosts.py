"""No tracked file names a package registry's host.

pip finds PyPI without a URL, and apt its mirrors from the machine's own sources: a host written
into a script, a lock or a doc only pins where a machine must fetch from (and breaks one that
fetches from a mirror). The one URL the set-up names is PyTorch's CPU wheel index
(seqlab.defaults.TORCH_CPU_INDEX), which serves the +cpu torch that no default index has.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Joined here so that this file does not name them itself.
HOSTS = [
    ".".join(parts)
    for parts in (
        ("pypi", "org"),  # its test. and upload. hosts too
        ("files", "pythonhosted", "org"),
        ("pythonhosted", "org"),
        ("registry", "npmjs", "org"),
        ("registry", "yarnpkg", "com"),
        ("deb", "debian", "org"),
        ("security", "debian", "org"),
        ("archive", "ubuntu", "com"),
        ("security", "ubuntu", "com"),
        ("conda", "anaconda", "org"),
        ("repo", "anaconda", "com"),
        ("proxy", "golang", "org"),
        ("crates", "io"),
        ("rubygems", "org"),
    )
]
PATTERN = re.compile("|".join(rf"(?<![\w-]){re.escape(h)}(?![\w-])" for h in HOSTS), re.IGNORECASE)


def hits(text: str) -> list[tuple[int, str]]:
    lowered = text.lower()
    if not any(host in lowered for host in HOSTS):  # plain substring scans: the regex only on a hit
        return []
    return [(n, m[0]) for n, line in enumerate(text.splitlines(), 1) for m in [PATTERN.search(line)] if m]


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


def test_the_pattern_finds_a_host_in_a_url_and_leaves_other_words_alone():
    url = "https://" + HOSTS[0] + "/simple"
    assert hits(f"a\npip install --extra-index-url {url}\n") == [(2, HOSTS[0])]
    assert hits("test." + HOSTS[0].upper()) == [(1, HOSTS[0].upper())]
    assert hits("PyPI, download.pytorch.org/whl/cpu, mypypi.organ") == []
