"""`seqlab regenerate`: the derived files are current, a stale generated figure is found by
``--check`` and rewritten without it (the recorded grades' part runs only in ``make test-banks``
and on purpose)."""

from __future__ import annotations

import pytest

from seqlab.cli import main
from seqlab.commands import regenerate
from seqlab.config import course_figures


def test_the_fast_parts_are_current(capsys):
    assert main(["regenerate", "--check", "--only", "stubs", "docs"]) == 0, capsys.readouterr()


def test_a_stale_figure_is_found_then_rewritten(tmp_path, monkeypatch, capsys):
    doc = tmp_path / "page.md"
    doc.write_text("Out of <!-- generated: total-points -->1<!-- /generated --> points.\n", encoding="utf-8")
    monkeypatch.setattr(regenerate, "DOCS_DIR", tmp_path)
    assert main(["regenerate", "--check", "--only", "docs"]) == 1
    assert "docs: stale page.md" in capsys.readouterr().out
    assert main(["regenerate", "--only", "docs"]) == 0
    total = f"{course_figures().total_points:g}"
    assert (
        doc.read_text(encoding="utf-8")
        == f"Out of <!-- generated: total-points -->{total}<!-- /generated --> points.\n"
    )
    assert main(["regenerate", "--check", "--only", "docs"]) == 0


def test_an_unknown_figure_is_an_error_that_names_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "page.md").write_text("<!-- generated: totl -->?<!-- /generated -->\n", encoding="utf-8")
    monkeypatch.setattr(regenerate, "DOCS_DIR", tmp_path)
    assert main(["regenerate", "--check", "--only", "docs"]) == 2
    assert "names no figure" in capsys.readouterr().err


@pytest.mark.slow  # three real pytest runs, about 3 s
def test_a_recording_run_says_which_recordings_it_rewrote(tmp_path, monkeypatch):
    """A real pytest run that records: the files it changed are named, and a run that changes
    nothing says so (it printed "up to date" after a rewrite, which misled a maintainer trial)."""
    (tmp_path / "tests" / "recorded").mkdir(parents=True)
    (tmp_path / "tests" / "recorded" / "a.json").write_text('{"x": 1}\n')
    (tmp_path / "test_rec.py").write_text(
        "import os, pathlib\n\n\ndef test_record():\n"
        "    if os.environ.get('SEQLAB_RECORD'):\n"
        "        pathlib.Path('tests/recorded/a.json').write_text('{\"x\": 2}\\n')\n"
    )
    monkeypatch.setattr(regenerate, "COURSE_ROOT", tmp_path)
    assert regenerate._pytest(("test_rec.py",), check=False, jobs=1) == ["tests/recorded/a.json"]
    assert regenerate._pytest(("test_rec.py",), check=False, jobs=1) == []
    assert regenerate._pytest(("test_rec.py",), check=True, jobs=1) == []
