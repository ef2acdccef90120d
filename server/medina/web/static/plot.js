// The game's story under the board: every seat's score after each step, claims (circles)
// and tiles taken (squares) marked on the seat's line. Drawn from the "story" points the
// server sends (medina/web/story.py): {step, scores: [...], marks: [{seat, kind, text}]}.
"use strict";

const MedinaPlot = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  // The plot is drawn at the width the page gives it, one unit a CSS pixel, and drawn again
  // when that changes: its text keeps its size (viewer.css: .plot-label, .plot-legend) on a
  // phone as on a desktop, where a fixed viewBox scaled it down to half.
  const H = 226, LEFT = 34, RIGHT = 12, BOTTOM = 30;
  const WIDEST = 680;  // its width before the page is laid out (or while it is hidden)
  const ENTRY = 130;  // the least width of a legend entry: narrower, the legend takes more rows
  const ROW = 16;  // a legend row's height

  // The width the plot is shown at, in CSS pixels (its box less its border).
  function shownWidth(svg) {
    const style = getComputedStyle(svg);
    const width = svg.getBoundingClientRect().width -
      parseFloat(style.borderLeftWidth) - parseFloat(style.borderRightWidth);
    // Rounded down: drawn a hair larger than its units, never smaller.
    return width > 0 ? Math.floor(width * 100) / 100 : WIDEST;
  }

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  // A round axis maximum and its tick spacing: 10, 20, 50, 100... units.
  function scale(top) {
    for (const tick of [5, 10, 20, 50, 100, 200, 500, 1000]) {
      if (top / tick <= 6) return { max: Math.max(tick, Math.ceil(top / tick) * tick), tick };
    }
    return { max: top, tick: top };
  }

  // seats: [{seat, name, colour}]; opts.cursor: the step shown (a vertical line);
  // opts.onPick(step): called with the step under a click.
  function draw(svg, story, seats, opts) {
    opts = opts || {};
    svg.drawn = { story, seats, opts };
    const W = shownWidth(svg);
    // The legend shares the width out between the seats, in as many rows as it takes for
    // each entry to have ENTRY units.
    const perRow = Math.max(1, Math.min(seats.length, Math.floor((W - LEFT - RIGHT) / ENTRY)));
    const TOP = 26 + (Math.ceil(seats.length / perRow) - 1) * ROW;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const lastStep = story.length ? story[story.length - 1].step : 0;
    const xs = scale(Math.max(lastStep, 10));
    let best = 0;
    for (const p of story) for (const v of p.scores) best = Math.max(best, v);
    const ys = scale(Math.max(best, 10));
    const x = (step) => LEFT + (W - LEFT - RIGHT) * step / xs.max;
    const y = (score) => H - BOTTOM - (H - TOP - BOTTOM) * score / ys.max;
    svg.dataset.steps = String(lastStep);
    svg.dataset.points = String(story.length);

    const grid = el("g", { class: "plot-grid" }, svg);
    el("rect", { x: LEFT, y: TOP, width: W - LEFT - RIGHT, height: H - TOP - BOTTOM,
      class: "plot-area" }, grid);
    for (let v = 0; v <= ys.max; v += ys.tick) {
      el("line", { x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v), class: "plot-rule" }, grid);
      el("text", { x: LEFT - 4, y: y(v) + 4, class: "plot-label y" }, grid, v);
    }
    for (let s = 0; s <= xs.max; s += xs.tick) {
      el("text", { x: x(s), y: H - BOTTOM + 14, class: "plot-label x" }, grid, s);
    }
    el("text", { x: W - RIGHT, y: H - 3, class: "plot-label axis" }, grid, "step");

    // A name too long for its entry is cut (its whole in the entry's tooltip), so that the
    // entries never overlap.
    const share = (W - LEFT - RIGHT) / perRow;
    seats.forEach((seat, i) => {
      const colour = MedinaBoard.ROOF[seat.colour] || "#333";
      const lx = LEFT + 4 + (i % perRow) * share;
      const ly = 12 + Math.floor(i / perRow) * ROW;
      el("line", { x1: lx, x2: lx + 16, y1: ly, y2: ly, stroke: colour, class: "plot-key" }, svg);
      const label = el("text", { x: lx + 20, y: ly + 4, class: "plot-legend" }, svg);
      legend(label, seat, share - 20 - 12);
      if (!story.length) return;
      const points = story.map((p) => `${x(p.step).toFixed(1)},${y(p.scores[i]).toFixed(1)}`);
      el("polyline", { points: points.join(" "), class: "score-line", stroke: colour,
        "data-seat": seat.seat, "data-last": story[story.length - 1].scores[i] }, svg);
    });

    const marks = el("g", { class: "plot-marks" }, svg);
    for (const p of story) {
      for (const m of p.marks) {
        const seat = seats[m.seat];
        const fill = seat ? MedinaBoard.ROOF[seat.colour] : "#333";
        const cx = x(p.step), cy = y(p.scores[m.seat]);
        const shape = m.kind === "claim"
          ? el("circle", { cx, cy, r: 4.5 }, marks)
          : el("rect", { x: cx - 3.5, y: cy - 3.5, width: 7, height: 7 }, marks);
        shape.setAttribute("class", `mark ${m.kind}`);
        shape.setAttribute("fill", fill);
        shape.setAttribute("data-step", p.step);
        el("title", {}, shape, `step ${p.step}: seat ${m.seat} ${m.text}`);
      }
    }
    const cursor = el("line", { y1: TOP, y2: H - BOTTOM, class: "plot-cursor" }, svg);
    svg.plot = { x, cursor, max: xs.max, last: lastStep, width: W };
    move(svg, opts.cursor);
    if (opts.onPick && !svg.dataset.picks) {
      svg.dataset.picks = "yes";
      svg.addEventListener("click", (e) => {
        const box = svg.getBoundingClientRect();
        const plot = svg.plot;
        const at = (e.clientX - box.left) * plot.width / box.width;
        const step = Math.round((at - LEFT) / (plot.width - LEFT - RIGHT) * plot.max);
        opts.onPick(Math.max(0, Math.min(step, plot.last)));
      });
    }
    if (!svg.dataset.sized) {
      svg.dataset.sized = "yes";
      new ResizeObserver(() => redraw(svg)).observe(svg);
    }
  }

  // Draw the plot again at its new width (the window resized, a phone turned), the cursor
  // where it was.
  function redraw(svg) {
    const drawn = svg.drawn;
    if (!drawn || !svg.plot || Math.abs(shownWidth(svg) - svg.plot.width) < 0.5) return;
    const cursor = svg.dataset.cursor === undefined ? undefined : Number(svg.dataset.cursor);
    const shown = svg.plot.cursor.getAttribute("visibility") === "visible" ? cursor : undefined;
    draw(svg, drawn.story, drawn.seats, Object.assign({}, drawn.opts, { cursor: shown }));
  }

  // ``label`` shows the seat's number and name in at most ``room`` units: the name cut
  // with an ellipsis when it needs more (measured: a name's letters are not all as wide).
  function legend(label, seat, room) {
    const whole = `${seat.seat} ${MedinaBoard.isolate(seat.name)}`;
    label.textContent = whole;
    const letters = Array.from(seat.name);
    const fits = () => label.getComputedTextLength() <= room;
    if (!fits()) {
      let lo = 0, hi = letters.length - 1;  // the longest cut that fits is lo letters
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        label.textContent = `${seat.seat} ${MedinaBoard.isolate(letters.slice(0, mid).join("") + "…")}`;
        if (fits()) lo = mid;
        else hi = mid - 1;
      }
      label.textContent = `${seat.seat} ${MedinaBoard.isolate(letters.slice(0, lo).join("") + "…")}`;
    }
    el("title", {}, label, whole);
  }

  // Move the cursor to ``step`` (hidden when undefined).
  function move(svg, step) {
    const plot = svg.plot;
    if (!plot) return;
    if (step === undefined || step === null) {
      plot.cursor.setAttribute("visibility", "hidden");
      return;
    }
    plot.cursor.setAttribute("visibility", "visible");
    plot.cursor.setAttribute("x1", plot.x(step));
    plot.cursor.setAttribute("x2", plot.x(step));
    svg.dataset.cursor = String(step);
  }

  return { draw, move };
})();
