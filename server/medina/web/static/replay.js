// The replay page: every step of a record, drawn from the boards the server replayed.
"use strict";

(() => {
  const recordId = document.body.dataset.record;
  const svg = document.getElementById("board");
  const slider = document.getElementById("slider");
  const stepBox = document.getElementById("step");
  const status = document.getElementById("status");
  const list = document.getElementById("movelist");
  let data = null;
  let step = 0;

  function go(n) {
    if (!data) return;
    step = Math.max(0, Math.min(n, data.frames.length - 1));
    const view = data.frames[step];
    MedinaBoard.draw(svg, view);
    MedinaBoard.scores(document.getElementById("scores"), view);
    MedinaBoard.tiles(document.getElementById("tiles"), view);
    slider.value = String(step);
    const last = data.frames.length - 1;
    const move = step > 0 ? data.moves[step - 1] : null;
    stepBox.textContent = `step ${step} / ${last}` +
      (move ? ` — seat ${move.seat}: ${move.text}` : " — start");
    document.body.dataset.step = String(step);
    list.querySelectorAll("li.current").forEach((li) => li.classList.remove("current"));
    if (move) {
      const li = list.children[step - 1];
      li.classList.add("current");
      list.scrollTop = li.offsetTop - list.offsetTop - list.clientHeight / 2;
    }
    MedinaBoard.result(document.getElementById("result"), step === last ? data.result : null);
  }

  function load(d) {
    data = d;
    slider.max = String(d.frames.length - 1);
    list.textContent = "";
    d.moves.forEach((m, i) => {
      const li = document.createElement("li");
      li.textContent = `seat ${m.seat}: ${m.text}` + (m.source !== "bot" ? ` (${m.source})` : "");
      li.title = `decision ${m.index}, ${m.time_ms} ms`;
      li.addEventListener("click", () => go(i + 1));
      list.appendChild(li);
    });
    const notes = [`${d.ruleset}, ${d.players} players, seed ${d.seed}`];
    notes.push(d.full ? "all supplies shown (the match is over)" : "supplies hidden (no outcome recorded)");
    if (d.error) notes.push(`replay stopped: ${d.error}`);
    status.textContent = notes.join(" · ");
    document.body.dataset.steps = String(d.frames.length - 1);
    go(0);
    document.body.dataset.ready = "yes";
  }

  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(step - 1));
  document.getElementById("next").addEventListener("click", () => go(step + 1));
  document.getElementById("last").addEventListener("click", () => go(Infinity));
  slider.addEventListener("input", () => go(Number(slider.value)));
  document.addEventListener("keydown", (e) => {
    if (e.target === slider) return;  // the slider moves itself with the arrows
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 };
    if (e.key in moves) go(step + moves[e.key]);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(Infinity);
    else return;
    e.preventDefault();
  });

  fetch(`/api/records/${encodeURIComponent(recordId)}/replay`)
    .then((r) => r.json().then((body) => ({ ok: r.ok, body })))
    .then(({ ok, body }) => {
      if (!ok) { status.textContent = body.error; return; }
      if (!body.frames.length) { status.textContent = `cannot replay: ${body.error}`; return; }
      load(body);
    })
    .catch((err) => { status.textContent = `cannot load the record: ${err}`; });
})();
