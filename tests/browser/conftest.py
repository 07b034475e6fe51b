"""Real-browser tests of the operator UI: headless Debian Chromium driven by Playwright
against pytest-django's live server (the whole Django stack, a real database).

Skipped, saying why, where /usr/bin/chromium or the playwright package is missing
(`scripts/bootstrap-browser` installs both). Screenshots go to BROWSER_SCREENSHOTS
(default data/screenshots); .ci/run prints the folder.
"""
import os
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

CHROMIUM = os.environ.get("PLACEMENT_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS",
                                  Path(__file__).resolve().parents[2] / "data" / "screenshots"))
# Without the background-networking flags Chromium keeps dialling out of a closed network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]

try:
    from playwright.sync_api import sync_playwright
except ImportError:   # pragma: no cover - depends on the machine
    sync_playwright = None

if sync_playwright is None or not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need the playwright package and {CHROMIUM} "
                "(scripts/bootstrap-browser installs them)", allow_module_level=True)

# Playwright's sync API runs an event loop in this thread; Django's ORM calls made by the
# test itself would otherwise be refused as "async unsafe". The live server runs its own
# threads, so nothing is really shared between loops.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

OPERATOR, PASSWORD = "operator", "op-secret-1"


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    """A fresh browser tab (1280x900) against the live server; console errors fail the test."""
    context = browser.new_context(base_url=live_server.url,
                                  viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    errors, refused_pages = [], set()
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    # A page answered 4xx (a form re-shown with its errors) is the page's own answer;
    # Chromium still logs it as a failed load. Failures of anything else count.
    tab.on("response", lambda response: refused_pages.add(response.url)
           if response.request.resource_type == "document" and response.status < 500 else None)
    tab.on("console", lambda msg: errors.append(f"{msg.text} ({msg.location.get('url')})")
           if msg.type == "error" and not _favicon(msg)
           and msg.location.get("url", "").split("#")[0] not in refused_pages else None)
    yield tab
    context.close()
    assert not errors, f"browser console errors: {errors}"


def _favicon(message):
    """The browser's own favicon request (the service has none: a 404) is not the page's."""
    return message.location.get("url", "").endswith("/favicon.ico")


@pytest.fixture
def operator(transactional_db):
    return get_user_model().objects.create_superuser(OPERATOR, "op@example.invalid", PASSWORD)


def log_in(page, username=OPERATOR, password=PASSWORD, next_path="/ui/"):
    """Log in through the admin login form, as an operator does."""
    page.goto(f"/admin/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(re.compile(re.escape(next_path) + r"$"))


@pytest.fixture
def ui(page, operator):
    """A tab logged in as a staff operator, on the dashboard."""
    log_in(page)
    return page


def screenshot(page, name):
    """Save a full-page screenshot under SCREENSHOTS/<name>.png (returns the path)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
