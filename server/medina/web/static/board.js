// The board as SVG and the panels beside it, drawn from the JSON view the server sends
// (medina/web/view.py). Shared by the live and replay pages; no dependencies.
"use strict";

const MedinaBoard = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const CELL = 36;
  // Room for the coordinates: at a phone's width the board is drawn at half its size and
  // they are drawn larger in its units (keepTextSize), so they need more than a desktop's.
  const MARGIN = 30;
  const PALACE = { grey: "#9a9a9a", purple: "#7e4fa3", brown: "#8a5a2e", orange: "#ee8a25" };
  const ROOF = { red: "#d23b2f", yellow: "#f2c12e", blue: "#2f6fd2", green: "#3a9a45" };
  const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function square(view, sq) {
    return { row: Math.floor(sq / view.cols), col: sq % view.cols };
  }

  function name(view, sq) {
    const { row, col } = square(view, sq);
    return LETTERS[col] + (row + 1);
  }

  function xy(view, sq) {
    const { row, col } = square(view, sq);
    return { x: MARGIN + col * CELL, y: MARGIN + row * CELL };
  }

  function cell(view, sq, cls, parent, attrs) {
    const { x, y } = xy(view, sq);
    return el("rect", Object.assign({ x: x + 1, y: y + 1, width: CELL - 2, height: CELL - 2,
      class: cls, "data-square": name(view, sq) }, attrs || {}), parent);
  }

  // A seat's name is the bot's or the organiser's: isolated wherever it is set among the
  // page's words, so that bidi controls in it (U+202E...) cannot turn the text after it
  // around. In the DOM a <bdi> of its own; in plain text (SVG titles) between FSI and PDI.
  // Its isolates paired (as names.py: balanced): a PDI that closes nothing is dropped, an
  // isolate left open is closed; either would pair with the isolation around the name.
  function balanced(name) {
    let depth = 0;
    let out = "";
    for (const ch of name) {
      if (ch === "\u2066" || ch === "\u2067" || ch === "\u2068") depth++;
      else if (ch === "\u2069") {
        if (!depth) continue;
        depth--;
      }
      out += ch;
    }
    return out + "\u2069".repeat(depth);
  }

  function isolate(name) {
    return `\u2068${balanced(name)}\u2069`;
  }

  function nameNode(name) {
    return text("bdi", balanced(name), { class: "name" });
  }

  // An element holding ``parts``: strings, and nodes (names) as they are.
  function words(tag, parts, attrs) {
    const node = text(tag, undefined, attrs);
    for (const part of parts) {
      node.appendChild(typeof part === "string" ? document.createTextNode(part) : part);
    }
    return node;
  }

  // Who holds a tile, as parts for words(): a seat, or nobody ("at the board edge", as
  // the rules say).
  function holder(view, seat) {
    if (seat === null || seat === undefined) return ["at the board edge"];
    const s = view.seats[seat];
    return s ? [nameNode(s.name), ` (${s.colour})`] : [`seat ${seat}`];
  }

  function seatName(view, seat) {
    if (seat === null || seat === undefined) return "the board";
    const s = view.seats[seat];
    return s ? `${isolate(s.name)} (${s.colour})` : `seat ${seat}`;
  }

  // An SVG scaled down by its viewBox (a phone's board is half the size it is drawn at)
  // scales its text down with it: the stylesheet keeps some text at least a readable size
  // in CSS pixels with --unit, the SVG's units per CSS pixel, kept true as it is resized
  // (viewer.css: .label).
  function keepTextSize(svg) {
    const set = () => {
      const box = svg.viewBox.baseVal;
      const shown = svg.clientWidth;
      // Rounded up: text a hair larger than asked, never smaller.
      if (box && box.width && shown) {
        svg.style.setProperty("--unit", String(Math.ceil(box.width / shown * 1000) / 1000));
      }
    };
    set();
    if (!svg.dataset.sized) {
      svg.dataset.sized = "yes";
      new ResizeObserver(set).observe(svg);
    }
  }

  function draw(svg, view) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const width = MARGIN * 2 + view.cols * CELL;
    const height = MARGIN * 2 + view.rows * CELL;
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    keepTextSize(svg);
    svg.setAttribute("data-decisions", view.decisions);
    const ground = el("g", { class: "ground" }, svg);
    el("rect", { x: 0, y: 0, width, height, class: "backdrop" }, ground);
    for (let c = 0; c < view.cols; c++) {
      el("text", { x: MARGIN + c * CELL + CELL / 2, y: MARGIN / 2, class: "label" }, ground, LETTERS[c]);
    }
    for (let r = 0; r < view.rows; r++) {
      el("text", { x: MARGIN / 2, y: MARGIN + r * CELL + CELL / 2, class: "label" }, ground, r + 1);
    }
    const ring = new Set(view.wall_spaces);
    const towers = new Set(view.towers);
    for (let sq = 0; sq < view.cols * view.rows; sq++) {
      if (towers.has(sq)) continue;
      cell(view, sq, ring.has(sq) ? "wall-space" : "city", ground);
    }
    const bonus = el("g", { class: "well-bonus" }, svg);
    for (const sq of view.well_bonus) {
      const { x, y } = xy(view, sq);
      el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: 3, class: "bonus-dot" }, bonus);
    }
    const walls = el("g", { class: "walls" }, svg);
    for (const sq of view.walls) cell(view, sq, "wall", walls);
    for (const sq of view.gates) {
      const g = cell(view, sq, "gate", walls);
      el("title", {}, g, `gate ${name(view, sq)}`);
    }
    view.towers.forEach((sq, t) => {
      const { x, y } = xy(view, sq);
      const tile = view.tower_tiles[t];
      const g = el("g", { class: "tower", "data-tower": t + 1 }, svg);
      el("rect", { x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, rx: 5 }, g);
      el("text", { x: x + CELL / 2, y: y + CELL / 2 + 4, class: "tower-label" }, g, `T${t + 1}`);
      el("title", {}, g, `tower ${t + 1}: tile ${tile.holder === null ? "at the board edge" : "with " + seatName(view, tile.holder)}`);
    });
    if (view.well >= 0) {
      const { x, y } = xy(view, view.well);
      const g = el("g", { class: "well" }, svg);
      el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: CELL / 2 - 4 }, g);
      el("title", {}, g, `well ${name(view, view.well)}`);
    }
    const street = new Set(view.street);
    const merchants = el("g", { class: "merchants" }, svg);
    for (const sq of view.merchants) {
      const { x, y } = xy(view, sq);
      const onStreet = street.has(sq);
      if (onStreet) cell(view, sq, "street", merchants);
      el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: CELL / 4,
        class: onStreet ? "merchant on-street" : "merchant", "data-square": name(view, sq) }, merchants);
    }
    const palaces = el("g", { class: "palaces" }, svg);
    view.palaces.forEach((p, i) => {
      const g = el("g", { class: "palace", "data-colour": p.colour, "data-palace": i,
        "data-owner": p.owner === null ? (p.neutral ? "neutral" : "none") : p.owner }, palaces);
      const outline = p.roof_colour ? ROOF[p.roof_colour] : "#4a3b2a";
      for (const sq of p.buildings) {
        cell(view, sq, "building", g, { fill: PALACE[p.colour], stroke: outline });
      }
      for (const sq of p.stables) {
        const { x, y } = xy(view, sq);
        cell(view, sq, "stable", g, { stroke: PALACE[p.colour] });
        el("text", { x: x + CELL / 2, y: y + CELL / 2 + 4, class: "stable-label",
          fill: PALACE[p.colour] }, g, "S");
      }
      if (p.roof_square !== null) {
        const { x, y } = xy(view, p.roof_square);
        const cx = x + CELL / 2;
        const roof = el("polygon", {
          points: `${cx},${y + 5} ${x + CELL - 5},${y + CELL / 2} ${cx},${y + CELL - 5} ${x + 5},${y + CELL / 2}`,
          class: "rooftop", fill: ROOF[p.roof_colour] || "#fff" }, g);
        const who = p.neutral ? "neutral" : `seat ${p.owner}`;
        el("title", {}, roof, `${p.colour} palace, ${p.roof} (${who})`);
        if (p.owner !== null) {
          el("text", { x: cx, y: y + CELL / 2 + 4, class: "owner-label" }, g, p.owner);
        }
      }
    });
    markLast(svg, view);
  }

  // The newest decision's square ringed, dark outside and bright inside, so the piece keeps
  // its colour (its turn's earlier placements dashed);
  // data-last on the SVG names its square ("tea" for a tea break, "" at the start).
  function markLast(svg, view) {
    const last = view.last;
    svg.setAttribute("data-last", last ? (last.square === null ? "tea" : name(view, last.square)) : "");
    if (!last) return;
    const marks = el("g", { class: "last-marks" }, svg);
    for (const sq of last.turn) {
      const { x, y } = xy(view, sq);
      el("rect", { x: x + 1, y: y + 1, width: CELL - 2, height: CELL - 2, class: "turn-move",
        "data-square": name(view, sq) }, marks);
    }
    if (last.square === null) return;
    const { x, y } = xy(view, last.square);
    const ring = el("rect", { x: x - 1, y: y - 1, width: CELL + 2, height: CELL + 2, rx: 3,
      class: last.by_referee ? "last-move by-referee" : "last-move",
      "data-square": name(view, last.square) }, marks);
    el("rect", { x: x + 2.5, y: y + 2.5, width: CELL - 5, height: CELL - 5, rx: 2,
      class: "last-move-inner" }, marks);
    el("title", {}, ring, `last move: seat ${last.seat}, ${last.text}` +
      (last.by_referee ? " (by the referee)" : ""));
  }

  function text(tag, content, attrs) {
    const node = document.createElement(tag);
    if (content !== undefined) node.textContent = content;
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }

  const PARTS = [["buildings", "buildings"], ["stables", "stables"], ["walls", "walls"],
    ["merchants", "merchants"], ["well", "well"], ["palace_tiles", "palace tiles"],
    ["tower_tiles", "tower tiles"]];

  function breakdownText(b) {
    const shown = PARTS.filter(([k]) => b[k]).map(([k, label]) => `${label} ${b[k]}`);
    return shown.length ? shown.join(" + ") : "nothing scores yet";
  }

  // Rooftops left: the count (palace colours in the title); in medina-v1-2p also the
  // blocking rooftops left, in their own colour.
  function roofCell(s) {
    const cell = text("td", undefined, { class: "roofs" });
    cell.appendChild(text("span", String(s.rooftops.length),
      { title: `rooftops left for: ${s.rooftops.join(", ") || "none"}` }));
    if (s.neutral) cell.appendChild(text("span", ` +${s.neutral} neutral`));
    if (s.blocking_colour) {
      cell.appendChild(text("span", " · blocking "));
      cell.appendChild(text("span", "", { class: `swatch roof-${s.blocking_colour}` }));
      cell.appendChild(text("span", ` ${s.blocking.length}`, { class: "blocking",
        "data-blocking": s.blocking.join(" "),
        title: `blocking rooftops left for: ${s.blocking.join(", ") || "none"}` }));
    }
    return cell;
  }

  function supplyText(seat) {
    if (!seat.supply) return "hidden";
    const s = seat.supply;
    const b = Object.entries(s.buildings).map(([c, n]) => `${c[0]}${n}`).join(" ");
    return `buildings ${b} · stables ${s.stables} · merchants ${s.merchants} · walls ${s.walls}`;
  }

  function scores(table, view) {
    table.textContent = "";
    const head = text("tr");
    const roofs = view.seats.some((s) => s.blocking_colour) ? "rooftops left" : "rooftops";
    for (const h of ["", "seat", "score", roofs, "tea"]) head.appendChild(text("th", h));
    table.appendChild(head);
    for (const s of view.seats) {
      const row = text("tr", undefined, { "data-seat": s.seat, "data-score": s.score });
      if (s.seat === view.to_move && view.phase !== "over") row.classList.add("to-move");
      const swatch = text("td");
      swatch.appendChild(text("span", "", { class: `swatch roof-${s.colour}` }));
      row.appendChild(swatch);
      row.appendChild(words("td", [`${s.seat} `, nameNode(s.name)], { class: "name" }));
      row.appendChild(text("td", s.score, { class: "score" }));
      row.appendChild(roofCell(s));
      row.appendChild(text("td", s.tea));
      table.appendChild(row);
      const parts = text("tr", undefined, { class: "breakdown-row", "data-breakdown": s.seat });
      parts.appendChild(text("td"));
      parts.appendChild(text("td", breakdownText(s.breakdown), { colspan: 4, class: "breakdown" }));
      table.appendChild(parts);
      const line = text("tr", undefined, { class: "supply-row" });
      line.appendChild(text("td"));
      line.appendChild(text("td", `supply: ${supplyText(s)}`,
        { colspan: 4, class: s.supply ? "supply" : "supply hidden" }));
      table.appendChild(line);
    }
  }

  function tiles(box, view) {
    box.textContent = "";
    const list = text("ul");
    for (const t of view.palace_tiles) {
      list.appendChild(words("li", [`${t.colour} palace tile: `, ...holder(view, t.holder)]));
    }
    for (const t of view.tower_tiles) {
      list.appendChild(words("li", [`tower ${t.tower} tile: `, ...holder(view, t.holder),
        t.merchants ? ` (${t.merchants} merchant${t.merchants > 1 ? "s" : ""})` : ""]));
    }
    if (view.tea_pool) list.appendChild(text("li", `tea tiles left: ${view.tea_pool}`));
    if (view.exhausted.length) list.appendChild(text("li", `exhausted: ${view.exhausted.join(", ")}`));
    box.appendChild(list);
  }

  // Each line numbered by its decision's step, as the replay numbers it; a pass and the
  // game's end are no decision: listed, unnumbered.
  function moves(list, lines) {
    list.textContent = "";
    for (const line of lines) {
      const li = list.appendChild(text("li", line.text));
      if (line.step === null) li.classList.add("no-step");
      else li.value = line.step;
      if (line.text.endsWith(" (by the referee)")) li.classList.add("by-referee");
    }
    // The newest move: passes and the game's end are listed, but are no one's move.
    const newest = [...list.children].reverse().find((li) => !li.classList.contains("no-step"));
    if (newest) {
      newest.classList.add("current");
      keepInView(list, newest);
    }
  }

  // Scroll ``list`` (a scrolling, positioned box) so that ``item`` is inside it, centred
  // when it has to move. ``item.offsetTop`` is measured from the list itself, which is the
  // item's offset parent (position: relative).
  function keepInView(list, item) {
    const top = item.offsetTop;
    const bottom = top + item.offsetHeight;
    if (top >= list.scrollTop && bottom <= list.scrollTop + list.clientHeight) return;
    list.scrollTop = Math.max(0, top - (list.clientHeight - item.offsetHeight) / 2);
  }

  function result(box, res) {
    box.textContent = "";
    if (!res) { box.hidden = true; return; }
    box.hidden = false;
    box.appendChild(text("h2", `Result (${res.ending})`));
    const table = text("table", undefined, { class: "final" });
    const ranked = [...res.seats].sort((a, b) => a.rank - b.rank || a.seat - b.seat);
    for (const s of ranked) {
      const row = text("tr", undefined, { "data-seat": s.seat, "data-total": s.total });
      row.appendChild(text("td", `#${s.rank}`));
      row.appendChild(words("td", [`${s.seat} `, nameNode(s.name)], { class: "name" }));
      row.appendChild(text("td", s.total, { class: "total" }));
      row.appendChild(text("td", s.termination + (s.detail ? `: ${s.detail}` : "")));
      table.appendChild(row);
    }
    const scroll = text("div", undefined, { class: "table-scroll" });
    scroll.appendChild(table);
    box.appendChild(scroll);
  }

  return { draw, scores, tiles, moves, result, name, keepInView, isolate, ROOF };
})();
