// The replay page: every step of a record, drawn from the boards the server replayed.
// The step shown is in the page's URL (?step=N; #N opens there too, and a new #N later
// takes the page there), play runs the steps at the chosen speed, and the score plot's
// cursor follows.
"use strict";

(() => {
  const body = document.body;
  const recordId = body.dataset.record;
  const svg = document.getElementById("board");
  const slider = /** @type {HTMLInputElement} */ (document.getElementById("slider"));
  const stepBox = document.getElementById("step");
  const status = document.getElementById("status");
  const list = document.getElementById("movelist");
  const plot = document.getElementById("plot");
  const playButton = document.getElementById("play");
  const speed = /** @type {HTMLSelectElement} */ (document.getElementById("speed"));
  const moment = /** @type {HTMLAnchorElement} */ (document.getElementById("moment"));
  let data = null;
  let step = 0;
  let timer = null;

  // The step a URL asks for: ?step=N, else #N; null when it names none. ``hashFirst``:
  // #N before ?step=N, for a new anchor (the page keeps ?step of the step shown in the URL,
  // so read first it would always win).
  function askedStep(hashFirst) {
    const query = new URLSearchParams(location.search).get("step");
    const hash = location.hash.replace(/^#(step=)?/, "");
    for (const text of hashFirst ? [hash, query] : [query, hash]) {
      if (text !== null && /^\d+$/.test(text)) return Number(text);
    }
    return null;
  }

  // What the page's note says of the ?step the URL asked for, when it cannot be shown as
  // asked: not a step number (step 0 is shown), or past the last step (the last is).
  function stepNote(last) {
    const query = new URLSearchParams(location.search).get("step");
    if (query === null) return null;
    if (!/^\d+$/.test(query)) {
      return `?step=${JSON.stringify(query)} is not a step number (0 to ${last}): showing step 0`;
    }
    if (Number(query) > last) {
      return `?step=${query} is past the last step (${last}): showing the last`;
    }
    return null;
  }

  // The record cannot be replayed: say why, in place of the controls and the empty board.
  function fail(message) {
    status.textContent = message;
    body.dataset.failed = "yes";
    const shells = /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".controls, .game"));
    for (const shell of shells) shell.hidden = true;
  }

  function go(n) {
    if (!data) return;
    const last = data.frames.length - 1;
    step = Math.max(0, Math.min(n, last));
    const view = data.frames[step];
    MedinaBoard.draw(svg, view);
    MedinaBoard.scores(document.getElementById("scores"), view);
    MedinaBoard.tiles(document.getElementById("tiles"), view);
    slider.value = String(step);
    const move = step > 0 ? data.moves[step - 1] : null;
    stepBox.textContent = `step ${step} / ${last}` +
      (move ? ` — seat ${move.seat}: ${move.text}` : " — start");
    body.dataset.step = String(step);
    list.querySelectorAll("li.current").forEach((li) => li.classList.remove("current"));
    if (move) {
      const li = list.children[step - 1];
      li.classList.add("current");
      MedinaBoard.keepInView(list, li);
    } else {
      list.scrollTop = 0;
    }
    MedinaPlot.move(plot, step);
    MedinaBoard.result(document.getElementById("result"), step === last ? data.result : null);
    if (recordId) {
      const here = step ? `${location.pathname}?step=${step}` : location.pathname;
      history.replaceState(null, "", here);
      moment.href = here;
    }
  }

  function stepsPerSecond() {
    return Math.max(0.5, Number(speed.value) || 4);
  }

  function pause() {
    clearTimeout(timer);
    timer = null;
    playButton.textContent = "▶ play";
    body.dataset.playing = "no";
  }

  function tick() {
    go(step + 1);
    if (step >= data.frames.length - 1) pause();
    else timer = setTimeout(tick, 1000 / stepsPerSecond());
  }

  function play() {
    if (!data) return;
    if (step >= data.frames.length - 1) go(0);  // at the end: play from the start
    playButton.textContent = "❚❚ pause";
    body.dataset.playing = "yes";
    clearTimeout(timer);
    timer = setTimeout(tick, 1000 / stepsPerSecond());
  }

  function toggle() {
    if (timer === null) play();
    else pause();
  }

  function load(d) {
    data = d;
    slider.max = String(d.frames.length - 1);
    list.textContent = "";
    d.moves.forEach((m, i) => {
      const li = document.createElement("li");
      li.textContent = `seat ${m.seat}: ${m.text}`;
      // Numbered as the list and the step shown are (step N: the Nth decision), not by the
      // record's own decision index, which starts at 0.
      li.title = `step ${i + 1}, ${m.time_ms} ms` +
        (m.source !== "bot" ? `, chosen by the referee (${m.source})` : "");
      if (m.source !== "bot") li.classList.add("by-referee");
      li.addEventListener("click", () => go(i + 1));
      list.appendChild(li);
    });
    const notes = [`${d.ruleset}, ${d.players} players, seed ${d.seed}`];
    // A replay stopped short shows a board before the end: the match is over, not the board.
    notes.push(!d.full ? "supplies hidden (no outcome recorded)"
      : d.error ? "all supplies shown (the record holds the match's outcome)"
        : "all supplies shown (the match is over)");
    if (!d.complete) {
      // Where the record stops, and why it may: the file alone cannot tell a match still
      // being played from one whose server stopped; a last line cut mid-write is a crash's.
      const cut = d.truncated ? ", its last line cut off mid-write" : "";
      notes.push(`the record stops after ${d.moves.length} decisions${cut} ` +
        "(unfinished: still being played, or its server stopped during the match)");
    }
    if (d.error) notes.push(`replay stopped: ${d.error}`);
    const asked = askedStep();
    const misread = stepNote(d.frames.length - 1);
    if (misread) notes.push(misread);
    status.textContent = notes.join(" · ");
    body.dataset.steps = String(d.frames.length - 1);
    const seats = d.frames[0].seats.map((s) => ({ seat: s.seat, name: s.name, colour: s.colour }));
    MedinaPlot.draw(plot, d.story, seats, { cursor: 0, onPick: (n) => go(n) });
    go(asked === null ? 0 : asked);
    body.dataset.ready = "yes";
  }

  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(step - 1));
  document.getElementById("next").addEventListener("click", () => go(step + 1));
  document.getElementById("last").addEventListener("click", () => go(Infinity));
  playButton.addEventListener("click", toggle);
  slider.addEventListener("input", () => go(Number(slider.value)));
  window.addEventListener("hashchange", () => {
    const asked = askedStep(true);
    if (asked !== null) go(asked);
  });
  document.addEventListener("keydown", (e) => {
    if (e.target === slider || e.target === speed) return;  // they move themselves
    // With a modifier the keys are the browser's (Alt+← is Back) or the system's.
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const target = /** @type {HTMLElement} */ (e.target);
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 };
    if (e.key in moves) go(step + moves[e.key]);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(Infinity);
    else if (e.key === " " && target.tagName !== "BUTTON" && target.tagName !== "A") toggle();
    else return;
    e.preventDefault();
  });

  if (!recordId) return;
  fetch(`/api/records/${encodeURIComponent(recordId)}/replay`)
    .then((r) => r.json().then((body) => ({ ok: r.ok, body })))
    .then(({ ok, body }) => {
      if (!ok) { fail(body.error); return; }
      if (!body.frames.length) { fail(`cannot replay: ${body.error}`); return; }
      load(body);
    })
    .catch((err) => { fail(`cannot load the record: ${err}`); });
})();
