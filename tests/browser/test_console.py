"""The console (service/console) in Debian's Chromium, against the app over real HTTP: a player
plays a certification deal by clicking, undoes, collects and sees the books move; an auditor
steps a replay back and forth with every check passing; finance sees the charts and downloads
the CSV; a player cannot open another player's replay."""

from __future__ import annotations

import csv
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser.conftest import Live
from tests.builders import easy_deck

WAIT = 15.0
#: A folder to save the README's walkthrough screenshots in (unset: none are taken).
SCREENSHOTS = os.environ.get("CONSOLE_SCREENSHOTS")


def _snap(browser: webdriver.Chrome, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(SCREENSHOTS) / f"{name}.png"))


def _wait(browser: webdriver.Chrome, condition: Callable[[Any], Any]) -> Any:
    return WebDriverWait(browser, WAIT).until(condition)


def _player(live: Live, funds: int = 10_400) -> tuple[str, str]:
    """A player opened, funded and given a session by the operator: (id, token)."""
    http = live.http
    opened = http.post(
        "/v1/players",
        http.operator_key,
        json={"external_ref": f"browser-{uuid.uuid4()}", "currency": "GBP"},
    )
    player_id = opened.get_json()["id"]
    paid = http.post(
        f"/v1/players/{player_id}/deposits",
        http.operator_key,
        json={"amount": funds, "transaction_id": f"browser-{uuid.uuid4()}"},
    )
    assert paid.status_code == 201, paid.get_json()
    token = http.post(f"/v1/players/{player_id}/sessions", http.operator_key).get_json()["token"]
    return player_id, token


def _certification_deal(live: Live, player_id: str, stake: int = 520) -> str:
    http = live.http
    dealt = http.post(
        "/v1/games",
        http.operator_key,
        json={
            "variant": "vegas-draw1",
            "stake": stake,
            "player_id": player_id,
            "deck": list(easy_deck()),
        },
    )
    assert dealt.status_code == 201, dealt.get_json()
    return str(dealt.get_json()["id"])


def _sign_in(browser: webdriver.Chrome, live: Live, secret: str) -> None:
    browser.get(f"{live.url}/console/")
    field = _wait(browser, ec.element_to_be_clickable((By.ID, "token")))
    field.send_keys(secret)
    browser.find_element(By.CSS_SELECTOR, "form.signin button[type=submit]").click()
    _wait(browser, ec.visibility_of_element_located((By.ID, "signout")))
    assert secret not in browser.current_url


def _gbp(amount: int) -> str:
    """An amount as the console shows it."""
    return f"GBP {amount // 100}.{amount % 100:02d}"


def _figure(browser: webdriver.Chrome, name: str) -> str:
    return str(browser.find_element(By.CSS_SELECTOR, f"[data-figure='{name}']").text)


def _pile(browser: webdriver.Chrome, pile: str) -> WebElement:
    return browser.find_element(By.CSS_SELECTOR, f".board [data-pile='{pile}']")


def _cards(browser: webdriver.Chrome, pile: str) -> list[str]:
    return [
        str(c.get_attribute("data-card"))
        for c in _pile(browser, pile).find_elements(By.CSS_SELECTOR, ".card[data-card]")
    ]


def _act(browser: webdriver.Chrome, click: Callable[[], None], changed: Callable[[], bool]) -> None:
    click()
    _wait(browser, lambda _: _quietly(changed))


def _click(browser: webdriver.Chrome, xpath: str) -> None:
    """Click what ``xpath`` finds, once it is there (again, if the page was drawn anew)."""

    def clicked() -> bool:
        browser.find_element(By.XPATH, xpath).click()
        return True

    _wait(browser, lambda _: _quietly(clicked))


def _quietly(check: Callable[[], bool]) -> bool:
    try:
        return check()
    except Exception:  # the board is being redrawn: ask again
        return False


def _draw(browser: webdriver.Chrome) -> None:
    """Click the stock; the waste holds one card more."""
    before = len(_cards(browser, "waste"))

    def drawn() -> bool:
        return len(_cards(browser, "waste")) == before + 1

    _act(browser, _pile(browser, "stock").click, drawn)


def _play_waste_card(browser: webdriver.Chrome) -> None:
    """Click the waste's card, then the first pile lit as a place it may go."""
    card = _cards(browser, "waste")[-1]
    _pile(browser, "waste").find_element(By.CSS_SELECTOR, f"[data-card='{card}']").click()
    lit = _wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".pile.target"))
    where = str(lit[0].get_attribute("data-pile"))

    def landed() -> bool:
        return card in _cards(browser, where)

    _act(browser, _pile(browser, where).click, landed)


def test_a_player_plays_undoes_and_collects_by_clicking(
    browser: webdriver.Chrome, live: Live
) -> None:
    player_id, token = _player(live)
    game_id = _certification_deal(live, player_id)
    _sign_in(browser, live, token)
    _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, f"[data-game='{game_id}']")))
    assert _figure(browser, "stake") == "XTS 5.20"
    assert _figure(browser, "sandbox") == "XTS -5.20"
    assert _figure(browser, "balance") == "GBP 104.00"
    # Every card is a button with a text label; face-down cards are labelled as such.
    assert browser.find_elements(By.CSS_SELECTOR, ".card[aria-label='face-down card']")

    # Draw by clicking the stock: the waste shows the card drawn.
    _act(
        browser, lambda: _pile(browser, "stock").click(), lambda: len(_cards(browser, "waste")) == 1
    )
    drawn = _cards(browser, "waste")[0]
    # Click the card, then where it goes: the foundations light up as the places it may go.
    _pile(browser, "waste").find_element(By.CSS_SELECTOR, f"[data-card='{drawn}']").click()
    targets = _wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".pile.target"))
    target = str(targets[0].get_attribute("data-pile"))
    _act(
        browser, lambda: _pile(browser, target).click(), lambda: _cards(browser, target) == [drawn]
    )
    assert _figure(browser, "units") == "1 / 52"

    # Undo puts it back on the waste.
    undo = browser.find_element(By.XPATH, "//button[normalize-space()='Undo']")
    _act(browser, undo.click, lambda: _cards(browser, "waste") == [drawn])
    assert _figure(browser, "units") == "0 / 52"

    # Three more cards up, each by clicking the waste's card and then the first lit pile.
    for n in range(3):
        if n:
            _draw(browser)
        _play_waste_card(browser)
    assert _figure(browser, "units") == "3 / 52"
    _snap(browser, "console-table")

    # The player's preferences: another card back and felt, kept by the server.
    Select(browser.find_element(By.ID, "card-back")).select_by_value("7")
    Select(browser.find_element(By.ID, "colour")).select_by_value("blue")
    browser.find_element(By.CSS_SELECTOR, "#preferences button[type=submit]").click()
    _wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".board.blue .card.back-7"))
    saved = live.http.get(f"/v1/players/{player_id}/preferences", token).get_json()
    assert (saved["card_back"], saved["colour"]) == (7, "blue")

    # End the game and collect: Vegas pays 5 x the stake for 52 cards, so 0.50 a card here.
    browser.find_element(By.XPATH, "//button[normalize-space()='End game and collect']").click()
    _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "[data-status='collected']")))
    result = browser.find_element(By.CSS_SELECTOR, ".result").text
    assert "paid XTS 1.50" in result, result
    assert _figure(browser, "sandbox") == "XTS -3.70"
    assert _figure(browser, "balance") == "GBP 104.00"  # certification money never touches it
    row = _wait(
        browser,
        ec.presence_of_element_located((By.CSS_SELECTOR, f"#history tr[data-game='{game_id}']")),
    )
    assert "collected" in row.text
    assert "XTS 1.50" in row.text


def _finished_game(live: Live) -> tuple[str, str, str]:
    """A certification game played a little and collected through the API: (player, token,
    game)."""
    player_id, token = _player(live)
    game_id = _certification_deal(live, player_id)
    http = live.http
    for body in ({"action": "draw"}, {"action": "move", "from": "waste", "to": "foundation"}):
        done = http.post(f"/v1/games/{game_id}/actions", token, json=body)
        assert done.status_code == 200, done.get_json()
    collected = http.post(f"/v1/games/{game_id}/collect", token)
    assert collected.status_code == 200, collected.get_json()
    return player_id, token, game_id


def test_an_auditor_steps_through_a_replay_and_sees_every_check_pass(
    browser: webdriver.Chrome, live: Live
) -> None:
    _, _, game_id = _finished_game(live)
    _sign_in(browser, live, live.http.auditor_key)
    browser.get(f"{live.url}/console/#/replay/{game_id}")
    panel = _wait(
        browser, ec.presence_of_element_located((By.CSS_SELECTOR, f"[data-replay='{game_id}']"))
    )
    assert "REPLAY" in browser.find_element(By.CSS_SELECTOR, ".replay-label").text.upper()
    last = int(panel.find_element(By.CSS_SELECTOR, "[data-step]").get_attribute("data-step") or 0)
    assert last >= 4

    def step() -> int:
        shown = browser.find_element(By.CSS_SELECTOR, "[data-step]")
        return int(shown.get_attribute("data-step") or 0)

    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Step back']").click()
    _wait(browser, lambda _: _quietly(lambda: step() == last - 1))
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Step back']").click()
    _wait(browser, lambda _: _quietly(lambda: step() == last - 2))
    assert browser.find_elements(By.CSS_SELECTOR, ".board")  # the board at that step
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Step forward']").click()
    _wait(browser, lambda _: _quietly(lambda: step() == last - 1))
    checks = {
        str(c.get_attribute("data-check")): str(c.get_attribute("class"))
        for c in browser.find_elements(By.CSS_SELECTOR, "#verification [data-check]")
    }
    assert checks
    assert set(checks.values()) == {"pass"}, checks
    assert "every check passed" in browser.find_element(By.CSS_SELECTOR, "#verification h3").text
    seed = browser.find_element(By.CSS_SELECTOR, "[data-seed='server']").text
    assert "not yet revealed" not in seed
    _snap(browser, "console-replay")


def test_a_player_cannot_open_another_players_replay(browser: webdriver.Chrome, live: Live) -> None:
    _, _, game_id = _finished_game(live)
    _, token = _player(live)
    _sign_in(browser, live, token)
    browser.get(f"{live.url}/console/#/replay/{game_id}")
    problem = _wait(browser, ec.visibility_of_element_located((By.ID, "problem")))
    assert f"no game {game_id}" in problem.text
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-replay]")


def test_finance_sees_the_charts_and_downloads_the_csv(
    browser: webdriver.Chrome, live: Live, downloads: Path
) -> None:
    _finished_game(live)  # at least one game in the period
    _sign_in(browser, live, live.http.finance_key)
    _wait(browser, ec.presence_of_element_located((By.ID, "chart-money")))
    for chart in ("chart-money", "chart-rtp"):
        image = browser.find_element(By.ID, chart)
        _wait(browser, lambda _, image=image: image.get_property("naturalWidth"))  # type: ignore[misc]
        assert str(image.get_attribute("src")).startswith("blob:")
    # The certification game is in the sandbox's report.
    from_select = browser.find_element(By.ID, "currency")
    from_select.find_element(By.CSS_SELECTOR, "option[value='XTS']").click()
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    _wait(browser, lambda b: "sandbox" in b.find_element(By.CSS_SELECTOR, "#finance-main h2").text)
    assert _figure(browser, "stakes") != "XTS 0.00"
    _snap(browser, "console-finance")
    browser.find_element(By.ID, "csv").click()
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and not list(downloads.glob("*.csv")):
        time.sleep(0.2)
    files = list(downloads.glob("*.csv"))
    assert files, "no CSV downloaded"
    rows = list(csv.reader(files[0].open()))
    assert rows[0][:3] == ["day", "variant", "currency"]
    assert any(row[2] == "XTS" for row in rows[1:])


def test_a_player_joins_plays_against_the_clock_and_sees_the_duel_settle(
    browser: webdriver.Chrome, live: Live
) -> None:
    """Four seats (no other test opens a four-seat real-money duel): the console's player joins
    and plays; three others join, deal and stop through the API."""
    http = live.http
    fee = http.get("/v1/duels/paytables").get_json()
    gbp = next(t for t in fee if t["currency"] == "GBP")
    first_fee = gbp["fees"][0]
    player_id, token = _player(live)
    _sign_in(browser, live, token)
    browser.get(f"{live.url}/console/#/duels")
    seats = _wait(browser, ec.element_to_be_clickable((By.ID, "seats")))
    seats.clear()
    seats.send_keys("4")
    browser.find_element(By.ID, "join").click()
    panel = _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "[data-duel]")))
    duel_id = str(panel.get_attribute("data-duel"))
    others = [_player(live) for _ in range(3)]
    for _, other in others:
        joined = http.post("/v1/duels", other, json={"fee": first_fee, "seats": 4})
        assert joined.status_code in (200, 201), joined.get_json()
        assert joined.get_json()["id"] == duel_id

    # Full: the console's player deals; the clock shows the time left and counts down.
    deal = _wait(browser, ec.element_to_be_clickable((By.ID, "duel-deal")))
    deal.click()
    _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "[data-duel] .board")))
    left = browser.find_element(By.CSS_SELECTOR, "[data-figure='time_left']").text
    minutes, seconds = left.split(":")
    assert 180 < int(minutes) * 60 + int(seconds) <= 300, left  # five minutes, counting down
    _act(
        browser,
        _pile(browser, "stock").click,
        lambda: len(_cards(browser, "waste")) > 0,
    )
    _snap(browser, "console-duel")
    browser.find_element(By.ID, "duel-stop").click()
    for _, other in others:
        assert http.post(f"/v1/duels/{duel_id}/deal", other).status_code == 200
        stopped = http.post(f"/v1/duels/{duel_id}/actions", other, json={"action": "collect"})
        assert stopped.status_code == 200, stopped.get_json()
    # Settled on the next read: the console looks again every few seconds.
    result = _wait(browser, ec.presence_of_element_located((By.ID, "duel-result")))
    assert browser.find_element(By.CSS_SELECTOR, "[data-duel]").get_attribute("data-status") == (
        "settled"
    )
    assert "Server seed: not yet revealed" not in result.text
    assert len(result.find_elements(By.CSS_SELECTOR, "tbody tr")) == 4
    assert player_id in result.text


def test_every_game_deals_plays_and_replays_in_the_console(
    browser: webdriver.Chrome, live: Live
) -> None:
    """For every game the lobby offers: deal it at the lowest stake, see its piles drawn, play
    its first legal move from the list of moves (the keyboard's way), end it and collect; then
    the player's own replay of it verifies."""
    variants = live.http.get("/v1/variants").get_json()["variants"]
    player_id, token = _player(live, funds=100_000)
    _sign_in(browser, live, token)
    for variant in variants:
        browser.get(f"{live.url}/console/#/table/lobby")
        tile = f".game-tile[data-variant='{variant['name']}']"
        _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, tile)))
        # The lobby marks a game whose strong play may return more than the stake (and no other).
        marked = browser.find_elements(By.CSS_SELECTOR, f"{tile} .beats-the-house")
        assert bool(marked) == variant["rtp"]["beats_the_house"], variant["name"]
        _click(
            browser,
            f"//*[@data-variant='{variant['name']}']"
            f"//button[normalize-space()='Deal {variant['title']}']",
        )
        dealt = "section[data-game][data-status='in_progress']"
        panel = _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, dealt)))
        piles = browser.find_elements(By.CSS_SELECTOR, ".board [data-pile]")
        assert len(piles) == len(variant["piles"]), variant["name"]
        version = panel.get_attribute("data-version")
        moves = browser.find_elements(By.CSS_SELECTOR, ".moves button")
        assert moves, f"{variant['name']}: no legal move listed"
        moves[0].send_keys(Keys.ENTER)  # keyboard play: a focused move, then Enter

        def moved(version: str | None = version) -> bool:
            shown = browser.find_element(By.CSS_SELECTOR, "section[data-game]")
            return shown.get_attribute("data-version") != version

        _wait(browser, lambda _, moved=moved: _quietly(moved))  # type: ignore[misc]
        _click(browser, "//button[normalize-space()='End game and collect']")
        over = _wait(
            browser, ec.presence_of_element_located((By.CSS_SELECTOR, "[data-status='collected']"))
        )
        game_id = str(over.get_attribute("data-game"))
        browser.get(f"{live.url}/console/#/replay/{game_id}")
        _wait(
            browser, ec.presence_of_element_located((By.CSS_SELECTOR, f"[data-replay='{game_id}']"))
        )
        assert (
            "every check passed" in browser.find_element(By.CSS_SELECTOR, "#verification h3").text
        ), variant["name"]
    assert player_id


def test_a_pyramid_pair_is_removed_by_clicking_one_card_then_the_other(
    browser: webdriver.Chrome, live: Live
) -> None:
    http = live.http
    player_id, token = _player(live)
    for n in range(50):  # certification deals from known seeds, until one opens on a pair
        body = {
            "variant": "pyramid",
            "stake": 520,
            "player_id": player_id,
            "seed": f"{n + 1:064x}",
        }
        view = http.post("/v1/games", http.operator_key, json=body).get_json()
        pairs = [m for m in view["legal_moves"] if m["action"] == "remove" and len(m["piles"]) == 2]
        if pairs:
            break
        http.post(f"/v1/games/{view['id']}/collect", token)
    else:
        raise AssertionError("no pyramid deal of the first 50 seeds opens on a pair")
    first, second = pairs[0]["piles"]
    _sign_in(browser, live, token)
    _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, f"[data-game='{view['id']}']")))
    shown = {pile: _cards(browser, pile)[-1] for pile in (first, second)}
    _pile(browser, first).find_element(By.CSS_SELECTOR, f"[data-card='{shown[first]}']").click()
    _wait(
        browser, lambda b: b.find_elements(By.CSS_SELECTOR, f".pile.target[data-pile='{second}']")
    )

    def removed() -> bool:
        return all(shown[p] not in _cards(browser, p) for p in (first, second))

    _act(browser, _pile(browser, second).click, removed)


def test_the_lobby_steps_the_stake_ladder_and_shows_what_it_pays(
    browser: webdriver.Chrome, live: Live
) -> None:
    """Seed 000: the default stake (GBP 5.20), + and - step the ladder, the win rate and the
    most a game can win are shown for the stake chosen, and Deal pays that stake."""
    http = live.http
    quote = http.get("/v1/quote?variant=vegas-draw3&stake=520&currency=GBP").get_json()
    up = http.get(
        f"/v1/quote?variant=vegas-draw3&stake={quote['next_stake']}&currency=GBP"
    ).get_json()
    player_id, token = _player(live, funds=100_000)
    _sign_in(browser, live, token)
    tile = "//*[@data-variant='vegas-draw3']"
    stake = f"{tile}//output[@data-stake]"

    def showing(amount: int) -> Callable[[Any], bool]:
        def shown(b: Any) -> bool:
            return bool(b.find_element(By.XPATH, stake).get_attribute("data-stake") == str(amount))

        return lambda b: _quietly(lambda: shown(b))

    _wait(browser, showing(520))
    offer = browser.find_element(By.XPATH, f"{tile}//p[@class='offer']").text
    rate, most = _gbp(quote["win_rate"]), _gbp(quote["max_payout"])
    assert offer == f"Win rate {rate} for each of the cards on the foundations; at most {most}."
    _click(browser, f"{tile}//button[contains(@aria-label, 'Raise the stake')]")
    _wait(browser, showing(up["stake"]))
    _click(browser, f"{tile}//button[contains(@aria-label, 'Lower the stake')]")
    _wait(browser, showing(520))
    _click(browser, f"{tile}//button[contains(@aria-label, 'Raise the stake')]")
    _wait(browser, showing(up["stake"]))
    _click(browser, f"{tile}//button[starts-with(normalize-space(), 'Deal')]")
    _wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "section[data-game]")))
    assert _figure(browser, "stake") == _gbp(up["stake"])
    wallet = http.get(f"/v1/players/{player_id}/wallet", token).get_json()
    assert wallet["held"] == up["stake"]
    # Draw three: the waste's card can be played or not, and the arrow says which.
    _act(browser, _pile(browser, "stock").click, lambda: len(_cards(browser, "waste")) > 0)
    view = http.get(f"/v1/games/{wallet['open_game_id']}", token).get_json()
    arrows = _pile(browser, "waste").find_elements(By.CSS_SELECTOR, ".arrow")
    assert bool(arrows) == view["waste_playable"]
