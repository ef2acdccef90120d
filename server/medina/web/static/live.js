// The live page: follows a match through its Server-Sent Events stream (no polling).
"use strict";

(() => {
  const matchId = document.body.dataset.match;
  const svg = document.getElementById("board");
  const status = document.getElementById("status");
  const clockBox = document.getElementById("clock");
  let clock = null;  // {seat, allowed, bank, at}
  let over = false;

  function tick() {
    if (!clock || over) { clockBox.textContent = ""; return; }
    const left = Math.max(0, clock.allowed - (performance.now() - clock.at)) / 1000;
    const bank = clock.bank ? ` · bank ${(clock.bank / 1000).toFixed(1)} s` : "";
    clockBox.textContent = `seat ${clock.seat} to move: ${left.toFixed(1)} s${bank}`;
  }

  function show(msg) {
    const view = msg.view;
    MedinaBoard.draw(svg, view);
    MedinaBoard.scores(document.getElementById("scores"), view);
    MedinaBoard.tiles(document.getElementById("tiles"), view);
    MedinaBoard.moves(document.getElementById("moves"), view.last_moves);
    document.body.dataset.decisions = view.decisions;
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    const c = msg.clock && msg.clock.seats[view.to_move];
    clock = c && view.phase !== "over"
      ? { seat: view.to_move, allowed: c.allowed_ms, bank: c.bank_ms, at: performance.now() }
      : null;
    status.textContent = msg.phase === "waiting"
      ? "waiting for the bots to connect"
      : `${view.ruleset}, turn ${view.turn + 1}, decision ${view.decisions}`;
    tick();
  }

  const source = new EventSource(`/api/live/${encodeURIComponent(matchId)}/events`);
  source.addEventListener("update", (e) => show(JSON.parse(e.data)));
  source.addEventListener("end", (e) => {
    const msg = JSON.parse(e.data);
    over = true;
    source.close();  // the match is over: no reconnection
    show(msg);
    MedinaBoard.result(document.getElementById("result"), msg.result);
    status.textContent = `match ${msg.result.ending}`;
    document.body.dataset.state = "over";
    document.getElementById("replay-link").hidden = false;
  });
  source.addEventListener("error", () => {
    if (!over) status.textContent = "connection lost, reconnecting…";
  });
  setInterval(tick, 200);
})();
