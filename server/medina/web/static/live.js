// The live page: follows a match through its Server-Sent Events stream (no polling).
//
// The stream is read with fetch() rather than EventSource, so that a refusal can be told
// apart from a lost connection: a 404 says why the match is not played here (finished,
// interrupted by a server restart...) and links its replay; a 429 (too many streams from
// this address) and a lost or unreachable server are retried with a growing wait.
"use strict";

(() => {
  const matchId = document.body.dataset.match;
  const svg = document.getElementById("board");
  const plot = document.getElementById("plot");
  const status = document.getElementById("status");
  const clockBox = document.getElementById("clock");
  const replayLink = /** @type {HTMLAnchorElement} */ (document.getElementById("replay-link"));
  const RETRY_FIRST_MS = 1000;
  const RETRY_MAX_MS = 4000;
  let retryMs = RETRY_FIRST_MS;
  let clock = null;  // {seat, allowed, bank, at}
  let over = false;
  let story = [];
  let seats = [];

  function tick() {
    if (!clock || over) { clockBox.textContent = ""; return; }
    const left = Math.max(0, clock.allowed - (performance.now() - clock.at)) / 1000;
    const bank = clock.bank ? ` · bank ${(clock.bank / 1000).toFixed(1)} s` : "";
    clockBox.textContent = `seat ${clock.seat} to move: ${left.toFixed(1)} s${bank}`;
  }

  function say(text, why) {
    status.textContent = text;
    document.body.dataset.connection = why;
  }

  // The story's points: the first message of a stream has them all, later ones the new.
  function grow(points, first) {
    if (first) story = [];
    const lastStep = story.length ? story[story.length - 1].step : -1;
    for (const p of points || []) if (p.step > lastStep) story.push(p);
  }

  function show(msg, first) {
    const view = msg.view;
    MedinaBoard.draw(svg, view);
    MedinaBoard.scores(document.getElementById("scores"), view);
    MedinaBoard.tiles(document.getElementById("tiles"), view);
    MedinaBoard.moves(document.getElementById("moves"), view.last_moves);
    seats = view.seats.map((s) => ({ seat: s.seat, name: s.name, colour: s.colour }));
    grow(msg.story, first);
    MedinaPlot.draw(plot, story, seats, {});
    document.body.dataset.decisions = view.decisions;
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    // A clock runs only once the match has started: while it waits for its bots (or in the
    // server's start queue) the seat "to move" is not being timed.
    const c = msg.phase !== "waiting" && msg.clock && msg.clock.seats[view.to_move];
    clock = c && view.phase !== "over"
      ? { seat: view.to_move, allowed: c.allowed_ms, bank: c.bank_ms, at: performance.now() }
      : null;
    // A waiting match's note says why (its place in the server's start queue).
    say(msg.phase === "waiting"
      ? msg.note || "waiting for the bots to connect"
      : `${view.ruleset}, turn ${view.turn + 1}, decision ${view.decisions}`, "open");
    tick();
  }

  function end(msg) {
    over = true;
    show(msg, false);
    MedinaBoard.result(document.getElementById("result"), msg.result);
    say(`match ${msg.result.ending}`, "over");
    document.body.dataset.state = "over";
    replayLink.hidden = false;
  }

  // No live stream here for good: say why, and link the replay when there is a record.
  function gone(body) {
    over = true;
    clock = null;
    say(body.error || "this match is not played here", "gone");
    document.body.dataset.state = body.state || "gone";
    if (body.replay) {
      replayLink.href = body.replay;
      replayLink.hidden = false;
    }
  }

  function retry(reason) {
    const wait = retryMs;
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    clock = null;
    say(`${reason}; retrying in ${wait / 1000} s…`, "retrying");
    setTimeout(connect, wait);
  }

  function frame(text, first) {
    let event = "message";
    const data = [];
    for (const line of text.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (!data.length) return first;  // a keep-alive comment
    const msg = JSON.parse(data.join("\n"));
    if (event === "end") end(msg);
    else show(msg, first);
    return false;
  }

  async function answer(response) {
    try { return await response.json(); } catch (err) { return {}; }
  }

  async function connect() {
    let response;
    try {
      response = await fetch(`/api/live/${encodeURIComponent(matchId)}/events`,
        { cache: "no-store", headers: { Accept: "text/event-stream" } });
    } catch (err) {
      retry("the server cannot be reached");
      return;
    }
    if (response.status === 404) { gone(await answer(response)); return; }
    if (response.status === 429) {
      const body = await answer(response);
      retry(`too many live streams from this address (${body.error || "429"})`);
      return;
    }
    if (!response.ok) { retry(`the server answered ${response.status}`); return; }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let first = true;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          first = frame(buffer.slice(0, cut), first);
          buffer = buffer.slice(cut + 2);
          retryMs = RETRY_FIRST_MS;  // news came through: the next loss waits little
        }
      }
    } catch (err) {
      // the connection broke: retried below
    }
    if (!over) retry("the connection to the server was lost");
  }

  connect();
  setInterval(tick, 200);
})();
