"""Every link in README.md and docs/ leads to a file of the repository (or a web page), and no page
sends readers to files that are not in the repository."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
OUTSIDE = re.compile(r"(\.\./)+shared/|\bshared/spec/|`spec/[\w-]+\.md`")  # the project's working notes


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_resolve_inside_the_repository(page):
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        path = target.split("#", 1)[0]
        if not path:
            continue  # a heading on the same page
        resolved = (page.parent / path).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: {target} does not exist"
    assert not OUTSIDE.search(text), f"{page.name} refers to files outside the repository"
