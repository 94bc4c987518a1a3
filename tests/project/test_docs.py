"""The documentation in layers: a short README, the rest a site that builds without a warning.

``make docs`` runs ``mkdocs build --strict``; mkdocs.yml turns every link to a missing page or a
missing anchor, and every page left out of the navigation, into a warning. The build runs here
in-process (no interpreter to start), into a temporary folder.
"""

from __future__ import annotations

import logging
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 250  # what it is, the quick start, the commands, where to read on


def test_the_site_builds_strictly_without_a_warning(tmp_path, caplog):
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    # Without the search plugin: its index holds no link to check, and it is a third of the time.
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True, plugins=[])
    with caplog.at_level(logging.WARNING, logger="mkdocs"):
        build(config)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not warnings, "mkdocs warns:\n" + "\n".join(warnings)
    pages = {p.name for p in (tmp_path / "site").glob("*.html")}
    assert {"index.html", "students.html", "threat-model.html", "DESIGN.html", "labs.html"} <= pages


def test_the_readme_is_the_front_door_only():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    for command in ("make demo", "make test"):
        assert f"{command} " in readme, command
    # where to read on: every page of the site is reachable from the README
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in readme, f"README.md does not point to docs/{page.name}"
