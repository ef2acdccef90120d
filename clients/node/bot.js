#!/usr/bin/env node
'use strict';
/**
 * A Medina Arena bot for Node.js: plays one seat of one match over gRPC.
 *
 *   node bot.js --server HOST:PORT --token TOKEN [--name N] [--seed S]
 *
 * The .proto files are loaded at run time from the repository's proto/ directory, so there
 * is no generated code. This file is the plumbing (handshake, replies, retries after a
 * refusal, reconnects with the resume token, redirects to the process holding the match,
 * the reason of an error status); the play itself is in strategy.js.
 * See README.md beside this file and docs/protocol.md for the message flow.
 */

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const PROG = 'medina-node-bot';
const PROTOCOL_VERSION = 1;
/** The minor version this bot speaks (protocol 1.1). */
const PROTOCOL_MINOR = 1;
/** Opt-in features this bot handles (docs/protocol.md, "Versions and features"). */
const FEATURES = ['forfeit-notices'];
/**
 * The feature of redirects to the process holding the match (docs/protocol.md, "Redirects"),
 * asked for while the route allows it.
 */
const REDIRECT = 'redirect';
/** Redirects followed in a row before the bot goes back to the address it was given. */
const MAX_REDIRECTS = 3;
const DEFAULT_PROTO_DIR = path.resolve(__dirname, '..', '..', 'proto');
const DEFAULT_STRATEGY = path.join(__dirname, 'strategy.js');
/** Reconnect attempts after a break (the server keeps a seat 15 s by default). */
const RECONNECT_ATTEMPTS = 8;
const FIRST_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 1000;
/** A server that accepted the stream but sends no Welcome is given up on after this. */
const HANDSHAKE_TIMEOUT_MS = 30000;
/** How long the bot waits, after MatchEnded, for the server to end the stream (it does at
 * once). Leaving before that status arrives cancels the stream, which costs the server
 * memory inside gRPC (docs/protocol.md, "A match, start to end"). */
const END_WAIT_MS = 2000;
/** The domain of a Medina Arena server's ErrorInfo; the trailer that carries it. */
const ERROR_DOMAIN = 'medina.v1';
const DETAILS_KEY = 'grpc-status-details-bin';
/**
 * ErrorInfo reasons (docs/protocol.md, "Errors") that retrying with backoff may fix: the
 * server is busy or restarting a worker, or the seat is still held by a stream of ours that
 * broke without the server noticing. As the Python SDK's RETRY.
 */
const RETRY_REASONS = new Set([
  'NO_WORKER',
  'TOO_MANY_STREAMS',
  'SEAT_TAKEN',
  'SERVER_FULL',
  'HELLO_TIMEOUT',
]);
/** Reasons that end the session for good: nothing is left to play on this seat (FINAL). */
const FINAL_REASONS = new Set([
  'MATCH_OVER',
  'SEAT_FORFEITED',
  'SEAT_TOKEN_UNKNOWN',
  'PROTOCOL_VERSION_UNSUPPORTED',
  'WORKER_LOST',
  'SHUTTING_DOWN',
  'HELLO_MISSING',
  'HELLO_INVALID',
  'SEAT_TAKEN_OVER',
]);
/**
 * Without a reason (a 1.0 server), statuses that end a handshake for a cause retrying cannot
 * fix (as in the Python SDK).
 */
const HANDSHAKE_CODES = new Set([
  grpc.status.UNAUTHENTICATED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.ALREADY_EXISTS,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.PERMISSION_DENIED,
  grpc.status.NOT_FOUND,
  grpc.status.UNIMPLEMENTED,
]);

const USAGE = `usage: node bot.js --server HOST:PORT (--token TOKEN | --bot-key KEY) [options]

Plays one seat of a Medina Arena match with the strategy in strategy.js; with --bot-key,
plays match after match on a ladder until stopped (Ctrl-C finishes the matches in play,
a second Ctrl-C quits).

options:
  --server HOST:PORT   the arena server, or the ladder (env MEDINA_SERVER)
  --token TOKEN        the seat token from the organiser (env MEDINA_TOKEN)
  --bot-key KEY        play on the ladder with this bot key (env MEDINA_BOT_KEY)
  --bot-version V      ladder: the version to rate (a new one starts a new rating line)
  --max-matches N      ladder: matches at once (default: the ladder's, 1)
  --name NAME          bot name shown in results (default: the strategy's name)
  --seed S             seed of the strategy's randomness, an integer (default: from
                       the match, its seed * 4 + this seat, at the first Welcome)
  --bot NAME           strategy.js's bot: greedy (default) or random
  --strategy FILE      a module exporting createStrategy (default: strategy.js here)
  --updates            ask for Update messages (the default when the strategy has onUpdate)
  --no-updates         ask for none (the default otherwise; requests carry the events anyway)
  --proto-dir DIR      directory holding medina/v1/*.proto (env MEDINA_PROTO_DIR;
                       default: the repository's proto/)
  --tls-ca FILE        CA certificate (PEM) to verify the server; turns TLS on
  --tls-cert FILE      client certificate (PEM) for mutual TLS (needs --tls-key)
  --tls-key FILE       client private key (PEM) for mutual TLS (needs --tls-cert)
  --quiet              no result line
  -h, --help           this help

Exit status: 0 when the match ended, or when the server says it is over (reason
MATCH_OVER); 1 when the server refused the seat or ended the session for another reason
(SEAT_FORFEITED, SEAT_TOKEN_UNKNOWN, ...), or the connection was lost for good; 2 for bad
options. Error messages name the gRPC status and the server's reason, e.g.
"handshake refused (FAILED_PRECONDITION, MATCH_OVER): the match is over".`;

/** A problem with the command line or the files it names: exit status 2. */
class UsageError extends Error {}
/**
 * The server sent the stream elsewhere (protocol 1.1 Redirect): open it again at `host`
 * (empty: the host of the address connected to) and `port`. Session.play follows it.
 */
class Redirected extends Error {
  constructor(host, port) {
    super(`redirected to ${host || 'the same host'}:${port}`);
    this.host = host;
    this.port = port;
  }
}
/**
 * The server refused the handshake for good (bad token, match over, seat forfeited):
 * not retried. `reason` is the ErrorInfo reason ('' from a server that sends none).
 */
class HandshakeRefused extends Error {
  constructor(message, reason = '') {
    super(message);
    this.reason = reason;
  }
}
/** After Welcome, the server ended the session for a reason no retry can fix: not retried. */
class SessionOver extends Error {
  constructor(message, reason) {
    super(message);
    this.reason = reason;
  }
}
/** The stream failed or closed before MatchEnded: retried with the resume token. */
class ConnectionLost extends Error {
  constructor(message, reason = '') {
    super(message);
    this.reason = reason;
  }
}
/** The server sent something this bot cannot follow (no Welcome first): not retried. */
class ProtocolError extends Error {}

function log(message) {
  process.stderr.write(`${PROG}: ${message}\n`);
}

/** Command line and environment -> options; UsageError names the bad option. */
function parseOptions(argv, env) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        server: { type: 'string' },
        token: { type: 'string' },
        'bot-key': { type: 'string' },
        'bot-version': { type: 'string' },
        'max-matches': { type: 'string' },
        name: { type: 'string' },
        seed: { type: 'string' },
        strategy: { type: 'string' },
        bot: { type: 'string' },
        updates: { type: 'boolean' },
        'no-updates': { type: 'boolean' },
        'proto-dir': { type: 'string' },
        'tls-ca': { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new UsageError(err.message);
  }
  if (parsed.help) {
    return { help: true };
  }
  const server = parsed.server || env.MEDINA_SERVER;
  const botKey = parsed['bot-key'] || (parsed.token ? '' : env.MEDINA_BOT_KEY || '');
  const token = parsed.token || (botKey ? '' : env.MEDINA_TOKEN);
  if (parsed.token && parsed['bot-key']) {
    throw new UsageError('--token plays one seat, --bot-key plays on a ladder: give one');
  }
  if (!server || !(token || botKey)) {
    throw new UsageError(
      '--server and --token (or --bot-key) are required (or MEDINA_SERVER / MEDINA_TOKEN / ' +
        'MEDINA_BOT_KEY)',
    );
  }
  // HOST:PORT (or [v6]:PORT) with a port out of range: refused here, not retried at every
  // reconnect. Other targets (unix:PATH) are left to gRPC.
  const hostPort = /^(.+):(\d+)$/.exec(server);
  if (hostPort && !hostPort[1].includes('/')) {
    const port = Number(hostPort[2]);
    if (port < 1 || port > 65535) {
      throw new UsageError(`server address ${server}: a port is 1 to 65535, got ${port}`);
    }
  }
  let maxMatches = null;
  if (parsed['max-matches'] !== undefined) {
    if (!/^\d+$/.test(parsed['max-matches']) || Number(parsed['max-matches']) < 1) {
      throw new UsageError(`--max-matches must be an integer >= 1, got '${parsed['max-matches']}'`);
    }
    maxMatches = Number(parsed['max-matches']);
  }
  const seedText = parsed.seed === undefined ? null : parsed.seed.trim();
  if (seedText !== null && !/^-?\d+$/.test(seedText)) {
    throw new UsageError(`--seed must be an integer, got '${parsed.seed}'`);
  }
  if (parsed.updates && parsed['no-updates']) {
    throw new UsageError('--updates and --no-updates exclude each other');
  }
  if (parsed.bot !== undefined && !['greedy', 'random'].includes(parsed.bot)) {
    throw new UsageError(`--bot must be greedy or random, got '${parsed.bot}'`);
  }
  if (Boolean(parsed['tls-cert']) !== Boolean(parsed['tls-key'])) {
    throw new UsageError('mutual TLS needs both --tls-cert and --tls-key');
  }
  return {
    help: false,
    server,
    token,
    botKey,
    botVersion: parsed['bot-version'] || '',
    maxMatches,
    name: parsed.name,
    seed: seedText === null ? null : BigInt(seedText), // null: from the match
    // null: updates when the strategy has onUpdate (usesUpdates); else as asked.
    updates: parsed.updates ? true : parsed['no-updates'] ? false : null,
    strategy: path.resolve(parsed.strategy || DEFAULT_STRATEGY),
    bot: parsed.bot,
    protoDir: path.resolve(parsed['proto-dir'] || env.MEDINA_PROTO_DIR || DEFAULT_PROTO_DIR),
    tlsCa: parsed['tls-ca'],
    tlsCert: parsed['tls-cert'],
    tlsKey: parsed['tls-key'],
    quiet: Boolean(parsed.quiet),
  };
}

/** The ArenaService client constructor, from medina/v1/arena.proto under `protoDir`. */
function loadArenaService(protoDir) {
  const file = path.join(protoDir, 'medina', 'v1', 'arena.proto');
  if (!fs.existsSync(file)) {
    throw new UsageError(
      `no medina/v1/arena.proto under ${protoDir} (set --proto-dir or MEDINA_PROTO_DIR)`,
    );
  }
  const definition = protoLoader.loadSync(file, {
    includeDirs: [protoDir],
    keepCase: true, // field names as in the .proto files and docs/protocol.md
    longs: String, // uint64 request ids stay exact
    enums: String, // enum names, readable in logs; echoed back as they came
    defaults: true,
    oneofs: true, // PlayResponse.message names the kind of each server message
  });
  return grpc.loadPackageDefinition(definition).medina.v1.ArenaService;
}

function readPem(option, file) {
  if (!file) {
    return null;
  }
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new UsageError(`cannot read ${option} ${file}: ${err.code || err.message}`);
  }
}

/** TLS credentials when any --tls-* option is given (mutual with a client pair), else plaintext. */
function channelCredentials(options) {
  if (!options.tlsCa && !options.tlsCert) {
    return grpc.credentials.createInsecure();
  }
  return grpc.credentials.createSsl(
    readPem('--tls-ca', options.tlsCa),
    readPem('--tls-key', options.tlsKey),
    readPem('--tls-cert', options.tlsCert),
  );
}

function loadStrategy(options) {
  let module;
  try {
    module = require(options.strategy);
  } catch (err) {
    throw new UsageError(`cannot load the strategy ${options.strategy}: ${err.message}`);
  }
  if (typeof module.createStrategy !== 'function') {
    throw new UsageError(`the strategy ${options.strategy} does not export createStrategy`);
  }
  const strategy = module.createStrategy(
    options.bot === undefined ? { seed: options.seed } : { seed: options.seed, bot: options.bot },
  );
  if (!strategy || typeof strategy.choose !== 'function') {
    throw new UsageError(`createStrategy of ${options.strategy} returned no choose(turn)`);
  }
  return strategy;
}

/**
 * Whether `strategy` reacts to Update messages (it has an onUpdate hook). One that does not
 * is served faster without them: every request carries the events since the seat's previous
 * one anyway. As the Python SDK's uses_updates.
 */
function usesUpdates(strategy) {
  return typeof strategy.onUpdate === 'function';
}

/**
 * The seed of a strategy playing `seat` of the match seeded `seed` when no --seed is given:
 * a different one for every match seed and seat (as the Python SDK's match_seed).
 */
function matchSeed(seed, seat) {
  return BigInt(seed) * 4n + BigInt(seat);
}

/** [host, port] of `HOST:PORT` (`[v6]:PORT` too); null for any other target (unix:...). */
function splitAddress(address) {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, Math.max(colon, 0));
  const port = address.slice(colon + 1);
  if (colon < 0 || !host || !/^\d+$/.test(port) || host.includes('/')) {
    return null;
  }
  return [host, port];
}

/**
 * Where a seat's streams go: the address the bot was given, or the one a server's Redirect
 * named; and whether to ask for redirects (as the Python SDK's Route).
 */
class Route {
  constructor(given) {
    this.given = given;
    this.current = given;
    /** Asked for: off after a redirect led nowhere, and for a target that is not HOST:PORT. */
    this.redirects = splitAddress(given) !== null;
    this.followed = 0; // redirects followed since the last Welcome
  }

  /** Whether the next stream goes where a redirect said. */
  get redirected() {
    return this.current !== this.given;
  }

  /** Goes where `redirect` says (its host, or the given address's host). */
  follow(redirect) {
    this.followed += 1;
    const parts = splitAddress(this.given);
    if (parts === null || this.followed > MAX_REDIRECTS) {
      this.fallBack();
      return;
    }
    this.current = `${redirect.host || parts[0]}:${redirect.port}`;
  }

  /** A Welcome came: the redirects so far led somewhere. */
  arrived() {
    this.followed = 0;
  }

  /** Back to the given address, no longer asking for redirects. */
  fallBack() {
    this.current = this.given;
    this.redirects = false;
  }
}

/** Every action a LegalActions message lists, in message order, tea last. */
function legalActions(legal) {
  const out = [];
  if (!legal) {
    return out;
  }
  for (const group of legal.placements) {
    // A building carries its colour; every other kind is sent without one.
    const building = group.kind === 'ACTION_KIND_BUILDING';
    const colour = building ? group.colour : 'PALACE_COLOUR_UNSPECIFIED';
    for (const square of group.squares) {
      out.push({ kind: group.kind, square, colour });
    }
  }
  if (legal.tea) {
    out.push({ kind: 'ACTION_KIND_TEA', square: 0, colour: 'PALACE_COLOUR_UNSPECIFIED' });
  }
  return out;
}

function actionKey(action) {
  return `${action.kind}/${action.square || 0}/${action.colour || 'PALACE_COLOUR_UNSPECIFIED'}`;
}

function describeAction(action) {
  if (action.kind === 'ACTION_KIND_TEA') {
    return action.kind;
  }
  const colour = action.kind === 'ACTION_KIND_BUILDING' ? ` (${action.colour})` : '';
  return `${action.kind} on ${action.square}${colour}`;
}

/**
 * google.rpc.Status, google.protobuf.Any and google.rpc.ErrorInfo: the three messages of a
 * status's details, defined here (they are small and stable) instead of loading .proto files.
 */
const STATUS_TYPES = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Any: {
              fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } },
            },
          },
        },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            ErrorInfo: {
              fields: {
                reason: { type: 'string', id: 1 },
                domain: { type: 'string', id: 2 },
                metadata: { keyType: 'string', type: 'string', id: 3 },
              },
            },
          },
        },
      },
    },
  },
});
const RPC_STATUS = STATUS_TYPES.lookupType('google.rpc.Status');
const ERROR_INFO = STATUS_TYPES.lookupType('google.rpc.ErrorInfo');
const ERROR_INFO_NAME = 'google.rpc.ErrorInfo';

/**
 * The ErrorInfo of domain medina.v1 in a status's trailing metadata, as { reason, metadata },
 * or null when there is none (a 1.0 server, or a status from the transport itself).
 */
function errorInfo(metadata) {
  const values = metadata ? metadata.get(DETAILS_KEY) : [];
  for (const value of values) {
    if (!Buffer.isBuffer(value)) {
      continue;
    }
    let status;
    try {
      status = RPC_STATUS.decode(value);
    } catch {
      return null; // a malformed detail says nothing
    }
    for (const detail of status.details) {
      const url = detail.type_url || '';
      if (url.slice(url.lastIndexOf('/') + 1) !== ERROR_INFO_NAME) {
        continue;
      }
      let info;
      try {
        info = ERROR_INFO.decode(detail.value);
      } catch {
        continue;
      }
      if (info.domain === ERROR_DOMAIN) {
        return { reason: info.reason, metadata: { ...info.metadata } };
      }
    }
  }
  return null;
}

/**
 * The error a stream's final status means: every end before MatchEnded is one. The reason
 * decides (docs/protocol.md, "Errors"), as in the Python SDK; without one (a 1.0 server) the
 * status code does.
 */
function streamEndError(status, gotWelcome, address, tls = false, gotInBefore = false) {
  const code = grpc.status[status.code] || `status ${status.code}`;
  if (status.code === grpc.status.OK) {
    return new ConnectionLost('the server closed the stream before the match ended');
  }
  const info = errorInfo(status.metadata);
  const reason = info ? info.reason : '';
  const details = tidyDetails(status.details);
  if (RETRY_REASONS.has(reason)) {
    return new ConnectionLost(`stream to ${address} refused (${code}, ${reason}): ${details}`, reason);
  }
  if (FINAL_REASONS.has(reason)) {
    if (!gotWelcome) {
      const message = `handshake refused (${code}, ${reason}): ${details}`;
      return new HandshakeRefused(message, reason);
    }
    return new SessionOver(`stream to ${address} ended (${reason}): ${details}`, reason);
  }
  const why = reason ? `${code}, ${reason}` : code;
  if (!gotWelcome && HANDSHAKE_CODES.has(status.code)) {
    return new HandshakeRefused(`handshake refused (${why}): ${details}`, reason);
  }
  // A stream that got in, or that the server refused for a reason it named, says what
  // happened itself.
  const hint = gotWelcome || reason ? '' : unavailableHint(status.code, tls, status.details, gotInBefore);
  return new ConnectionLost(`stream to ${address} failed (${why}): ${details}${hint}`, reason);
}

/**
 * grpc-js's words for a connection that never came up, without the noise: "No connection
 * established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: " is
 * "No connection established (connect ECONNREFUSED 127.0.0.1:1)", and a last error "null"
 * says nothing. Other details are returned as they are.
 */
function tidyDetails(details) {
  const text = details || '';
  const found = /^No connection established\. Last error: ([\s\S]*?)\. Resolution note:\s*([\s\S]*)$/.exec(text);
  if (!found) {
    return text;
  }
  const last = found[1] === 'null' ? '' : found[1].replace(/^Error: /, '');
  const note = found[2].trim();
  return `No connection established${last ? ` (${last})` : ''}${note ? `; ${note}` : ''}`;
}

/**
 * What a connection that never got in may mean, for UNAVAILABLE: grpc-js says only "No
 * connection established" when a TLS handshake fails (a CA that did not sign the server's
 * certificate, a server without TLS, a client certificate the server refused), so the hint
 * names the options to check. TLS is not at fault where the connection was refused (nothing
 * listens there) or where these options got in before (`gotInBefore`): then the hint asks
 * only whether the server runs.
 */
function unavailableHint(code, tls, details = '', gotInBefore = false) {
  if (code !== grpc.status.UNAVAILABLE) {
    return '';
  }
  if (gotInBefore || /ECONNREFUSED/.test(details || '')) {
    return ' (is a Medina Arena server running there?)';
  }
  if (!tls) {
    return ' (is a Medina Arena server running there? If it serves TLS, pass --tls-ca with the'
      + ' CA that signed its certificate)';
  }
  return ' (is a Medina Arena server running there? With TLS, check that --tls-ca signed the'
    + " server's certificate and that the server serves TLS; if it requires client"
    + ' certificates (mutual TLS), pass --tls-cert and --tls-key)';
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms)); // backoff: waiting is the point
}

/** One seat's play, kept across reconnects: the route, the resume token, the open request. */
class Session {
  constructor(options, strategy, ArenaService) {
    this.options = options;
    this.strategy = strategy;
    this.ArenaService = ArenaService;
    this.credentials = channelCredentials(options);
    this.tls = Boolean(options.tlsCa || options.tlsCert);
    this.name = options.name || strategy.name || 'node-bot';
    this.version = String(strategy.version || '1');
    this.omitUpdates = options.updates === null ? !usesUpdates(strategy) : !options.updates;
    this.route = new Route(options.server);
    this.seeded = options.seed !== null; // without --seed: from the match at the first Welcome
    this.resumeToken = '';
    this.welcome = null;
    this.welcomed = false; // a Welcome arrived since the last break
    this.open = null; // { request, excluded, sent } of the request being answered
  }

  /**
   * Plays to the end and returns MatchEnded. A break before it is retried with the resume
   * token, with backoff, up to RECONNECT_ATTEMPTS times from each break (as is a server
   * not listening yet, or busy: a RETRY reason); a refused handshake and a session over (a
   * FINAL reason) are thrown at once. A Redirect is followed at once (at most MAX_REDIRECTS
   * in a row); an address a redirect named that fails before Welcome is given up for the
   * address the bot was given, without asking for redirects any more. A reconnect after a
   * break goes where the last stream went, as in the Python SDK.
   */
  async play() {
    const route = this.route;
    let failures = 0;
    let delay = FIRST_BACKOFF_MS;
    for (;;) {
      try {
        return await this.connect();
      } catch (err) {
        if (err instanceof Redirected) {
          route.follow(err);
          log(`${err.message}; connecting to ${route.current}`);
          continue;
        }
        if (!(err instanceof ConnectionLost)) {
          throw err;
        }
        if (route.redirected && !this.welcomed) {
          log(`${err.message}; back to ${route.given}`);
          route.fallBack();
          continue;
        }
        if (this.welcomed) {
          // The last attempt got in: a fresh break gets a fresh budget.
          this.welcomed = false;
          failures = 0;
          delay = FIRST_BACKOFF_MS;
        }
        failures += 1;
        if (failures > RECONNECT_ATTEMPTS) {
          const tries = `gave up after ${RECONNECT_ATTEMPTS} reconnects`;
          throw new ConnectionLost(`${err.message} (${tries})`);
        }
        log(`${err.message}; reconnecting in ${delay} ms (${failures} of ${RECONNECT_ATTEMPTS})`);
        await sleep(delay);
        delay = Math.min(delay * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** One stream: handshake, then serve it until MatchEnded (resolved) or a break (rejected). */
  connect() {
    const address = this.route.current;
    const askedRedirects = this.route.redirects;
    // A channel of its own per attempt, so a broken connection's backoff state is not shared.
    const client = new this.ArenaService(address, this.credentials, {
      'grpc.use_local_subchannel_pool': 1,
    });
    return new Promise((resolve, reject) => {
      const call = client.Play();
      let gotWelcome = false;
      let done = false;
      let result = null; // MatchEnded's result, once it came
      let endTimer = null;
      const timer = setTimeout(() => {
        const seconds = HANDSHAKE_TIMEOUT_MS / 1000;
        finish(new ConnectionLost(`no Welcome from ${address} within ${seconds} s`));
      }, HANDSHAKE_TIMEOUT_MS);
      const finish = (err, ended) => {
        if (done) {
          return;
        }
        done = true;
        clearTimeout(timer);
        clearTimeout(endTimer);
        if (err) {
          call.cancel();
        } else if (!result) {
          call.end();
        }
        client.close();
        if (err) {
          reject(err);
        } else {
          resolve(ended);
        }
      };
      const send = (message) => call.write(message);

      call.on('data', (message) => {
        if (done || result) {
          return;
        }
        try {
          if (!gotWelcome) {
            if (message.message === 'redirect') {
              if (!askedRedirects) {
                // A server redirects only a bot that asked: following this could loop.
                throw new ProtocolError(`${address} sent a Redirect this bot did not ask for`);
              }
              throw new Redirected(message.redirect.host, message.redirect.port);
            }
            if (message.message !== 'welcome') {
              throw new ProtocolError(`expected Welcome from ${address}, got ${message.message}`);
            }
            gotWelcome = true;
            clearTimeout(timer);
            this.onWelcome(message.welcome);
            return;
          }
          const ended = this.onMessage(message, send);
          if (ended) {
            // Half-close and let the server end the stream ('status' below) before leaving.
            result = ended;
            call.end();
            endTimer = setTimeout(() => {
              log(`the server did not end the stream within ${END_WAIT_MS} ms of MatchEnded; leaving`);
              finish(null, ended);
            }, END_WAIT_MS);
          }
        } catch (err) {
          finish(err);
        }
      });
      // Every failure also arrives as 'status', handled there; this keeps it from being thrown.
      call.on('error', () => {});
      // 'status' comes exactly once, after every message the server sent.
      call.on('status', (status) =>
        result
          ? finish(null, result)
          : finish(streamEndError(status, gotWelcome, address, this.tls, this.welcome !== null)),
      );
      send({
        hello: {
          protocol_version: PROTOCOL_VERSION,
          bot_name: this.name,
          bot_version: this.version,
          token: this.options.token,
          resume_token: this.resumeToken,
          omit_updates: this.omitUpdates,
          protocol_minor: PROTOCOL_MINOR,
          features: askedRedirects ? [...FEATURES, REDIRECT] : FEATURES,
        },
      });
    });
  }

  onWelcome(welcome) {
    this.route.arrived();
    this.welcome = welcome;
    this.welcomed = true;
    this.resumeToken = welcome.resume_token || this.resumeToken;
    this.open = null; // after a reconnect the server sends the open request again
    if (!this.seeded) {
      // No --seed: the strategy is seeded from the match, once (as the Python SDK's SeededBot).
      this.seeded = true;
      if (typeof this.strategy.reseed === 'function') {
        this.strategy.reseed(matchSeed(welcome.config ? welcome.config.seed : 0, welcome.seat));
      }
    }
  }

  /** Handles one message after Welcome; returns the MatchEnded that ends the match. */
  onMessage(message, send) {
    switch (message.message) {
      case 'request':
        this.open = { request: message.request, excluded: [], sent: null };
        this.answer(send);
        return null;
      case 'rejected':
        this.onRejected(message.rejected, send);
        return null;
      case 'notice': {
        const n = message.notice;
        log(`notice ${n.code} (request ${n.request_id}): ${n.message}`);
        return null;
      }
      case 'update':
        // Other seats' moves (asked for only when the strategy has onUpdate, or --updates).
        if (usesUpdates(this.strategy)) {
          this.strategy.onUpdate(message.update.events);
        }
        return null;
      case 'forfeited': {
        const f = message.forfeited;
        const who = f.seat === this.welcome.seat ? ' (this bot)' : '';
        const strikes = f.strikes ? `, ${f.strikes} strikes` : '';
        log(`seat ${f.seat}${who} forfeited (${f.termination}${strikes}): ${f.detail}`);
        return null;
      }
      case 'ended':
        return message.ended;
      default: {
        // A kind from a newer protocol (or a field these .proto files do not have): a server
        // sends opt-in kinds only to bots that ask for them, so skipping one is safe.
        const kind = message.message || 'not in these .proto files';
        log(`ignoring a server message of a kind this bot does not know (${kind})`);
        return null;
      }
    }
  }

  onRejected(rejected, send) {
    const open = this.open;
    if (!open || open.request.request_id !== rejected.request_id) {
      log(`rejection of request ${rejected.request_id}, which is not open: ${rejected.message}`);
      return;
    }
    log(
      `request ${rejected.request_id}: ${describeAction(open.sent)} refused ` +
        `(${rejected.rule || rejected.code}: ${rejected.message}); choosing again`,
    );
    open.excluded.push(open.sent);
    if (rejected.clock) {
      open.request = { ...open.request, clock: rejected.clock };
    }
    this.answer(send);
  }

  /** Asks the strategy for the open request and sends the reply. */
  answer(send) {
    const open = this.open;
    const request = open.request;
    const refused = new Set(open.excluded.map(actionKey));
    const all = legalActions(request.legal);
    let legal = all.filter((a) => !refused.has(actionKey(a)));
    if (legal.length === 0 && all.length > 0) {
      log(`every listed action of request ${request.request_id} was refused; offering all again`);
      legal = all;
    }
    const action = this.strategy.choose({
      legal,
      excluded: open.excluded.slice(),
      seat: this.welcome.seat,
      requestId: request.request_id,
      observation: request.observation,
      clock: request.clock,
      welcome: this.welcome,
    });
    if (action === null || action === undefined) {
      log(`the strategy chose nothing for request ${request.request_id}; the referee will play it`);
      return;
    }
    if (typeof action !== 'object' || action.kind === undefined) {
      throw new TypeError(`the strategy returned ${JSON.stringify(action)}, not an action`);
    }
    open.sent = action;
    send({ reply: { request_id: request.request_id, action } });
  }
}

function resultLine(ended, seat) {
  const seats = ended.result.seats;
  const mine = seats.filter((s) => s.seat === seat);
  const shown = (mine.length ? mine : seats).map((s) => {
    const how = s.termination === 'TERMINATION_NORMAL' ? '' : `, ${s.termination}`;
    return `seat ${s.seat} ${s.name}: ${s.total} (rank ${s.rank} of ${seats.length}${how})`;
  });
  return `match over: ${shown.join(', ')}`;
}

/** Lobby reasons that end a ladder session for good (docs/protocol.md, "Errors"). */
const LOBBY_FINAL = new Set([
  'BOT_KEY_INVALID',
  'BOT_REVOKED',
  'BOT_SUSPENDED',
  'LOBBY_HELLO_INVALID',
  'HELLO_MISSING',
]);

/** The LadderService client constructor, from medina/v1/ladder.proto under `protoDir`. */
function loadLadderService(protoDir) {
  const file = path.join(protoDir, 'medina', 'v1', 'ladder.proto');
  if (!fs.existsSync(file)) {
    throw new UsageError(`no medina/v1/ladder.proto under ${protoDir} (set --proto-dir)`);
  }
  const definition = protoLoader.loadSync(file, {
    includeDirs: [protoDir],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).medina.v1.LadderService;
}

/**
 * Plays on a ladder until stopped: one lobby stream with the bot key, each assigned match
 * played as an ordinary seat (a fresh strategy each) beside it. The first SIGINT/SIGTERM
 * sends Leave (the ladder closes the lobby once the matches in play have ended), a second
 * quits. A lobby stream that breaks is opened again with backoff; matches go on meanwhile.
 * Resolves to the exit status.
 */
async function playLadder(options, ArenaService) {
  const LadderService = loadLadderService(options.protoDir);
  const credentials = channelCredentials(options);
  const games = new Map();
  let leaving = false;
  let current = null;
  let played = 0;
  const onSignal = () => {
    if (leaving) {
      process.exit(130);
    }
    leaving = true;
    log('finishing the matches in play (Ctrl-C again to quit now)');
    if (current) {
      current.write({ leave: {} });
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const playMatch = async (assigned) => {
    const strategy = loadStrategy(options);
    const seat = new Session(
      { ...options, server: assigned.address || options.server, token: assigned.token },
      strategy,
      ArenaService,
    );
    try {
      await seat.play();
    } catch (err) {
      log(`ladder match ${assigned.match_id}: ${err.message}`);
    }
  };
  let delay = 500;
  let gotIn = false; // a lobby stream was welcomed: these options reach the ladder
  for (;;) {
    let welcomed = false; // this stream was
    const outcome = await new Promise((resolve) => {
      const client = new LadderService(options.server, credentials);
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${options.botKey}`);
      const call = client.Lobby(metadata);
      current = call;
      const hello = {
        protocol_version: PROTOCOL_VERSION,
        protocol_minor: PROTOCOL_MINOR,
        bot_version: options.botVersion,
        client: 'medina-node-bot',
      };
      if (options.maxMatches !== null) {
        hello.max_matches = options.maxMatches;
      }
      call.write({ hello });
      if (leaving) {
        call.write({ leave: {} });
      }
      call.on('data', (message) => {
        if (message.kind === 'welcome') {
          delay = 500;
          welcomed = true;
          gotIn = true;
          log(`on the ladder as ${message.welcome.bot} (${message.welcome.bot_version || "''"})`);
        } else if (message.kind === 'heartbeat') {
          call.write({ heartbeat: { sequence: message.heartbeat.sequence } });
        } else if (message.kind === 'match') {
          const m = message.match;
          if (!games.has(m.match_id)) {
            games.set(
              m.match_id,
              playMatch(m).finally(() => games.delete(m.match_id)),
            );
          }
        } else if (message.kind === 'ended') {
          played += 1;
          if (!options.quiet) {
            const ended = message.ended;
            const seats = (ended.result ? ended.result.seats : [])
              .map((s) => `${s.name} ${s.total} (rank ${s.rank})`)
              .join(', ');
            // As the Python client prints it: the bot's rating after the match, when sent.
            const rating = ended.rating ? `; rating ${ended.rating.ordinal.toFixed(2)}` : '';
            process.stdout.write(`ladder match ${ended.match_id}: ${seats || 'aborted'}${rating}\n`);
          }
        }
      });
      call.on('error', (err) => {
        const info = errorInfo(err.metadata);
        // The ladder's retry_after_ms (JOINING_TOO_OFTEN, LADDER_UNAVAILABLE): a least wait.
        const after = info && info.metadata ? Number(info.metadata.retry_after_ms) : NaN;
        resolve({
          done: false,
          error: err,
          reason: info ? info.reason : '',
          afterMs: Number.isFinite(after) && after > 0 ? after : 0,
        });
      });
      call.on('end', () => resolve({ done: leaving, error: null, reason: '' }));
    });
    current = null;
    if (outcome.done) {
      break;
    }
    if (outcome.error && (LOBBY_FINAL.has(outcome.reason) || outcome.error.code === grpc.status.UNIMPLEMENTED)) {
      log(`the ladder refused the bot (${outcome.reason || outcome.error.code}): ${tidyDetails(outcome.error.details)}`);
      await Promise.all(games.values());
      return 1;
    }
    if (leaving) {
      break;
    }
    // No hint where the ladder said why (SHUTTING_DOWN) or the stream had got in: a
    // welcomed stream the network dropped was said to need --tls-ca.
    const hint = outcome.error && !outcome.reason && !welcomed
      ? unavailableHint(
        outcome.error.code,
        Boolean(options.tlsCa || options.tlsCert),
        outcome.error.details,
        gotIn,
      )
      : '';
    const why = outcome.error ? `${tidyDetails(outcome.error.details)}${hint}` : 'closed';
    const wait = Math.max(delay, outcome.afterMs || 0);
    log(`lobby: ${why}; connecting again in ${wait} ms`);
    await sleep(wait);
    delay = Math.min(delay * 2, 10000);
  }
  await Promise.all(games.values());
  if (!options.quiet) {
    process.stdout.write(`left the ladder after ${played} match(es)\n`);
  }
  return 0;
}

async function main(argv, env) {
  let options;
  let session;
  try {
    options = parseOptions(argv, env);
    if (options.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const ArenaService = loadArenaService(options.protoDir);
    if (options.botKey) {
      loadStrategy(options); // a strategy that cannot load is a usage error before any match
      return await playLadder(options, ArenaService);
    }
    session = new Session(options, loadStrategy(options), ArenaService);
  } catch (err) {
    if (err instanceof UsageError) {
      log(err.message);
      process.stderr.write(`${USAGE.split('\n')[0]}\n`);
      return 2;
    }
    throw err;
  }
  try {
    const ended = await session.play();
    if (!options.quiet) {
      process.stdout.write(`${resultLine(ended, session.welcome ? session.welcome.seat : -1)}\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof HandshakeRefused || err instanceof SessionOver) {
      // Nothing left to play on this seat: a match that is over is not this bot's failure.
      log(err.message);
      return err.reason === 'MATCH_OVER' ? 0 : 1;
    }
    if (err instanceof ConnectionLost || err instanceof ProtocolError) {
      log(err.message);
      return 1;
    }
    throw err;
  }
}

if (require.main === module) {
  main(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err) => {
      log(`crashed: ${err && err.stack ? err.stack : err}`);
      process.exit(1);
    },
  );
}

module.exports = {
  MAX_REDIRECTS,
  Route,
  errorInfo,
  legalActions,
  main,
  matchSeed,
  parseOptions,
  streamEndError,
  tidyDetails,
  unavailableHint,
  usesUpdates,
};
