"""scripts/check-commits.sh (run by `make lint`): subjects under 72 characters after the base.

Run in a small repository of its own, so the project's history does not decide the outcome.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-commits.sh"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def repo(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / SCRIPT.name)
    _git(tmp_path, "init", "-q", "-b", "main")
    return tmp_path


def _check(repo: Path, base: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "scripts/check-commits.sh", base], cwd=repo, capture_output=True, text=True)


def test_only_commits_after_the_base_are_held_to_the_rule(repo):
    base = _commit(repo, "x" * 120)  # the history before the base keeps its long subjects
    _commit(repo, "A short subject\n\nWhy, in the body.")
    done = _check(repo, base)
    assert done.returncode == 0, done.stdout
    assert "1 commit(s) after" in done.stdout


def test_a_long_subject_or_a_body_without_a_blank_line_fails(repo):
    base = _commit(repo, "base")
    long = _commit(repo, "y" * 72)
    glued = _commit(repo, "Subject\nbody glued to it")
    done = _check(repo, base)
    assert done.returncode == 1
    assert f"{long[:12]}: subject of 72 characters" in done.stdout
    assert f"{glued[:12]}: no blank line" in done.stdout


def test_an_unknown_base_checks_head_alone(repo):
    _commit(repo, "z" * 100)
    _commit(repo, "fine")
    done = _check(repo, "0" * 40)
    assert done.returncode == 0 and "checking HEAD only" in done.stdout


def test_the_recorded_base_is_a_commit_id():
    base = (ROOT / "scripts" / "commit-base").read_text(encoding="utf-8").strip()
    assert len(base) == 40 and all(c in "0123456789abcdef" for c in base)
