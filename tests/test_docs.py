"""The documentation's floors: README.md stays a short map, and every relative link in
README.md and docs/ leads to a file that exists (and, with #anchor, to a heading in it)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_LIMIT = 20 * 1024
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)


def prose(text):
    """The page without its fenced code blocks, where brackets are code, not links."""
    return FENCE.sub("", text)


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    return {anchor(h) for h in HEADING.findall(prose(path.read_text()))}


def relative_links(path):
    for target in LINK.findall(prose(path.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue    # http:, mailto:, … and links within the page (checked below)
        yield target


def test_readme_is_a_short_map():
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_LIMIT, f"README.md is {size} bytes; move detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in relative_links(page):
        file_part, _, fragment = target.partition("#")
        resolved = (page.parent / file_part).resolve()
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading #{fragment} in {resolved.name}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_anchor_follows_github():
    assert anchor("placement.conf") == "placementconf"
    assert anchor("Connection pooling (pgbouncer)") == "connection-pooling-pgbouncer"
    assert anchor("`--threads`, and why") == "--threads-and-why"


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[gone](missing.md) and [fine](page.md) and [web](https://x.org)\n"
                    "```\n[code](not-a-link.md)\n```\n")
    assert list(relative_links(page)) == ["missing.md", "page.md"]
