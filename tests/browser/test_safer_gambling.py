"""Safer gambling in the console (issue 24), in Debian's Chromium against the app over real
HTTP: a player sets a loss limit and a deal past it is refused; a reality check pauses play
until the player acknowledges it; a self-excluded player is refused a deal; an operator
switches a game and a player off and on, each switch recorded with its reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec

from service.bootstrap import Container
from tests.browser.conftest import Live
from tests.browser.test_console import (
    _act,
    _cards,
    _click,
    _figure,
    _gbp,
    _pile,
    _player,
    _quietly,
    _sign_in,
    _snap,
    _wait,
)

STAKE = 520  # the lobby's default stake (seed 000: GBP 5.20)


def _open(browser: webdriver.Chrome, page: str) -> None:
    """Go to a page by its link in the navigation bar."""
    _click(browser, f"//nav//a[@href='#/{page}']")


def _limit_row(browser: webdriver.Chrome, limit: str) -> WebElement:
    return browser.find_element(By.CSS_SELECTOR, f"#limits tr[data-limit='{limit}']")


def _set_limit(browser: webdriver.Chrome, limit: str, typed: str) -> None:
    """Type a limit's new value in its row and press Set; wait for the page to be drawn anew."""
    row = _wait(browser, lambda b: _limit_row(b, limit))
    field = row.find_element(By.CSS_SELECTOR, "input")
    field.clear()
    field.send_keys(typed)
    row.find_element(By.XPATH, ".//button[normalize-space()='Set']").click()
    _wait(browser, ec.staleness_of(row))
    _wait(browser, lambda b: _quietly(lambda: bool(_limit_row(b, limit))))


def _limit_shown(browser: webdriver.Chrome, limit: str, cell: str) -> str:
    row = _wait(browser, lambda b: _limit_row(b, limit))
    return str(row.find_element(By.CSS_SELECTOR, f"[data-{cell}]").text)


def _deal_from_the_lobby(browser: webdriver.Chrome, variant: str = "vegas-draw1") -> None:
    tile = f"//*[@data-variant='{variant}']"
    _wait(
        browser,
        lambda b: _quietly(
            lambda: (
                b.find_element(By.XPATH, f"{tile}//output[@data-stake]").get_attribute("data-stake")
                == str(STAKE)
            )
        ),
    )
    _click(browser, f"{tile}//button[starts-with(normalize-space(), 'Deal')]")


def _problem(browser: webdriver.Chrome) -> str:
    return str(_wait(browser, ec.visibility_of_element_located((By.ID, "problem"))).text)


def test_a_player_sets_a_loss_limit_and_a_deal_past_it_is_refused(
    browser: webdriver.Chrome, live: Live
) -> None:
    http = live.http
    player_id, token = _player(live)
    _sign_in(browser, live, token)
    _open(browser, "safer")
    _set_limit(browser, "loss-day", "5.19")  # one penny short of a deal at the default stake
    assert _limit_shown(browser, "loss-day", "value") == _gbp(519)
    assert _limit_shown(browser, "loss-day", "remaining") == _gbp(519)
    # Raising it waits 24 hours: the lower limit holds meanwhile, the higher one is shown waiting.
    _set_limit(browser, "loss-day", "50")
    assert _limit_shown(browser, "loss-day", "value") == _gbp(519)
    assert _limit_shown(browser, "loss-day", "pending").startswith(f"{_gbp(5_000)} from ")
    _snap(browser, "console-limits")

    _open(browser, "table")
    _deal_from_the_lobby(browser)
    refused = _problem(browser)
    assert "loss-day limit allows 519 more" in refused
    wallet = http.get(f"/v1/players/{player_id}/wallet", token).get_json()
    assert (wallet["balance"], wallet["held"], wallet["open_game_id"]) == (10_400, 0, None)
    assert not browser.find_elements(By.CSS_SELECTOR, "section[data-game]")


def test_a_reality_check_pauses_play_until_the_player_acknowledges_it(
    browser: webdriver.Chrome, live: Live, container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    http = live.http
    player_id, token = _player(live)
    _sign_in(browser, live, token)
    _open(browser, "safer")
    _set_limit(browser, "reality-check", "1")
    assert _limit_shown(browser, "reality-check", "value") == "1 min"
    _open(browser, "table")
    _deal_from_the_lobby(browser)
    _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "section[data-game]")))
    dialog = browser.find_element(By.ID, "reality-check")
    assert not dialog.is_displayed()

    moved = datetime.now(UTC) + timedelta(seconds=61)
    monkeypatch.setattr(container.safer, "clock", lambda: moved)
    _pile(browser, "stock").click()  # refused: the check is due, and shown
    _wait(browser, ec.visibility_of(dialog))
    assert "reality check is due" in _problem(browser)
    assert _figure(browser, "session_stakes") == _gbp(STAKE)
    assert _figure(browser, "session_payouts") == _gbp(0)
    assert _figure(browser, "session_net") == "GBP -5.20"
    assert "playing for 1 minute" in dialog.text
    assert _cards(browser, "waste") == []  # nothing was drawn
    _snap(browser, "console-reality-check")

    dialog.find_element(By.ID, "reality-continue").click()
    _wait(browser, ec.invisibility_of_element(dialog))
    state = http.get(f"/v1/players/{player_id}/reality-check", token).get_json()
    assert state == {"due": False, "reality_check": None}
    # Play goes on until the next check.
    stock = "//*[contains(@class, 'board')]//*[@data-pile='stock']"
    _act(browser, lambda: _click(browser, stock), lambda: len(_cards(browser, "waste")) == 1)


def test_a_self_excluded_player_is_refused_a_deal(browser: webdriver.Chrome, live: Live) -> None:
    http = live.http
    player_id, token = _player(live)
    _sign_in(browser, live, token)
    _open(browser, "safer")
    _wait(browser, ec.presence_of_element_located((By.ID, "self-exclusion")))
    browser.find_element(
        By.CSS_SELECTOR, "#self-exclusion-length option[value='six-months']"
    ).click()
    browser.find_element(By.CSS_SELECTOR, "#self-exclusion button[type=submit]").click()
    # Not without saying it is understood that it cannot be ended early.
    assert browser.find_element(By.ID, "exclusion-state").get_attribute("data-kind") == "none"
    browser.find_element(By.ID, "self-exclusion-sure").click()
    browser.find_element(By.CSS_SELECTOR, "#self-exclusion button[type=submit]").click()
    _wait(
        browser,
        lambda b: _quietly(
            lambda: (
                b.find_element(By.ID, "exclusion-state").get_attribute("data-kind")
                == "self-exclusion"
            )
        ),
    )
    assert "Self-excluded until" in browser.find_element(By.ID, "exclusion-state").text
    # A time-out now would shorten it: it changes nothing.
    before = browser.find_element(By.ID, "exclusion-state")
    browser.find_element(By.CSS_SELECTOR, "#time-out button[type=submit]").click()
    _wait(browser, ec.staleness_of(before))
    state = _wait(browser, lambda b: b.find_element(By.ID, "exclusion-state"))
    assert state.get_attribute("data-kind") == "self-exclusion"

    _open(browser, "table")
    _deal_from_the_lobby(browser)
    assert "the player is in a self-exclusion until" in _problem(browser)
    wallet = http.get(f"/v1/players/{player_id}/wallet", token).get_json()
    assert (wallet["balance"], wallet["held"], wallet["open_game_id"]) == (10_400, 0, None)
    assert not browser.find_elements(By.CSS_SELECTOR, "section[data-game]")


def _switch_row(browser: webdriver.Chrome, game: str) -> WebElement:
    return browser.find_element(By.CSS_SELECTOR, f"tr[data-game='{game}']")


def _switch_state(browser: webdriver.Chrome, target: str) -> str:
    """The state (on, off) the Controls page lists for a switch's target."""
    row = browser.find_element(By.CSS_SELECTOR, f"#switches tr[data-target='{target}']")
    return str(row.find_element(By.CSS_SELECTOR, "td:nth-child(3)").text)


def _switch(browser: webdriver.Chrome, game: str, player_id: str, reason: str, on: bool) -> None:
    """On the Controls page, switch a game and then a player off or on, giving ``reason`` each
    time (the page is drawn anew after each switch)."""
    word = "on" if on else "off"
    _wait(browser, ec.element_to_be_clickable((By.ID, "switch-reason"))).send_keys(reason)
    _switch_row(browser, game).find_element(By.XPATH, ".//button").click()
    _wait(browser, lambda b: _quietly(lambda: _switch_state(b, game) == word))
    _wait(browser, ec.element_to_be_clickable((By.ID, "switch-reason"))).send_keys(reason)
    browser.find_element(By.ID, "switch-player").send_keys(player_id)
    browser.find_element(By.ID, f"switch-player-{word}").click()
    _wait(browser, lambda b: _quietly(lambda: _switch_state(b, player_id) == word))


def test_an_operator_switches_a_game_and_a_player_off_and_on(
    browser: webdriver.Chrome, live: Live
) -> None:
    http = live.http
    game = "golf"
    player_id, token = _player(live)
    try:
        _sign_in(browser, live, http.operator_key)
        _open(browser, "controls")
        _switch(browser, game, player_id, "a fault at the golf table", on=False)
        assert _switch_row(browser, game).get_attribute("data-enabled") == "false"
        listed = browser.find_element(By.CSS_SELECTOR, f"#switches tr[data-target='{game}']")
        assert "a fault at the golf table" in listed.text
        _snap(browser, "console-controls")
        # Staff see each price and whether strong play beats the house there: the seeds'
        # Vegas draw three at M = 5 does, Golf does not.
        prices = browser.find_element(By.ID, "prices")
        draw3 = prices.find_element(By.CSS_SELECTOR, "tr[data-variant='vegas-draw3']")
        assert draw3.get_attribute("data-beats-the-house") == "true"
        assert "strong play beats the house" in draw3.text
        golf = prices.find_element(By.CSS_SELECTOR, "tr[data-variant='golf']")
        assert golf.get_attribute("data-beats-the-house") == "false"
        browser.find_element(By.ID, "signout").click()

        _sign_in(browser, live, token)  # the player sees the game off and is refused a deal
        tile = _wait(
            browser,
            lambda b: b.find_element(By.CSS_SELECTOR, f".game-tile[data-variant='{game}']"),
        )
        assert tile.get_attribute("data-enabled") == "false"
        assert not tile.find_element(By.XPATH, ".//button[starts-with(., 'Deal')]").is_enabled()
        _deal_from_the_lobby(browser)
        assert "gaming for this player is disabled: a fault at the golf table" in _problem(browser)
        assert http.get(f"/v1/players/{player_id}/wallet", token).get_json()["held"] == 0
        browser.find_element(By.ID, "signout").click()

        _sign_in(browser, live, http.operator_key)  # and switches both back on
        _open(browser, "controls")
        _switch(browser, game, player_id, "fixed", on=True)
        assert _switch_row(browser, game).get_attribute("data-enabled") == "true"
        variants = http.get("/v1/variants").get_json()
        assert {v["name"]: v["enabled"] for v in variants["variants"]}[game] is True
    finally:  # the switches are the whole casino's: never leave one off for the next test
        for path in (f"games/{game}", f"players/{player_id}"):
            http.put(
                f"/v1/controls/{path}",
                http.operator_key,
                json={"enabled": True, "reason": "test cleanup"},
            )
