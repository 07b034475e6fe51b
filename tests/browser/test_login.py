"""An operator logs in through the admin form and lands on the dashboard."""
import re

from tests.browser.conftest import log_in, screenshot


def test_login_lands_on_the_dashboard(page, operator):
    page.goto("/ui/")
    # not logged in: the admin login page, with the way back to /ui/
    page.wait_for_url(re.compile(r"/admin/login/\?next=/ui/"))
    log_in(page)
    assert page.locator("header .who").inner_text().startswith("operator")
    assert page.locator("nav a.active").inner_text() == "Dashboard"
    screenshot(page, "dashboard")


def test_wrong_password_is_refused(page, operator):
    page.goto("/admin/login/?next=/ui/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", "not-it")
    page.click("input[type=submit]")
    assert "correct username and password" in page.locator(".errornote").inner_text()
