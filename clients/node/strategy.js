'use strict';
/**
 * The strategy of the Node.js Medina bot: THE FILE TO EDIT to write your own bot.
 *
 * bot.js does the talking (handshake, replies, retries after a refusal, reconnects) and
 * calls `choose(turn)` once for every decision the server asks of your seat. Replace the
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

/**
 * ===== YOUR STRATEGY GOES HERE =====
 *
 * Called once when the bot starts, with `{ seed }` (a BigInt from `--seed`, 0 by default).
 * Returns the strategy: its `name` and `version` (sent in Hello, shown in results; `--name`
 * overrides the name) and `choose(turn)`.
 *
 * This one plays uniformly at random among the legal actions, from a seeded PRNG.
 */
function createStrategy({ seed = 0n } = {}) {
  const random = mulberry32(seed32(seed));
  return {
    name: 'node-random',
    version: '1',
    choose(turn) {
      if (turn.legal.length === 0) {
        return null; // nothing listed: bot.js leaves the decision to the referee
      }
      return turn.legal[Math.floor(random() * turn.legal.length)];
    },
  };
}

module.exports = { createStrategy, mulberry32, seed32 };
