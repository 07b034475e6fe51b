"""For the browser tests at cloud scale: the 3,000-provider / 3,000-consumer cloud
(tests/bigcloud.py) and the check that a page is no wider than the window."""
import pytest

from tests.bigcloud import build_cloud
from tests.browser.conftest import screenshot


@pytest.fixture
def cloud(operator):
    return build_cloud(providers=3000, consumers=3000)


WIDTHS = (1440, 800)
# what sticks out of the window (for the failure message)
WIDEST = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 8).map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""


def page_overflow(page):
    """How many px the document is wider than the window (0: no horizontal scroll)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


# ids used twice, and form controls without an accessible name (label, aria-label)
DUPLICATE_IDS = """() => { const seen = {}; for (const e of document.querySelectorAll('[id]'))
  seen[e.id] = (seen[e.id] || 0) + 1; return Object.keys(seen).filter(k => seen[k] > 1); }"""
UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea')]
  .filter(e => e.type !== 'hidden' && !e.labels.length && !e.getAttribute('aria-label'))
  .map(e => e.outerHTML.slice(0, 80))"""


def check_accessible(page):
    """No id twice on the page, every form control labelled, and the first Tab stop is
    the skip link to the content."""
    assert page.evaluate(DUPLICATE_IDS) == []
    assert page.evaluate(UNLABELLED) == []
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"


def check_widths(page, name):
    check_accessible(page)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert page_overflow(page) <= 0, (f"{name} overflows at {width} px",
                                          page.evaluate(WIDEST))
        screenshot(page, f"{name}-{width}")


