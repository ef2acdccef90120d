#!/usr/bin/env node
// A Medina Arena bot that plays random legal actions over the stdio line protocol
// (docs/protocol.md, "stdio bots"). Plain Node, built-in modules only.
//
//   python -m medina_client stdio --server HOST:PORT --token TOKEN -- node random_bot.js [--seed N]
//
// stdin: one JSON line per server message (a medina.v1.PlayResponse); stdout: one JSON line
// (a medina.v1.Action) for each "request" and each "rejected" line; stderr: the log.
'use strict';

const readline = require('node:readline');

function parseSeed(argv) {
  const i = argv.indexOf('--seed');
  if (i < 0) return 1;
  const seed = Number(argv[i + 1]);
  if (!Number.isInteger(seed)) {
    process.stderr.write(`random_bot: --seed needs an integer, not ${argv[i + 1]}\n`);
    process.exit(2);
  }
  return seed;
}

// mulberry32: a small seeded generator, so a seed replays the same choices.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seed = parseSeed(process.argv.slice(2));
const random = generator(seed);
const log = (text) => process.stderr.write(`random_bot: ${text}\n`);

// Every action a LegalActions message lists. The bridge writes every field out (an empty
// list as [], no colour as PALACE_COLOUR_UNSPECIFIED); the fallbacks below are for other
// writers of the JSON mapping, which may leave out fields at their default.
function legalActions(legal) {
  const actions = [];
  for (const group of (legal && legal.placements) || []) {
    for (const square of group.squares || []) {
      const action = { kind: group.kind, square };
      if (group.colour) action.colour = group.colour;
      actions.push(action);
    }
  }
  if (legal && legal.tea) actions.push({ kind: 'ACTION_KIND_TEA' });
  return actions;
}

const same = (a, b) => a.kind === b.kind && a.square === b.square && a.colour === b.colour;

let request = null; // the request being decided (a "rejected" line refers to it)
let refused = []; // actions the server refused for it

function answer() {
  const choices = legalActions(request && request.legal).filter(
    (a) => !refused.some((r) => same(a, r)),
  );
  let action;
  if (choices.length === 0) {
    // Still one line per request: an empty Action, which the server refuses as malformed.
    log('no legal action to choose from (are legal actions omitted?)');
    action = {};
  } else {
    action = choices[Math.floor(random() * choices.length)];
  }
  refused.push(action);
  process.stdout.write(JSON.stringify(action) + '\n');
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });

input.on('line', (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.welcome) {
    const seat = message.welcome.seat; // the bridge writes every field out, seat 0 included
    log(`playing seat ${seat} of match ${message.welcome.matchId} (seed ${seed})`);
  } else if (message.request) {
    request = message.request;
    refused = [];
    answer();
  } else if (message.rejected) {
    const r = message.rejected;
    log(`request ${r.requestId} refused (${r.rule || r.code}): ${r.message}`);
    if (!request || request.requestId !== r.requestId) refused = [];
    answer();
  } else if (message.notice) {
    log(`notice (${message.notice.code}): ${message.notice.message}`);
  } else if (message.ended) {
    const scores = (message.ended.result.seats || []).map(
      (s) => `seat ${s.seat}: ${s.total} (rank ${s.rank})`,
    );
    log(`match over: ${scores.join(', ')}`);
  }
  // "update" lines carry other seats' moves; a random bot needs nothing from them.
});

input.on('close', () => process.exit(0));
