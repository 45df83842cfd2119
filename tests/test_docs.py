"""README is for users and short (issue 49); every relative link in README.md and docs/ points at a file that exists."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_readme_is_at_most_300_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move the detail to docs/"


def broken_links(path: Path) -> list[str]:
    out = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"^(https?:|mailto:|#)", target):
            continue
        file = target.split("#", 1)[0]
        if file and not (path.parent / file).exists():
            out.append(target)
    return out


def test_relative_links_in_readme_and_docs_resolve():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "methods").glob("*.md"))]
    assert len(pages) >= 10
    broken = {str(p.relative_to(ROOT)): b for p in pages if (b := broken_links(p))}
    assert not broken, broken


@pytest.mark.slow
def test_readme_results_at_a_glance_are_what_the_rows_say():
    """README's per-paper line (runs finished, cells against the paper) is computed from the committed rows, as
    `tkbench report --all` writes it; no result number in it is written by hand (issue 49)."""
    from tkbench.report.reproduction import GLANCE_BEGIN, GLANCE_END, at_a_glance, glance_markdown

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert GLANCE_BEGIN in text and GLANCE_END in text
    block = GLANCE_BEGIN + text.split(GLANCE_BEGIN, 1)[1].split(GLANCE_END, 1)[0] + GLANCE_END
    lines = at_a_glance(ROOT)
    assert len(lines) == 5 and all(" of " in line[2] for line in lines)
    assert block == glance_markdown(lines), "README is stale: run `tkbench report --all` (make reproduce-report)"


def test_one_results_page():
    """docs/REPRODUCTION.md is the one results page (RESULTS.md, hand-written and stale, was merged into it)."""
    assert not (ROOT / "docs" / "RESULTS.md").exists()
    page = (ROOT / "docs" / "REPRODUCTION.md").read_text(encoding="utf-8")
    from tkbench.report.reproduction import GLANCE_BEGIN

    assert "## At a glance" in page and GLANCE_BEGIN in page
