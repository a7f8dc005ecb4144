"""Accessibility: a seat plays from the keyboard alone; on a phone-sized screen nothing overflows sideways;
every control has a name; seats are marked by shape as well as colour."""

from __future__ import annotations

from tests.web.conftest import open_game, seat_in_browser, version_of


def test_a_seat_plays_with_the_keyboard_on_a_phone_sized_screen(served, browser, shots):
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        created = served.request("POST", "/games", {"game": "castle_panic", "seats": 2, "bots": {"1": "random"}})
        seat_in_browser(page, served, created["id"])
        open_game(page, served, created["id"])
        page.screenshot(path=str(shots / "phone-castle_panic.png"), full_page=True)
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= 375 + 1, f"the page is {wide}px wide on a 375px screen"
        unnamed = page.evaluate("""() => [...document.querySelectorAll('button, a, input, select, [role=button]')]
            .filter((el) => !(el.getAttribute('aria-label') || el.labels?.length || el.textContent.trim()))
            .map((el) => el.outerHTML.slice(0, 80))""")
        assert not unnamed, unnamed
        marks = page.eval_on_selector_all("#scoreboard .seat-mark", "ms => ms.map(m => m.getAttribute('aria-label'))")
        assert len(marks) == 2 and len(set(marks)) == 2 and all(marks)
        before = version_of(page)
        # Tab to the first control that sends a command, and press Enter, as a keyboard user would.
        if page.locator("#legal-box").get_attribute("open") is None:
            page.locator("#legal-box > summary").focus()
            page.keyboard.press("Enter")
        for _ in range(200):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement?.hasAttribute('data-command')"):
                break
        else:
            raise AssertionError("no control that sends a command is reachable with Tab")
        focused_ring = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
        assert focused_ring != "none"
        page.keyboard.press("Enter")
        page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) > {before}")
    finally:
        context.close()
