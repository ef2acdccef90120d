'use strict';
/**
 * The strategy of the Node.js Medina bot: THE FILE TO EDIT to write your own bot.
 *
 * bot.js does the talking (handshake, replies, retries after a refusal, reconnects,
 * redirects) and calls `choose(turn)` once for every decision the server asks of your seat. Replace the
 * body of `choose` (and whatever state you keep in `createStrategy`) with your own play;
 * or keep this file and point the bot at yours with `--strategy path/to/mine.js`, which
 * must export `createStrategy` the same way.
 *
 * A turn holds:
 *   turn.legal        every legal action still open for this request, as plain objects
 *                     { kind, square, colour } (enum names such as 'ACTION_KIND_WALL' and
 *                     'PALACE_COLOUR_GREY'); an action the server refused for this request
 *                     is left out when you are asked again
 *   turn.excluded     the actions the server refused for this request so far
 *   turn.seat         your seat (0-based)
 *   turn.requestId    the request being answered (a decimal string: it is a uint64)
 *   turn.observation  the game as your seat sees it (medina.v1.Observation as an object,
 *                     field names as in proto/medina/v1/game.proto)
 *   turn.clock        { time_left_ms, bank_ms, last_reply_ms, strikes }
 *   turn.welcome      the Welcome of the current connection (match config, resume token, ...)
 *
 * Return one action: usually an element of `turn.legal`, or any object of the same shape
 * (the server refuses illegal ones, and you are asked again without them).
 *
 * Optional hooks of the strategy object, called by bot.js when present:
 *   reseed(seed)      without --seed, called once at the first Welcome with the match's seed
 *                     (a BigInt: the match seed * 4 + your seat), before any choose: another
 *                     match seed or seat, another game
 *   onUpdate(events)  the other seats' moves as they happen (medina.v1.Event objects); a
 *                     strategy that has it makes bot.js ask the server for Update messages,
 *                     one without it is served without them (every turn.observation.events
 *                     holds the events since your previous request anyway)
 */

/** A small seeded PRNG (mulberry32): with the same seed and opponents, the same game. */
function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Folds an integer seed of any size (a BigInt) into the 32 bits mulberry32 takes. */
function seed32(seed) {
  let s = BigInt.asUintN(64, BigInt(seed));
  s ^= s >> 32n;
  return Number(BigInt.asUintN(32, s));
}

const COLOURS = ['PALACE_COLOUR_GREY', 'PALACE_COLOUR_PURPLE', 'PALACE_COLOUR_BROWN', 'PALACE_COLOUR_ORANGE'];
const BUILDING_CELLS = ['CELL_BUILDING_GREY', 'CELL_BUILDING_PURPLE', 'CELL_BUILDING_BROWN', 'CELL_BUILDING_ORANGE'];
/** Pieces per seat at the start (all colours' buildings, rooftops, stables, merchants, walls). */
const PIECES = {
  'RULESET_MEDINA_V2/2': 4 * 8 + 4 + 2 + 4 + 12 + 15,
  'RULESET_MEDINA_V2/3': 4 * 6 + 4 + 1 + 4 + 8 + 12,
  'RULESET_MEDINA_V2/4': 4 * 5 + 4 + 3 + 6 + 9,
  'RULESET_MEDINA_V1/3': 4 * 6 + 4 + 4 + 8 + 10,
  'RULESET_MEDINA_V1/4': 4 * 5 + 4 + 3 + 6 + 8,
  'RULESET_MEDINA_V1_2P/2': 4 * 9 + 4 + 4 + 6 + 12 + 16,
};
/** The greedy weights, as in the Python reference strategies' medina/strategies/heuristics.py. */
const ROOFTOP_RESERVE = 10; // an unplaced rooftop at the start of the game
const OPEN_MINE = 0.9; // share of an open palace the mover keeps while its turn goes on
const OPEN_GIFT = 0.8; // share an opponent takes of a palace left open
const OPPONENT = 0.6; // weight of a point given to an opponent
const TEA = 0.6; // a tea tile held

/** An optional proto3 field as proto-loader gives it: the value, or `missing` when unset. */
function optional(message, field, missing) {
  const set = message[`_${field}`];
  if (set !== undefined) {
    return set === field ? message[field] : missing;
  }
  const value = message[field];
  return value === undefined || value === null ? missing : value;
}

/** Everything the heuristic reads from one observation, as arrays and sets of squares. */
class Position {
  constructor(observation, seat) {
    const board = observation.board;
    this.seat = seat;
    this.players = observation.players;
    this.cols = board.cols;
    this.rows = board.rows;
    this.cells = board.cells;
    this.quota = observation.quota;
    this.placed = observation.placed;
    this.owner = new Map(); // square -> palace index (buildings and stables)
    this.palaces = board.palaces.map((p, index) => {
      const colour = COLOURS.indexOf(p.colour);
      const roof = p.rooftop && p.rooftop.kind && p.rooftop.kind !== 'ROOFTOP_KIND_UNSPECIFIED' ? p.rooftop : null;
      const pieces = [...p.buildings, ...p.stables];
      for (const sq of pieces) this.owner.set(sq, index);
      return {
        colour,
        buildings: p.buildings,
        pieces,
        claimed: roof !== null,
        scoresFor: roof && roof.kind === 'ROOFTOP_KIND_PLAYER' ? optional(roof, 'owner', -1) : -1,
        competes: roof !== null && roof.kind !== 'ROOFTOP_KIND_BLOCKING',
      };
    });
    this.biggest = [0, 0, 0, 0];
    for (const p of this.palaces) {
      if (p.competes) this.biggest[p.colour] = Math.max(this.biggest[p.colour], p.pieces.length);
    }
    this.roofs = new Map(); // seat -> Set of palace colour indices it may still claim
    for (const view of observation.seats) {
      this.roofs.set(view.seat, new Set(view.rooftops.map((c) => COLOURS.indexOf(c))));
    }
    const well = this.cells.indexOf('CELL_WELL');
    this.bonus = new Set();
    if (well >= 0) {
      const [r, c] = [Math.floor(well / this.cols), well % this.cols];
      for (const [dr, dc] of [[-2, 0], [2, 0], [0, -2], [0, 2]]) {
        const [rr, cc] = [r + dr, c + dc];
        if (rr > 0 && rr < this.rows - 1 && cc > 0 && cc < this.cols - 1) this.bonus.add(rr * this.cols + cc);
      }
    }
    let onBoard = 0;
    for (const cell of this.cells) {
      if (cell === 'CELL_WALL' || cell === 'CELL_MERCHANT' || cell === 'CELL_STABLE' || BUILDING_CELLS.includes(cell)) {
        onBoard += 1;
      }
    }
    onBoard += this.palaces.filter((p) => p.claimed).length;
    const total = (PIECES[`${observation.ruleset}/${this.players}`] || 60) * this.players;
    this.progress = Math.min(1, onBoard / total);
    this.reserve = ROOFTOP_RESERVE * (1 - this.progress);
    this.tileWeight = 0.4 + 0.6 * this.progress;
  }

  neighbours(sq) {
    const out = [];
    const c = sq % this.cols;
    if (c > 0) out.push(sq - 1);
    if (c < this.cols - 1) out.push(sq + 1);
    if (sq >= this.cols) out.push(sq - this.cols);
    if (sq + this.cols < this.cols * this.rows) out.push(sq + this.cols);
    return out;
  }

  /** What a palace of these pieces would score: pieces, walls and merchants next to it, well bonus. */
  value(pieces) {
    const mine = new Set(pieces);
    const near = new Set();
    for (const sq of pieces) for (const n of this.neighbours(sq)) if (!mine.has(n)) near.add(n);
    let v = pieces.length;
    for (const n of near) if (this.cells[n] === 'CELL_WALL' || this.cells[n] === 'CELL_MERCHANT') v += 1;
    for (const sq of pieces) if (this.bonus.has(sq)) v += 4;
    return v;
  }

  /** The value of claiming a palace of these pieces and colour: its score and maybe its tile. */
  claimValue(colour, pieces) {
    const tile = pieces.length > this.biggest[colour] ? (colour + 1) * this.tileWeight : 0;
    return this.value(pieces) + tile;
  }

  /** The first opponent in turn order who may still claim `colour`, or -1. */
  nextClaimer(colour) {
    for (let k = 1; k < this.players; k += 1) {
      const seat = (this.seat + k) % this.players;
      if (this.roofs.get(seat) && this.roofs.get(seat).has(colour)) return seat;
    }
    return -1;
  }

  /** How much growing an unclaimed palace (or starting one) from `before` to `after` is worth. */
  growth(colour, before, after) {
    const mineLater = this.quota - this.placed - 1 > 0 && this.roofs.get(this.seat).has(colour);
    if (mineLater) {
      const gain = (pieces) => (pieces.length ? Math.max(0, OPEN_MINE * this.claimValue(colour, pieces) - this.reserve) : 0);
      return gain(after) - gain(before);
    }
    if (this.nextClaimer(colour) < 0) return 0;
    const gift = (pieces) => (pieces.length ? Math.max(0, OPEN_GIFT * this.claimValue(colour, pieces) - this.reserve) : 0);
    return -OPPONENT * (gift(after) - gift(before));
  }

  /** Points next to `sq` for the owners of claimed palaces there: + for mine, - for others'. */
  nextTo(sq) {
    let v = 0;
    const seen = new Set();
    for (const n of this.neighbours(sq)) {
      const index = this.owner.get(n);
      if (index === undefined || seen.has(index)) continue;
      seen.add(index);
      const p = this.palaces[index];
      if (p.scoresFor === this.seat) v += 1;
      else if (p.scoresFor >= 0) v -= OPPONENT;
      else if (!p.claimed) v += this.roofs.get(this.seat).has(p.colour) ? 0.2 : -0.2;
    }
    return v;
  }

  /** The greedy value of one legal action for the seat to move (higher is better). */
  actionValue(action) {
    const sq = action.square;
    switch (action.kind) {
      case 'ACTION_KIND_ROOFTOP': {
        const p = this.palaces[this.owner.get(sq)];
        return p ? this.claimValue(p.colour, p.pieces) - this.reserve : 0;
      }
      case 'ACTION_KIND_NEUTRAL_ROOFTOP':
      case 'ACTION_KIND_BLOCKING_ROOFTOP': {
        const p = this.palaces[this.owner.get(sq)];
        if (!p || this.nextClaimer(p.colour) < 0) return -1;
        return OPPONENT * Math.max(0, OPEN_GIFT * this.claimValue(p.colour, p.pieces) - this.reserve) - 1;
      }
      case 'ACTION_KIND_BUILDING': {
        const colour = COLOURS.indexOf(action.colour);
        const index = this.neighbours(sq)
          .map((n) => this.owner.get(n))
          .find((i) => i !== undefined && !this.palaces[i].claimed && this.palaces[i].colour === colour);
        const before = index === undefined ? [] : this.palaces[index].pieces;
        return this.growth(colour, before, [...before, sq]);
      }
      case 'ACTION_KIND_STABLE': {
        const index = this.neighbours(sq)
          .map((n) => this.owner.get(n))
          .find((i) => i !== undefined && this.palaces[i].buildings.some((b) => this.neighbours(sq).includes(b)));
        if (index === undefined) return 0;
        const p = this.palaces[index];
        const after = [...p.pieces, sq];
        if (!p.claimed) return this.growth(p.colour, p.pieces, after);
        const more = this.value(after) - this.value(p.pieces);
        const tile = p.competes && after.length > this.biggest[p.colour] && p.pieces.length <= this.biggest[p.colour]
          ? (p.colour + 1) * this.tileWeight : 0;
        if (p.scoresFor === this.seat) return more + tile;
        return -OPPONENT * (p.scoresFor >= 0 ? more + tile : 0);
      }
      case 'ACTION_KIND_MERCHANT':
      case 'ACTION_KIND_WALL':
        return this.nextTo(sq);
      case 'ACTION_KIND_TEA':
        return -TEA;
      default:
        return 0;
    }
  }
}

/** The greedy strategy: the legal action of best heuristic value, ties broken by the PRNG. */
function greedyChoice(turn, random) {
  const position = new Position(turn.observation, turn.seat);
  let best = [];
  let bestValue = -Infinity;
  for (const action of turn.legal) {
    const value = position.actionValue(action);
    if (value > bestValue + 1e-9) {
      best = [action];
      bestValue = value;
    } else if (value > bestValue - 1e-9) {
      best.push(action);
    }
  }
  return best[Math.floor(random() * best.length)];
}

/** The strategies this file offers, by `--bot` name. */
const BOTS = ['greedy', 'random'];

/**
 * ===== YOUR STRATEGY GOES HERE =====
 *
 * Called once when the bot starts, with `{ seed, bot }` (`seed` a BigInt from `--seed`, or
 * null without it: then `reseed` is called with the match's seed at the first Welcome; `bot`
 * from `--bot`, 'greedy' by default). Returns the strategy: its `name` and `version` (sent in
 * Hello, shown in results; `--name` overrides the name), `choose(turn)` and the optional
 * hooks listed at the top of this file.
 *
 * 'greedy' values every legal action with a one-ply heuristic (claim palaces worth more than
 * the rooftop's reserve, grow a palace only when it can be claimed in the same turn, never
 * leave the next player a palace worth taking, walls and merchants next to your palaces, a
 * tea break rather than a harmful placement); 'random' plays uniformly at random. Both draw
 * from a seeded PRNG.
 */
function createStrategy({ seed = null, bot = 'greedy' } = {}) {
  if (!BOTS.includes(bot)) {
    throw new Error(`unknown bot '${bot}': expected one of ${BOTS.join(', ')}`);
  }
  let random = mulberry32(seed32(seed === null ? 0n : seed));
  return {
    name: `node-${bot}`,
    version: '1',
    reseed(matchSeed) {
      random = mulberry32(seed32(matchSeed));
    },
    choose(turn) {
      if (turn.legal.length === 0) {
        return null; // nothing listed: bot.js leaves the decision to the referee
      }
      if (bot === 'greedy') {
        return greedyChoice(turn, random);
      }
      return turn.legal[Math.floor(random() * turn.legal.length)];
    },
  };
}

module.exports = { BOTS, Position, createStrategy, greedyChoice, mulberry32, seed32 };
