// The console: a client of the public API only (openapi.yaml), in plain JavaScript.
// The bearer token lives in sessionStorage and travels only in the Authorization header.

const TOKEN = "vegas.token";
const app = document.getElementById("app");
const problemBox = document.getElementById("problem");
let me = null; // GET /v1/whoami

// --- talking to the API -----------------------------------------------------------------------

class ApiProblem extends Error {
  constructor(status, body) {
    super(body && (body.detail || body.title) ? (body.detail || body.title) : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body, { accept = "application/json", idempotent = false } = {}) {
  const headers = { Accept: accept };
  const token = sessionStorage.getItem(TOKEN);
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (idempotent) headers["Idempotency-Key"] = crypto.randomUUID();
  const response = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    let problem = null;
    try { problem = await response.json(); } catch { /* not problem+json */ }
    throw new ApiProblem(response.status, problem);
  }
  if (accept !== "application/json") return response.blob();
  return response.status === 204 ? null : response.json();
}

function showProblem(error) {
  problemBox.textContent = error instanceof ApiProblem ? error.message : String(error);
  problemBox.hidden = false;
}

function clearProblem() {
  problemBox.hidden = true;
  problemBox.textContent = "";
}

// Run an action; any problem the API answers is shown as the message it carries (and a reality
// check that paused play, as the check itself).
async function attempt(work) {
  clearProblem();
  try {
    return await work();
  } catch (error) {
    showProblem(error);
    if (error instanceof ApiProblem && error.body && error.body.type === "/problems/reality-check-due") {
      showRealityCheck(error.body.reality_check);
    }
    return undefined;
  }
}

// --- small DOM helpers --------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function money(amount, currency) {
  if (amount === null || amount === undefined) return "–";
  const sign = amount < 0 ? "-" : "";
  const abs = Math.abs(amount);
  return `${currency || ""} ${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`.trim();
}

function figures(pairs) {
  return el("dl", { class: "figures" },
    pairs.map(([name, value, id]) => el("div", {}, el("dt", { text: name }),
      el("dd", { text: String(value), "data-figure": id || name }))));
}

// --- cards --------------------------------------------------------------------------------------

const RANKS = { A: "Ace", T: "10", J: "Jack", Q: "Queen", K: "King" };
const SUITS = { S: ["♠", "spades", false], H: ["♥", "hearts", true], D: ["♦", "diamonds", true], C: ["♣", "clubs", false] };

function cardName(code) {
  const [rank, suit] = [code.slice(0, -1), code.slice(-1)];
  return `${RANKS[rank] || rank} of ${SUITS[suit][1]}`;
}

function cardFace(code, attrs = {}) {
  const [rank, suit] = [code.slice(0, -1), code.slice(-1)];
  const [symbol, , red] = SUITS[suit];
  return el("button", {
    type: "button", class: `card${red ? " red" : ""}`, "aria-label": cardName(code),
    "data-card": code, ...attrs,
  }, `${rank === "T" ? "10" : rank}${symbol}`);
}

function cardBack(back, known) {
  // A face-down card; a replay of an ended game may know it (shown dimmed, labelled).
  return known
    ? el("button", { type: "button", class: `card back known back-${back}`, "aria-label": `face-down ${cardName(known)}`, tabindex: "-1" }, known)
    : el("button", { type: "button", class: `card back back-${back}`, "aria-label": "face-down card", tabindex: "-1" });
}

// --- the board, drawn from the generic view ------------------------------------------------------

const TOP_KINDS = ["stock", "waste", "discard", "foundation", "flank"];

function pileLabel(pile) {
  return pile.id.replace(":", " ");
}

// Draw ``view.piles``: stock, waste and foundations on top, columns (fanned) below, a pyramid
// as a triangle. ``handlers.card(pile, index)`` and ``handlers.pile(pile)`` get clicks.
function drawBoard(view, prefs, handlers = null, marks = {}) {
  const back = prefs.card_back || 1;
  const board = el("section", { class: `board ${prefs.colour || "green"}`, "aria-label": "The table" });
  const piles = view.piles || [];
  const pileNode = (pile, layout) => {
    const node = el("div", {
      class: `pile ${layout}${marks.targets && marks.targets.has(pile.id) ? " target" : ""}`,
      "data-pile": pile.id, role: "group", "aria-label": `${pileLabel(pile)}, ${pile.count} cards`,
    }, el("span", { class: "name", text: pileLabel(pile), "aria-hidden": "true" }));
    const known = pile.face_down_cards || [];
    const downShown = layout === "fanned" ? pile.face_down : Math.min(pile.face_down, pile.cards.length ? 0 : 1);
    for (let i = 0; i < downShown; i += 1) node.append(cardBack(back, known[i]));
    if (marks.arrow === pile.id) {
      // Seed 000: an arrow above the play deck's card when it can be played.
      node.append(el("span", { class: "arrow", role: "img", "aria-label": "this card can be played", text: "▼" }));
    }
    pile.cards.forEach((code, index) => {
      const face = cardFace(code);
      if (marks.playable && marks.playable.has(pile.id) && index === pile.cards.length - 1) face.classList.add("playable");
      if (marks.selected && marks.selected.pile === pile.id && index >= marks.selected.index) face.classList.add("selected");
      if (handlers) face.addEventListener("click", (event) => { event.stopPropagation(); handlers.card(pile, index); });
      else face.tabIndex = -1;
      node.append(face);
    });
    if (layout !== "fanned" && pile.count > pile.cards.length) {
      node.append(el("span", { class: "count", text: `${pile.count}` }));
    }
    if (handlers) {
      node.tabIndex = 0;
      node.addEventListener("click", () => handlers.pile(pile));
      node.addEventListener("keydown", (event) => {
        if (event.target === node && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); handlers.pile(pile); }
      });
    }
    return node;
  };
  const top = el("div", { class: "row" });
  const columns = el("div", { class: "row" });
  const pyramid = piles.filter((p) => p.kind === "pyramid");
  for (const pile of piles) {
    if (pile.kind === "pyramid") continue;
    if (TOP_KINDS.includes(pile.kind)) top.append(pileNode(pile, pile.kind === "waste" ? "spread" : "stacked"));
    else columns.append(pileNode(pile, "fanned"));
  }
  board.append(top);
  if (pyramid.length) {
    const triangle = el("div", { class: "pyramid" });
    let start = 0;
    for (let size = 1; start < pyramid.length; size += 1) {
      triangle.append(el("div", { class: "prow" }, pyramid.slice(start, start + size).map((p) => pileNode(p, "stacked"))));
      start += size;
    }
    board.append(triangle);
  }
  if (columns.childElementCount) board.append(columns);
  return board;
}

function describeMove(move) {
  switch (move.action) {
    case "move": return `Move ${move.count > 1 ? `${move.count} cards` : "a card"} from ${move.from} to ${move.to}`;
    case "turn": return `Turn the top card of ${move.pile}`;
    case "remove": return `Remove ${move.piles.join(" + ")}`;
    case "pick": return `Draw ${cardName(move.card)} from ${move.from} to ${move.to}`;
    case "collect": return "End game and collect";
    default: return move.action.charAt(0).toUpperCase() + move.action.slice(1);
  }
}

// --- sign in --------------------------------------------------------------------------------------

function signIn() {
  const input = el("input", { id: "token", type: "password", autocomplete: "off", required: true });
  const form = el("form", { class: "panel signin" },
    el("h1", { text: "Sign in" }),
    el("p", { text: "Paste a player session token (an operator mints it: POST /v1/players/{id}/sessions) or a staff API key (flask --app service keys create). It is kept in this tab's session storage only." }),
    el("label", { for: "token", text: "Session token or API key" }), input,
    el("p", {}, el("button", { type: "submit", text: "Sign in" })));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN, input.value.trim());
    const who = await attempt(() => api("GET", "/v1/whoami"));
    if (!who) { sessionStorage.removeItem(TOKEN); return; }
    me = who;
    showIdentity();
    go(home());
  });
  app.replaceChildren(form);
  input.focus();
}

// Show ``hash``: a new hash is routed by the hashchange listener, the same one here.
function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function home() {
  return { player: "#/table", finance: "#/finance" }[me.role] || "#/replay";
}

function showIdentity() {
  document.getElementById("who").textContent = me ? `${me.role} ${me.player_id || me.actor}` : "";
  document.getElementById("signout").hidden = !me;
  const nav = document.getElementById("nav");
  nav.hidden = !me;
  for (const link of nav.querySelectorAll("a")) link.hidden = !me || !link.dataset.role.split(" ").includes(me.role);
}

async function signOut() {
  if (me && me.role === "player") await attempt(() => api("DELETE", `/v1/players/${me.player_id}/sessions/current`));
  sessionStorage.removeItem(TOKEN);
  me = null;
  showIdentity();
  go("#/signin");
}

document.getElementById("signout").addEventListener("click", signOut);

// --- the table (players) ------------------------------------------------------------------------

const table = { prefs: {}, view: null, selected: null, variants: null, quotes: {} };

async function tablePage(gameId) {
  const since = navigation;
  const [wallet, prefs, variants] = await Promise.all([
    api("GET", `/v1/players/${me.player_id}/wallet`),
    api("GET", `/v1/players/${me.player_id}/preferences`),
    api("GET", "/v1/variants"), // afresh: an operator may have switched a game off or on
  ]);
  if (left(since)) return;
  table.prefs = prefs;
  table.variants = variants;
  const id = gameId || wallet.open_game_id;
  const balance = el("section", { class: "panel" }, el("h1", { text: "Table" }),
    figures([
      ["Balance", money(wallet.balance, wallet.currency), "balance"],
      ["Held in play", money(wallet.held, wallet.currency), "held"],
      ["Certification (sandbox) balance", money(wallet.sandbox.balance, wallet.sandbox.currency), "sandbox"],
    ]));
  const main = el("div", { id: "table-main" });
  const history = el("section", { class: "panel", id: "history" });
  app.replaceChildren(balance, main, history, preferencesForm(prefs, gameId));
  if (id) {
    table.view = noticeRealityCheck(await api("GET", `/v1/games/${id}`));
    table.selected = null;
    renderGame(main);
  } else {
    renderLobby(main, wallet.currency);
  }
  await renderHistory(history);
}

// The player's card back (seed 000: twelve) and felt colour, kept by the server.
function preferencesForm(prefs, gameId) {
  const back = el("select", { id: "card-back" }, Array.from({ length: 12 }, (_, i) =>
    el("option", { value: String(i + 1), text: `Back ${i + 1}`, selected: prefs.card_back === i + 1 })));
  const colour = el("select", { id: "colour" }, ["green", "red", "blue"].map((c) =>
    el("option", { value: c, text: c, selected: prefs.colour === c })));
  const form = el("form", { class: "panel inline", id: "preferences" },
    el("div", {}, el("label", { for: "card-back", text: "Card back" }), back),
    el("div", {}, el("label", { for: "colour", text: "Felt" }), colour),
    el("button", { type: "submit" }, "Save preferences"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const saved = await attempt(() => api("PUT", `/v1/players/${me.player_id}/preferences`,
      { sound: prefs.sound, colour: colour.value, card_back: Number(back.value) }, { idempotent: true }));
    if (saved) await tablePage(gameId);
  });
  return form;
}

function renderLobby(main, currency) {
  const paytable = table.variants.paytables.find((t) => t.currency === currency) || table.variants.paytables[0];
  const tiles = table.variants.variants.map((game) => {
    const output = el("output", { "aria-live": "polite", "data-stake": "" });
    const offer = el("p", { class: "offer", "aria-live": "polite" });
    // The server's quote: what a card pays at this stake, the most it can win, and the stakes
    // either side on the ladder (the +/- buttons step through it).
    const show = async (stake) => {
      const quote = await attempt(() => api("GET", `/v1/quote?variant=${game.name}&stake=${stake}&currency=${paytable.currency}`));
      if (!quote) return;
      table.quotes[game.name] = quote;
      output.textContent = money(quote.stake, quote.currency);
      output.dataset.stake = String(quote.stake);
      offer.textContent = `Win rate ${money(quote.win_rate, quote.currency)} for each of the ${game.paytable.units}; at most ${money(quote.max_payout, quote.currency)}.`;
    };
    const step = (way) => () => {
      const quote = table.quotes[game.name];
      const next = quote && (way > 0 ? quote.next_stake : quote.previous_stake);
      if (next) show(next);
    };
    const deal = async () => {
      const stake = table.quotes[game.name] ? table.quotes[game.name].stake : paytable.default_stake;
      const view = await attempt(() => api("POST", "/v1/games", { variant: game.name, stake }, { idempotent: true }));
      if (view) { location.hash = `#/table/${view.id}`; }
    };
    show(table.quotes[game.name] ? table.quotes[game.name].stake : paytable.default_stake);
    const open = table.variants.gaming_enabled && game.enabled;
    return el("article", { class: `panel game-tile${open ? "" : " off"}`, "data-variant": game.name, "data-enabled": String(open) },
      el("h3", { text: game.title }),
      el("p", { class: "muted", text: game.summary.join(" ") }),
      el("p", { text: `Pays ${game.paytable.per_unit} per ${game.paytable.units}, at most ${game.paytable.max_payout}.` }),
      el("p", { text: game.rtp ? (game.rtp.strong ? `Published RTP ${(Number(game.rtp.strong.rtp) * 100).toFixed(2)}% with strong play (95%: ${game.rtp.strong.low}–${game.rtp.strong.high}; ${game.rtp.strong.player}${game.rtp.strong.budget ? `, ${game.rtp.strong.budget}` : ""}, ${game.rtp.strong.games} deals); ${(Number(game.rtp.rtp) * 100).toFixed(2)}% with ordinary careful play` : `Published RTP ${(Number(game.rtp.rtp) * 100).toFixed(2)}% with ordinary careful play (95%: ${game.rtp.low}–${game.rtp.high}); strong play not yet measured`) : "RTP not yet published", title: game.rtp ? game.rtp.basis : "" }),
      game.rtp && game.rtp.beats_the_house ? el("p", { class: "notice beats-the-house", text: "Strong play may return more than the stake at this price." }) : null,
      el("div", { class: "stake" },
        el("button", { type: "button", "aria-label": `Lower the stake of ${game.title}`, onclick: step(-1) }, "−"),
        output,
        el("button", { type: "button", "aria-label": `Raise the stake of ${game.title}`, onclick: step(1) }, "+")),
      offer,
      open ? null : el("p", { class: "notice", text: "Not available now: switched off by the casino." }),
      el("button", { type: "button", onclick: deal, disabled: !open }, `Deal ${game.title}`));
  });
  main.replaceChildren(el("section", { class: "panel" }, el("h2", { text: "Lobby" }),
    table.variants.gaming_enabled ? null : el("p", { class: "notice", id: "gaming-off", text: "Gaming is switched off by the casino for now; your balance and withdrawals are not affected." }),
    el("div", { class: "games" }, tiles)));
}

async function play(move) {
  const view = noticeRealityCheck(await attempt(() => api("POST", `/v1/games/${table.view.id}/actions`, move, { idempotent: true })));
  if (view) {
    table.view = view;
    table.selected = null;
    // Money moves only when a game ends: until then only the game is drawn again.
    if (isOver(view)) await tablePage(view.id);
    else redraw();
  }
}

function isOver(view) {
  return !["in_progress", "complete", "new"].includes(view.status);
}

// Clicking a card and then where it goes, for any game: ``ctl`` holds the view being played,
// what is selected, how a move is performed and how the board is drawn again.
function movesFrom(view, pileId, index, pile) {
  const count = pile.cards.length - index;
  const card = pile.cards[index];
  return view.legal_moves.filter((m) =>
    (m.action === "move" && m.from === pileId && (m.count === undefined || m.count === count)) ||
    (m.action === "pick" && m.from === pileId && m.card === card) ||
    (m.action === "remove" && m.piles.includes(pileId) && index === pile.cards.length - 1));
}

function clicks(ctl) {
  const onPile = (pile) => {
    const legal = ctl.view.legal_moves;
    const selected = ctl.selected;
    if (selected) {
      const move = selected.options.find((m) =>
        (m.to === pile.id) || (m.action === "remove" && m.piles.length === 2 && m.piles.includes(pile.id) && pile.id !== selected.pile));
      ctl.selected = null;
      if (move) return ctl.perform(move);
      return ctl.redraw();
    }
    if (pile.kind === "stock") {
      const action = legal.find((m) => m.action === "draw") || legal.find((m) => m.action === "recycle") || legal.find((m) => m.action === "redeal");
      if (action) return ctl.perform(action);
    }
    const turn = legal.find((m) => m.action === "turn" && m.pile === pile.id);
    if (turn) return ctl.perform(turn);
    return undefined;
  };
  const onCard = (pile, index) => {
    if (ctl.selected && ctl.selected.pile !== pile.id) return onPile(pile);
    const options = movesFrom(ctl.view, pile.id, index, pile);
    // The stock's card (Pyramid shows it) is played when it can be; else a click draws.
    if (pile.kind === "stock" && !options.length) return onPile(pile);
    const alone = options.filter((m) => m.action === "remove" && m.piles.length === 1);
    if (alone.length && options.length === 1) return ctl.perform(alone[0]);
    if (!options.length) {
      const turn = ctl.view.legal_moves.find((m) => m.action === "turn" && m.pile === pile.id);
      if (turn) return ctl.perform(turn);
      showProblem(`Nothing can be done with ${cardName(pile.cards[index])} now.`);
      return undefined;
    }
    ctl.selected = { pile: pile.id, index, options };
    return ctl.redraw();
  };
  return { card: onCard, pile: onPile };
}

function targetsOf(selected) {
  const targets = new Set();
  if (selected) {
    for (const m of selected.options) {
      if (m.to) targets.add(m.to);
      if (m.action === "remove") m.piles.forEach((p) => p !== selected.pile && targets.add(p));
    }
  }
  return targets;
}

function redraw() {
  const main = document.getElementById("table-main");
  if (main) renderGame(main);
}

table.perform = (move) => play(move);
table.redraw = () => redraw();

function renderGame(main) {
  const view = table.view;
  const over = isOver(view);
  const targets = targetsOf(table.selected);
  const handlers = over ? null : clicks(table);
  const playable = new Set(over ? [] : view.legal_moves.flatMap((m) => m.piles || (m.from ? [m.from] : [])));
  const arrow = view.waste_playable && !over ? (view.piles || []).find((p) => p.kind === "waste")?.id : null;
  const counters = Object.entries(view.counters || {}).filter(([, v]) => v !== null)
    .map(([name, value]) => [name.replace("_", " "), value, name]);
  const buttons = over ? [] : view.legal_moves.filter((m) => ["draw", "recycle", "redeal"].includes(m.action))
    .map((m) => el("button", { type: "button", onclick: () => play(m) }, describeMove(m)));
  if (!over && view.can_undo) buttons.push(el("button", { type: "button", onclick: () => play({ action: "undo" }) }, "Undo"));
  if (!over) {
    buttons.push(el("button", {
      type: "button", class: "collect",
      onclick: async () => {
        const done = noticeRealityCheck(await attempt(() => api("POST", `/v1/games/${view.id}/collect`, undefined, { idempotent: true })));
        if (done) { table.view = done; await tablePage(done.id); }
      },
    }, "End game and collect"));
  }
  const moves = over ? [] : view.legal_moves.filter((m) => m.action !== "collect")
    .map((m) => el("button", { type: "button", "data-move": m.action, onclick: () => play(m) }, describeMove(m)));
  main.replaceChildren(el("section", { class: "panel", "data-game": view.id, "data-status": view.status, "data-version": String(view.version) },
    el("h2", { text: `${view.title}${view.certification ? " (certification)" : ""}` }),
    figures([
      ["Stake", money(view.stake, view.currency), "stake"],
      ["Win rate (each unit)", money(view.win_rate, view.currency), "win_rate"],
      ["Winnings", money(view.winnings, view.currency), "winnings"],
      ["Units", `${view.units} / ${view.max_units}`, "units"],
      ...counters,
      ["Status", view.status, "status"],
    ]),
    over ? el("p", { class: "result", text: `Game over (${view.end_reason}): paid ${money(view.payout, view.currency)}${view.refund ? `, refunded ${money(view.refund, view.currency)}` : ""}.` }) : null,
    el("div", { class: "controls" }, buttons,
      over ? el("button", { type: "button", onclick: () => { location.hash = "#/table/lobby"; } }, "Back to the lobby") : null,
      over ? el("a", { href: `#/replay/${view.id}` }, "Replay this game") : null),
    drawBoard(view, table.prefs, handlers, { targets, selected: table.selected, playable, arrow }),
    over ? null : el("h3", { text: "Moves" }),
    over ? null : el("div", { class: "moves", "aria-label": "Legal moves" }, moves)));
}

async function renderHistory(node) {
  const page = await api("GET", `/v1/players/${me.player_id}/history?limit=20`);
  node.replaceChildren(el("h2", { text: "Betting history" }),
    el("table", {},
      el("thead", {}, el("tr", {}, ["Started", "Game", "Stake", "Paid", "Net", "Status", ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, page.items.map((line) => el("tr", { "data-game": line.game_id },
        el("td", { text: new Date(line.started_at).toLocaleString() }),
        el("td", { text: line.title }),
        el("td", { text: money(line.stake, line.currency) }),
        el("td", { text: money(line.payout, line.currency) }),
        el("td", { text: money(line.net, line.currency) }),
        el("td", { text: line.status }),
        el("td", {}, line.status === "in_progress" ? el("a", { href: `#/table/${line.game_id}` }, "Play")
          : el("a", { href: `#/replay/${line.game_id}` }, "Replay")))))));
}

// --- the replay viewer (auditors, and players for their own finished games) ---------------------

const replay = { data: null, at: 0 };

function replayPicker(gameId) {
  const input = el("input", { id: "replay-game", value: gameId || "", size: 40, required: true });
  const form = el("form", { class: "panel inline" },
    el("div", {}, el("label", { for: "replay-game", text: "Game id" }), input),
    el("button", { type: "submit" }, "Replay"));
  form.addEventListener("submit", (event) => { event.preventDefault(); location.hash = `#/replay/${input.value.trim()}`; });
  return form;
}

async function replayPage(gameId) {
  const since = navigation;
  const label = el("p", {}, el("span", { class: "replay-label", text: "REPLAY — a re-enactment of a recorded game, not live play" }));
  app.replaceChildren(label, replayPicker(gameId), el("div", { id: "replay-main" }));
  if (!gameId) return;
  const prefs = me.role === "player" ? await api("GET", `/v1/players/${me.player_id}/preferences`) : {};
  replay.data = await api("GET", `/v1/games/${gameId}/replay`);
  if (left(since)) return;
  replay.prefs = prefs;
  replay.at = replay.data.steps.length - 1;
  renderReplay();
}

function renderReplay() {
  const data = replay.data;
  const step = data.steps[replay.at];
  const stateView = step.state;
  const go = (to) => () => { replay.at = Math.max(0, Math.min(data.steps.length - 1, to)); renderReplay(); };
  const checks = data.verification.checks;
  const final = data.final || {};
  const main = document.getElementById("replay-main");
  main.replaceChildren(
    el("section", { class: "panel", "data-replay": data.game_id },
      el("h2", { text: `Replay of game ${data.game_id}` }),
      el("p", { class: "replay-label", text: data.label || "Replay" }),
      el("div", { class: "controls" },
        el("button", { type: "button", onclick: go(0) }, "First"),
        el("button", { type: "button", onclick: go(replay.at - 1), "aria-label": "Step back" }, "◀ Back"),
        el("output", { "aria-live": "polite", "data-step": String(step.version), text: `Event ${step.version} of ${data.steps.length}` }),
        el("button", { type: "button", onclick: go(replay.at + 1), "aria-label": "Step forward" }, "Forward ▶"),
        el("button", { type: "button", onclick: go(data.steps.length - 1) }, "Last")),
      el("p", { class: "step-info", text: `v${step.version} ${step.type} by ${step.actor || "?"} (${step.role || "?"}) at ${new Date(step.recorded_at).toISOString()}` }),
      stateView ? drawBoard(stateView, replay.prefs || {}) : el("p", { text: "Staked; not yet dealt." })),
    el("section", { class: "panel" },
      el("h3", { text: "Events" }),
      el("ol", { class: "steps" }, data.steps.map((s, i) => el("li", { class: i === replay.at ? "current" : "" },
        el("button", { type: "button", onclick: go(i) }, `v${s.version} ${s.type} — ${s.actor || "?"}, ${new Date(s.recorded_at).toISOString()}`))))),
    el("section", { class: "panel", id: "verification" },
      el("h3", { text: `Verification: ${data.verification.verified ? "every check passed" : "not verified"}` }),
      el("ul", { class: "checks" }, Object.entries(checks).map(([name, status]) =>
        el("li", { class: status, "data-check": name }, `${name}: ${status}`))),
      data.verification.findings.length ? el("ul", {}, data.verification.findings.map((f) =>
        el("li", { text: `${f.check} at ${f.location}: expected ${f.expected}, found ${f.found}` }))) : null,
      el("p", { text: `Seed commitment: ${final.seed_commitment || "–"}` }),
      el("p", { "data-seed": "server", text: `Server seed: ${final.server_seed || "not yet revealed"}` }),
      final.client_seed ? el("p", { text: `Client seed: ${final.client_seed}` }) : null));
}

// --- finance ------------------------------------------------------------------------------------

async function financePage() {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 29 * 864e5).toISOString().slice(0, 10);
  const since = navigation;
  const variants = table.variants || await api("GET", "/v1/variants");
  if (left(since)) return;
  table.variants = variants;
  const currencies = variants.paytables.map((t) => t.currency).concat(["XTS"]);
  const from = el("input", { id: "from", type: "date", value: monthAgo });
  const to = el("input", { id: "to", type: "date", value: today });
  const currency = el("select", { id: "currency" }, currencies.map((c) => el("option", { value: c, text: c })));
  const variant = el("select", { id: "variant" }, el("option", { value: "", text: "all games" }),
    variants.variants.map((v) => el("option", { value: v.name, text: v.title })));
  const out = el("div", { id: "finance-main" });
  const form = el("form", { class: "panel inline" },
    el("div", {}, el("label", { for: "from", text: "From" }), from),
    el("div", {}, el("label", { for: "to", text: "To" }), to),
    el("div", {}, el("label", { for: "currency", text: "Currency" }), currency),
    el("div", {}, el("label", { for: "variant", text: "Game" }), variant),
    el("button", { type: "submit" }, "Show"),
    el("button", { type: "button", id: "csv", onclick: () => downloadCsv() }, "Download CSV"));
  const query = () => `from=${from.value}&to=${to.value}&currency=${currency.value}`;
  const downloadCsv = () => attempt(async () => {
    const blob = await api("GET", `/v1/reports/daily?${query()}`, undefined, { accept: "text/csv" });
    const link = el("a", { href: URL.createObjectURL(blob), download: `daily-${currency.value}-${from.value}-${to.value}.csv` });
    document.body.append(link);
    link.click();
    link.remove();
  });
  const show = () => attempt(async () => {
    const extra = variant.value ? `&variant=${variant.value}` : "";
    const [report, moneySvg, rtpSvg] = await Promise.all([
      api("GET", `/v1/reports/daily?${query()}`),
      api("GET", `/v1/reports/daily/chart?${query()}&chart=money${extra}`, undefined, { accept: "image/svg+xml" }),
      api("GET", `/v1/reports/daily/chart?${query()}&chart=rtp${extra}`, undefined, { accept: "image/svg+xml" }),
    ]);
    const p = report.period;
    const published = Object.fromEntries(variants.variants.map((v) => [v.name, v.rtp ? v.rtp.displayed.rtp : null]));
    const prices = (variants.paytables.find((t) => t.currency === report.currency) || { prices: [] }).prices;
    const beaten = new Set(prices.filter((p) => p.beats_the_house).map((p) => p.variant));
    out.replaceChildren(
      el("section", { class: "panel" }, el("h2", { text: `Period ${report.from || from.value} to ${report.to || to.value} (${report.currency}${report.sandbox ? ", sandbox" : ""})` }),
        figures([["Stakes", money(p.stakes, report.currency), "stakes"], ["Payouts", money(p.payouts, report.currency), "payouts"],
          ["GGR", money(p.ggr, report.currency), "ggr"], ["RTP", p.rtp ?? "–", "rtp"], ["Games", p.games_started, "games"]])),
      el("section", { class: "panel chart" }, el("img", { id: "chart-money", alt: `Stakes, payouts and GGR per day (${variant.value || "all games"})`, src: URL.createObjectURL(moneySvg) })),
      el("section", { class: "panel chart" }, el("img", { id: "chart-rtp", alt: variant.value ? `Actual RTP of ${variant.value} per day against published` : "Actual RTP per game against published", src: URL.createObjectURL(rtpSvg) })),
      el("section", { class: "panel" }, el("h3", { text: "RTP per game" }),
        el("table", {}, el("thead", {}, el("tr", {}, ["Game", "Stakes", "Payouts", "GGR", "Actual RTP", "Published RTP"].map((h) => el("th", { text: h })))),
          el("tbody", {}, report.variants.filter((t) => t.stakes).map((t) => el("tr", { "data-variant": t.variant },
            el("td", { text: t.variant }), el("td", { text: money(t.stakes, report.currency) }), el("td", { text: money(t.payouts, report.currency) }),
            el("td", { text: money(t.ggr, report.currency) }),
            el("td", { text: t.rtp ?? "–" }),
            el("td", { class: beaten.has(t.variant) ? "beats-the-house" : "", text: ((t.published && t.published.rtp) ?? published[t.variant] ?? "–") + (beaten.has(t.variant) ? " (strong play beats the house)" : "") })))))));
  });
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  app.replaceChildren(el("h1", { text: "Finance" }), form, out);
  await show();
}

// --- duels (players) ----------------------------------------------------------------------------

const duel = { view: null, selected: null, prefs: {}, timer: null, poll: null };

function stopDuelTimers() {
  clearInterval(duel.timer);
  clearInterval(duel.poll);
  duel.timer = duel.poll = null;
}

async function duelsPage(duelId) {
  stopDuelTimers();
  const since = navigation;
  duel.prefs = await api("GET", `/v1/players/${me.player_id}/preferences`);
  if (left(since)) return;
  if (duelId) { await showDuel(duelId); return; }
  const [wallet, paytables, mine] = await Promise.all([
    api("GET", `/v1/players/${me.player_id}/wallet`),
    api("GET", "/v1/duels/paytables"),
    api("GET", `/v1/players/${me.player_id}/duels?limit=20`),
  ]);
  if (left(since)) return;
  const table_ = paytables.find((t) => t.currency === wallet.currency) || paytables[0];
  let at = 0;
  const fee = el("output", { "aria-live": "polite", text: money(table_.fees[0], table_.currency) });
  const step = (delta) => () => { at = Math.min(table_.fees.length - 1, Math.max(0, at + delta)); fee.textContent = money(table_.fees[at], table_.currency); };
  const seats = el("input", { id: "seats", type: "number", min: "2", max: String(table_.max_seats), value: "2" });
  const join = async () => {
    const view = await attempt(() => api("POST", "/v1/duels", { fee: table_.fees[at], seats: Number(seats.value) }, { idempotent: true }));
    if (view) location.hash = `#/duels/${view.id}`;
  };
  app.replaceChildren(
    el("section", { class: "panel" }, el("h1", { text: "Duels" }),
      el("p", { text: `${table_.rules.join(" ")} Every seat plays the same deal; the best score takes the pot less ${table_.rake} rake.` }),
      el("div", { class: "stake" },
        el("button", { type: "button", "aria-label": "Lower the entry fee", onclick: step(-1) }, "−"), fee,
        el("button", { type: "button", "aria-label": "Raise the entry fee", onclick: step(1) }, "+")),
      el("label", { for: "seats", text: "Seats" }), seats,
      el("p", {}, el("button", { type: "button", id: "join", onclick: join }, "Join a duel"))),
    el("section", { class: "panel" }, el("h2", { text: "Your duels" }),
      el("table", {}, el("thead", {}, el("tr", {}, ["Opened", "Status", "Fee", "Seats", "Pot", ""].map((h) => el("th", { text: h })))),
        el("tbody", {}, mine.items.map((d) => el("tr", { "data-duel": d.duel_id },
          el("td", { text: new Date(d.opened_at).toLocaleString() }), el("td", { text: d.status }),
          el("td", { text: money(d.fee, d.currency) }), el("td", { text: `${d.taken} / ${d.seats}` }),
          el("td", { text: money(d.pot, d.currency) }), el("td", {}, el("a", { href: `#/duels/${d.duel_id}` }, "Open"))))))));
}

async function showDuel(duelId) {
  const since = navigation;
  duel.view = noticeRealityCheck(await api("GET", `/v1/duels/${duelId}`));
  if (left(since)) return;
  duel.selected = null;
  renderDuel();
  // Others join, deal and finish on their own time: look again every few seconds until it ends.
  duel.poll = setInterval(async () => {
    if (!location.hash.startsWith(`#/duels/${duelId}`)) { stopDuelTimers(); return; }
    if (["settled", "cancelled"].includes(duel.view.status)) return;
    if (duel.selected) return; // not under the player's hand mid-move
    try {
      duel.view = noticeRealityCheck(await api("GET", `/v1/duels/${duelId}`));
      renderDuel();
    } catch { /* the next look may do better; a problem on screen stays there */ }
  }, 3000);
}

// A duel's stream is written by every seat: a move that lost a race with another seat's is sent
// again (it changed nothing, and the player's own game is as they saw it).
async function sendDuelMove(duelId, move) {
  for (let attemptNo = 1; ; attemptNo += 1) {
    try {
      return await api("POST", `/v1/duels/${duelId}/actions`, move, { idempotent: true });
    } catch (error) {
      const raced = error instanceof ApiProblem && error.body && error.body.type === "/problems/concurrent-update";
      if (!raced || attemptNo >= 5) throw error;
      await new Promise((resolve) => { setTimeout(resolve, 100 * attemptNo); });
    }
  }
}

duel.perform = async (move) => {
  const fresh = await attempt(() => sendDuelMove(duel.view.id, move));
  duel.selected = null;
  if (fresh) duel.view = fresh;
  renderDuel();
};
duel.redraw = () => renderDuel();

function renderDuel() {
  const view = duel.view;
  const you = view.you || {};
  const game = you.game;
  const ctl = { get view() { return duel.view.you.game; }, get selected() { return duel.selected; }, set selected(v) { duel.selected = v; }, perform: duel.perform, redraw: duel.redraw };
  const playing = game && ["in_progress", "complete"].includes(game.status) && you.seconds_left > 0;
  clearInterval(duel.timer);
  const clock = el("span", { class: "clock", "data-figure": "time_left", "aria-live": "off" });
  const started = Date.now();
  const tick = () => {
    const left = Math.max(0, (you.seconds_left ?? 0) - Math.floor((Date.now() - started) / 1000));
    clock.textContent = you.seconds_left === null || you.seconds_left === undefined ? "–" : `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  };
  tick();
  if (playing) duel.timer = setInterval(tick, 500);
  const deal = async () => {
    const fresh = await attempt(() => api("POST", `/v1/duels/${view.id}/deal`, undefined, { idempotent: true }));
    if (fresh) { duel.view = fresh; renderDuel(); }
  };
  const result = view.result;
  app.replaceChildren(el("section", { class: "panel", "data-duel": view.id, "data-status": view.status },
    el("h1", { text: `Duel: ${view.status}${view.certification ? " (certification)" : ""}` }),
    figures([
      ["Fee", money(view.fee, view.currency), "fee"], ["Seats taken", `${view.taken} / ${view.seats}`, "taken"],
      ["Pot", money(view.pot, view.currency), "pot"], ["Time left", "", "time_left_slot"],
      ["Your points", you.points ?? "–", "points"],
    ]),
    view.status === "open" ? el("p", { text: `Waiting for players until ${new Date(view.fill_by).toLocaleTimeString()}.` }) : null,
    view.status === "full" && !you.game_id ? el("p", {}, el("button", { type: "button", id: "duel-deal", onclick: deal }, "Deal: my five minutes start now")) : null,
    playing ? el("div", { class: "controls" },
      game.legal_moves.filter((m) => ["draw", "recycle"].includes(m.action)).map((m) => el("button", { type: "button", onclick: () => duel.perform(m) }, describeMove(m))),
      el("button", { type: "button", id: "duel-stop", onclick: () => duel.perform({ action: "collect" }) }, "Stop (end my game)")) : null,
    game ? drawBoard(game, duel.prefs, playing ? clicks(ctl) : null, { targets: targetsOf(duel.selected), selected: duel.selected }) : null,
    result ? el("section", { class: "result", id: "duel-result" },
      el("h2", { text: result.cancelled_because ? `Cancelled: ${result.cancelled_because}` : "Result" }),
      el("table", {}, el("thead", {}, el("tr", {}, ["Seat", "Player", "Points", "Paid"].map((h) => el("th", { text: h })))),
        el("tbody", {}, view.seat_list.map((seat) => el("tr", {},
          el("td", { text: String(seat.seat) }), el("td", { text: seat.player_id || "" }),
          el("td", { text: seat.points ?? "–" }), el("td", { text: money((seat.payout || 0) + (seat.refund || 0), view.currency) }))))),
      el("p", { text: `Rake ${money(result.rake, view.currency)}. Server seed: ${view.server_seed || "not yet revealed"}` })) : null));
  const slot = app.querySelector("[data-figure='time_left_slot']");
  if (slot) slot.replaceWith(clock);
}

// --- safer gambling -----------------------------------------------------------------------------

// The reality check (RTS 13): when one is due the API refuses play (409 reality-check-due) and
// the player's views carry it; the dialog shows the session's figures, and play goes on only
// after "Continue playing" records the acknowledgement. Nothing here invites more play.
const realityDialog = document.getElementById("reality-check");

function noticeRealityCheck(view) {
  if (view && view.reality_check) showRealityCheck(view.reality_check);
  return view;
}

async function showRealityCheck(check) {
  if (!check || !me || me.role !== "player" || realityDialog.open) return;
  const wallet = await api("GET", `/v1/players/${me.player_id}/wallet`).catch(() => ({}));
  const minutes = Math.floor(check.session_seconds / 60);
  document.getElementById("reality-check-body").replaceChildren(
    el("p", { text: `You have been playing for ${minutes} minute${minutes === 1 ? "" : "s"} this session (since ${new Date(check.session_started).toLocaleTimeString()}).` }),
    figures([
      ["Staked this session", money(check.stakes, wallet.currency), "session_stakes"],
      ["Paid back this session", money(check.payouts, wallet.currency), "session_payouts"],
      [check.net < 0 ? "Net loss this session" : "Net this session", money(check.net, wallet.currency), "session_net"],
    ]));
  if (!realityDialog.open) realityDialog.showModal();
}

document.getElementById("reality-continue").addEventListener("click", async () => {
  const seen = await attempt(() => api("POST", `/v1/players/${me.player_id}/reality-check`, undefined, { idempotent: true }));
  if (!seen) return;
  realityDialog.close();
  await route();
});
document.getElementById("reality-stop").addEventListener("click", () => { realityDialog.close(); signOut(); });
document.getElementById("reality-limits").addEventListener("click", () => realityDialog.close());

const LIMIT_NAMES = {
  "deposit-day": "Deposits in a day", "deposit-week": "Deposits in a week", "deposit-month": "Deposits in a month",
  "loss-day": "Net loss in a day", "loss-week": "Net loss in a week", "loss-month": "Net loss in a month",
  "max-stake": "Largest stake or duel fee", "session-time": "Playing time in a session (minutes)",
  "reality-check": "Reality check every (minutes)",
};
const MINUTES = ["session-time", "reality-check"]; // the limits counted in minutes, not money
const UNUSED = ["max-stake", ...MINUTES]; // the limits that use nothing up in a period
const TIME_OUTS = { "24-hours": "24 hours", "one-week": "one week", "one-month": "one month", "six-weeks": "six weeks" };
const SELF_EXCLUSIONS = { "six-months": "six months", "one-year": "one year", "five-years": "five years" };

function when(instant) {
  return instant ? new Date(instant).toLocaleString() : "–";
}

// A limit's value as typed (major units for money, whole minutes) in the API's minor units.
function typedLimit(name, text) {
  if (MINUTES.includes(name)) return Number.parseInt(text, 10);
  const [units, cents = ""] = text.trim().split(".");
  return Number.parseInt(units || "0", 10) * 100 + Number.parseInt((cents + "00").slice(0, 2), 10);
}

function shownLimit(name, value, currency) {
  if (value === null || value === undefined) return "no limit";
  return MINUTES.includes(name) ? `${value} min` : money(value, currency);
}

// The player's own page; operators and auditors open any player's by id (#/safer/<id>).
async function saferPage(playerId) {
  const since = navigation;
  const who = me.role === "player" ? me.player_id : playerId;
  const picker = el("input", { id: "safer-player", value: who || "", size: 40, required: true });
  const pick = el("form", { class: "panel inline" },
    el("div", {}, el("label", { for: "safer-player", text: "Player id" }), picker),
    el("button", { type: "submit" }, "Open"));
  pick.addEventListener("submit", (event) => { event.preventDefault(); location.hash = `#/safer/${picker.value.trim()}`; });
  const head = el("section", { class: "panel" }, el("h1", { text: "Safer gambling" }),
    el("p", { text: "Limits you lower take effect at once; limits you raise or remove only after 24 hours. A time-out or a self-exclusion starts at once and cannot be ended early: until it ends no game can be dealt, no duel joined and no deposit made. Withdrawals and a game already dealt stay open." }));
  app.replaceChildren(head, me.role === "player" ? "" : pick);
  if (!who) return;
  const [limits, exclusion] = await Promise.all([
    api("GET", `/v1/players/${who}/limits`), api("GET", `/v1/players/${who}/exclusion`),
  ]);
  if (left(since)) return;
  const may = me.role !== "auditor"; // auditors read; the player and operators change
  app.append(exclusionPanel(who, exclusion, may), limitsPanel(who, limits, may));
}

function exclusionPanel(who, exclusion, may) {
  const state = exclusion.excluded
    ? el("p", { class: "notice", id: "exclusion-state", "data-kind": exclusion.kind, text: `${exclusion.kind === "self-exclusion" ? "Self-excluded" : "In a time-out"} until ${when(exclusion.until)}.` })
    : el("p", { id: "exclusion-state", "data-kind": "none", text: "No time-out or self-exclusion in force." });
  if (!may) return el("section", { class: "panel", id: "exclusion" }, el("h2", { text: "Time-out and self-exclusion" }), state);
  const exclude = async (length) => {
    const done = await attempt(() => api("POST", `/v1/players/${who}/exclusions`, { length }, { idempotent: true }));
    if (done) await saferPage(who);
  };
  const pause = el("select", { id: "time-out-length" }, Object.entries(TIME_OUTS).map(([v, t]) => el("option", { value: v, text: t })));
  const away = el("select", { id: "self-exclusion-length" }, Object.entries(SELF_EXCLUSIONS).map(([v, t]) => el("option", { value: v, text: t })));
  const sure = el("input", { id: "self-exclusion-sure", type: "checkbox", required: true });
  const timeOut = el("form", { class: "inline", id: "time-out" },
    el("div", {}, el("label", { for: "time-out-length", text: "Take a break for" }), pause),
    el("button", { type: "submit" }, "Take a time-out"));
  timeOut.addEventListener("submit", (event) => { event.preventDefault(); exclude(pause.value); });
  const selfExclude = el("form", { class: "inline", id: "self-exclusion" },
    el("div", {}, el("label", { for: "self-exclusion-length", text: "Self-exclude for" }), away),
    el("div", {}, el("label", { for: "self-exclusion-sure", text: "I understand it cannot be ended early" }), sure),
    el("button", { type: "submit" }, "Self-exclude"));
  selfExclude.addEventListener("submit", (event) => { event.preventDefault(); exclude(away.value); });
  return el("section", { class: "panel", id: "exclusion" }, el("h2", { text: "Time-out and self-exclusion" }), state, timeOut, selfExclude);
}

function limitsPanel(who, limits, may) {
  const rows = limits.limits.map((line) => {
    const name = line.limit;
    const minutes = MINUTES.includes(name);
    const input = el("input", {
      id: `limit-${name}`, type: "number", required: true, min: minutes ? "1" : "0.01",
      step: minutes ? "1" : "0.01", max: minutes ? "1440" : undefined, "aria-label": `New ${LIMIT_NAMES[name] || name}`,
    });
    const set = async (value) => {
      const saved = await attempt(() => api("PUT", `/v1/players/${who}/limits/${name}`, { value }, { idempotent: true }));
      if (saved) await saferPage(who);
    };
    const form = el("form", { class: "inline" }, input, el("button", { type: "submit" }, "Set"),
      line.value === null ? null : el("button", { type: "button", "data-remove": name, onclick: () => set(null) }, "Remove"));
    form.addEventListener("submit", (event) => { event.preventDefault(); set(typedLimit(name, input.value)); });
    const waiting = line.pending_from ? `${shownLimit(name, line.pending, limits.currency)} from ${when(line.pending_from)}` : "–";
    return el("tr", { "data-limit": name },
      el("td", { text: LIMIT_NAMES[name] || name }),
      el("td", { "data-value": "", text: shownLimit(name, line.value, limits.currency) }),
      el("td", { text: UNUSED.includes(name) ? "–" : money(line.used, limits.currency) }),
      el("td", { "data-remaining": "", text: line.remaining === null || UNUSED.includes(name) ? "–" : money(line.remaining, limits.currency) }),
      el("td", { text: when(line.resets_at) }),
      el("td", { "data-pending": "", text: waiting }),
      may ? el("td", {}, form) : null);
  });
  return el("section", { class: "panel", id: "limits" }, el("h2", { text: "Limits" }),
    el("table", {}, el("thead", {}, el("tr", {}, ["Limit", "In force", "Used this period", "Left", "Resets", "Waiting to take effect", may ? "Change" : null]
      .filter((h) => h !== null).map((h) => el("th", { text: h })))), el("tbody", {}, rows)));
}

// --- disable on demand (operators switch; auditors read) ----------------------------------------

async function controlsPage() {
  const since = navigation;
  const [variants, recorded] = await Promise.all([api("GET", "/v1/variants"), api("GET", "/v1/controls")]);
  if (left(since)) return;
  const may = me.role === "operator";
  const reason = el("input", { id: "switch-reason", size: 50, maxlength: "500", required: true });
  const flip = (path, enabled) => async () => {
    if (!reason.reportValidity()) return;
    const done = await attempt(() => api("PUT", `/v1/controls/${path}`, { enabled, reason: reason.value.trim() }, { idempotent: true }));
    if (done) await controlsPage();
  };
  const button = (path, enabled, label, attrs = {}) => (may ? el("button", { type: "button", onclick: flip(path, enabled), ...attrs }, label) : null);
  const state = (on) => el("span", { class: on ? "switch-on" : "switch-off", text: on ? "on" : "off" });
  const version = el("input", { id: "switch-version", size: 24, placeholder: variants.rules_version });
  const player = el("input", { id: "switch-player", size: 40 });
  const named = (input, scope) => (enabled) => async () => {
    if (!input.value.trim()) { input.focus(); return; }
    await flip(`${scope}/${encodeURIComponent(input.value.trim())}`, enabled)();
  };
  app.replaceChildren(
    el("section", { class: "panel" }, el("h1", { text: "Controls" }),
      el("p", { text: "Switching off stops new deals and duel joins it covers at once; games already dealt play on and are collected, and the cashier stays open. Every switch is recorded with who, when and why." }),
      may ? el("div", {}, el("label", { for: "switch-reason", text: "Reason (recorded with the switch)" }), reason) : null,
      el("p", { id: "gaming-state" }, "All gaming: ", state(variants.gaming_enabled), " ",
        button("gaming", !variants.gaming_enabled, variants.gaming_enabled ? "Switch all gaming off" : "Switch all gaming on", { id: "switch-gaming" }))),
    el("section", { class: "panel" }, el("h2", { text: "Games" }),
      el("table", {}, el("thead", {}, el("tr", {}, ["Game", "Version", "State", ""].map((h) => el("th", { text: h })))),
        el("tbody", {}, variants.variants.map((v) => el("tr", { "data-game": v.name, "data-enabled": String(v.enabled) },
          el("td", { text: v.title }), el("td", { text: v.rules_version }), el("td", {}, state(v.enabled)),
          el("td", {}, button(`games/${v.name}`, !v.enabled, v.enabled ? "Switch off" : "Switch on"))))))),
    may ? el("section", { class: "panel" }, el("h2", { text: "One game version or one player" }),
      el("div", { class: "inline" }, el("div", {}, el("label", { for: "switch-version", text: "Rules version" }), version),
        el("button", { type: "button", onclick: named(version, "versions")(false) }, "Switch version off"),
        el("button", { type: "button", onclick: named(version, "versions")(true) }, "Switch version on")),
      el("div", { class: "inline" }, el("div", {}, el("label", { for: "switch-player", text: "Player id" }), player),
        el("button", { type: "button", id: "switch-player-off", onclick: named(player, "players")(false) }, "Switch player off"),
        el("button", { type: "button", id: "switch-player-on", onclick: named(player, "players")(true) }, "Switch player on"))) : null,
    pricesPanel(variants),
    el("section", { class: "panel", id: "switches" }, el("h2", { text: "Every switch, as it stands" }),
      el("table", {}, el("thead", {}, el("tr", {}, ["Scope", "Target", "State", "Reason", "Changed"].map((h) => el("th", { text: h })))),
        el("tbody", {}, recorded.switches.map((s) => el("tr", { "data-scope": s.scope, "data-target": s.target },
          el("td", { text: s.scope }), el("td", { text: s.target }), el("td", {}, state(s.enabled)),
          el("td", { text: s.reason }), el("td", { text: when(s.changed_at) })))))));
}

// Each paytable's price of every game and what strong play gets back there (GET /v1/variants
// prices[]): a price strong play beats is marked, as the start's significant event names it.
function pricesPanel(variants) {
  const figure = (f) => (f ? `${f.rtp} (${f.low}-${f.high}), ${f.player}` : "not measured");
  return el("section", { class: "panel", id: "prices" }, el("h2", { text: "Prices and strong play" }),
    el("p", { text: "Each paytable's multiplier per game and the RTP a strong player (seeing only what a player sees) gets back at it. A marked price returns more than the stake to strong play." }),
    variants.paytables.map((t) => el("table", { "data-paytable": `${t.id}/${t.version}` },
      el("caption", { text: `${t.id} v${t.version} (${t.currency})` }),
      el("thead", {}, el("tr", {}, ["Game", "M", "Strong-play RTP", ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, t.prices.map((p) => el("tr", { "data-variant": p.variant, "data-beats-the-house": String(p.beats_the_house), class: p.beats_the_house ? "beats-the-house" : "" },
        el("td", { text: p.variant }), el("td", { text: p.own_rate ? `${p.multiplier} (own rate)` : p.multiplier }),
        el("td", { text: figure(p.rtp) }),
        el("td", { text: p.beats_the_house ? "strong play beats the house" : "" })))))));
}

// --- routing ------------------------------------------------------------------------------------

// Each page checks after its first answers that it is still the page asked for: a slow answer
// for a page the user has left must not draw over the one they went to.
let navigation = 0;

function left(since) {
  return since !== navigation;
}

async function route() {
  navigation += 1;
  clearProblem();
  if (!sessionStorage.getItem(TOKEN)) { signIn(); return; }
  if (!me) {
    me = await attempt(() => api("GET", "/v1/whoami"));
    if (!me) { sessionStorage.removeItem(TOKEN); signIn(); return; }
    showIdentity();
  }
  const [, page, arg] = (location.hash || home()).split("/");
  await attempt(async () => {
    if (page === "table" && me.role === "player") await tablePage(arg === "lobby" ? null : arg);
    else if (page === "finance") await financePage();
    else if (page === "duels" && me.role === "player") await duelsPage(arg);
    else if (page === "replay") await replayPage(arg);
    else if (page === "safer" && ["player", "operator", "auditor"].includes(me.role)) await saferPage(arg);
    else if (page === "controls" && ["operator", "auditor"].includes(me.role)) await controlsPage();
    else { location.hash = home(); }
  });
  app.focus();
}

window.addEventListener("hashchange", route);
route();
