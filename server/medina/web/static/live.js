// The live page: follows a match through its Server-Sent Events stream (no polling).
//
// The stream is read with fetch() rather than EventSource, so that a refusal can be told
// apart from a lost connection: a 404 says why the match is not played here (finished,
// unfinished: its server restarted...) and links its replay; a 429 (too many streams from
// this address) and a lost or unreachable server are retried with a growing wait.
//
// A hidden tab closes its stream and opens it again when it is shown: a browser keeps at
// most 6 HTTP/1.1 connections to a host, and each open stream holds one, so 6 live tabs
// would leave none for a 7th page of the viewer. Nothing is lost: a stream's first message
// carries everything so far.
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
  let retryTimer = null;
  let stream = null;  // the open stream's AbortController
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
    if (hidden()) { pause(); return; }  // tried again when the tab is shown
    const wait = retryMs;
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    clock = null;
    say(`${reason}; retrying in ${wait / 1000} s…`, "retrying");
    retryTimer = setTimeout(connect, wait);
  }

  function hidden() {
    return document.visibilityState === "hidden";
  }

  // The tab is hidden: its stream and any retry stop until it is shown again.
  function pause() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (stream) stream.abort();
    stream = null;
    clock = null;
    say("paused while the tab is hidden", "paused");
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
    retryTimer = null;
    if (over) return;
    if (hidden()) { pause(); return; }
    const controller = new AbortController();
    stream = controller;
    try {
      await follow(controller.signal);
    } finally {
      if (stream === controller) stream = null;
    }
  }

  // One stream, read until it ends; a stream closed because the tab was hidden is not
  // retried (it is opened again when the tab is shown).
  async function follow(signal) {
    let response;
    try {
      response = await fetch(`/api/live/${encodeURIComponent(matchId)}/events`,
        { cache: "no-store", headers: { Accept: "text/event-stream" }, signal });
    } catch (err) {
      if (!signal.aborted) retry("the server cannot be reached");
      return;
    }
    const body = response.ok ? null : await answer(response);
    if (signal.aborted) return;
    if (response.status === 404) { gone(body); return; }
    if (response.status === 429) {
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
        if (done || signal.aborted) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          first = frame(buffer.slice(0, cut), first);
          buffer = buffer.slice(cut + 2);
          retryMs = RETRY_FIRST_MS;  // news came through: the next loss waits little
        }
      }
    } catch (err) {
      // the connection broke (or the tab was hidden): retried below
    }
    if (!over && !signal.aborted) retry("the connection to the server was lost");
  }

  document.addEventListener("visibilitychange", () => {
    if (over) return;
    if (hidden()) pause();
    else if (!stream && retryTimer === null) connect();
  });
  connect();
  setInterval(tick, 200);
})();
