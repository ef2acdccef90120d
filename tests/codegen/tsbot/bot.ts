// A minimal Medina bot in TypeScript, written from proto/medina/v1 alone: the code ts-proto
// generates (with @grpc/grpc-js services) and @grpc/grpc-js. It plays one seat to the end of
// the match by answering every decision request with the first legal placement (a tea break
// when it is the only choice), then prints one line, "match over: seat N: POINTS (rank R of P)".
//
//   node bot.js --server HOST:PORT [--name NAME]     (the seat token in MEDINA_TOKEN)
//
// tests/test_codegen.py generates the code into ./gen with the recipe of docs/codegen.md, compiles
// this file with tsc and plays it against a real server.
import { credentials, type ServiceError } from "@grpc/grpc-js";
import { ArenaServiceClient, Hello, type PlayResponse, Reply } from "./gen/medina/v1/arena";
import { Action, ActionKind, actionKindToJSON, type LegalActions } from "./gen/medina/v1/game";

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

/** The first legal square of the first legal placement. */
function choose(legal: LegalActions | undefined): Action {
  for (const p of legal?.placements ?? []) {
    if (p.squares.length > 0) {
      return Action.fromPartial({ kind: p.kind, square: p.squares[0], colour: p.colour });
    }
  }
  if (legal?.tea) {
    return Action.fromPartial({ kind: ActionKind.ACTION_KIND_TEA });
  }
  throw new Error("a request with no legal action");
}

function fail(message: string): never {
  process.stderr.write(`tsbot: ${message}\n`);
  process.exit(1);
}

const server = option("--server") ?? process.env.MEDINA_SERVER;
const token = process.env.MEDINA_TOKEN;
const name = option("--name") ?? "ts-first-legal";
if (!server || !token) {
  process.stderr.write("usage: node bot.js --server HOST:PORT (seat token in MEDINA_TOKEN)\n");
  process.exit(2);
}

const client = new ArenaServiceClient(server, credentials.createInsecure());
const stream = client.play();
let seat = -1;
let ended = false;

stream.on("data", (message: PlayResponse) => {
  if (message.welcome) {
    seat = message.welcome.seat;
    process.stderr.write(`welcome: match ${message.welcome.matchId}, seat ${seat}\n`);
  } else if (message.request) {
    const action = choose(message.request.legal);
    const reply = Reply.fromPartial({ requestId: message.request.requestId, action });
    stream.write({ reply });
    process.stderr.write(`request ${reply.requestId}: ${actionKindToJSON(action.kind)} ${action.square}\n`);
  } else if (message.rejected) {
    fail(`reply to request ${message.rejected.requestId} refused: ${message.rejected.message}`);
  } else if (message.notice) {
    process.stderr.write(`notice: ${message.notice.code} ${message.notice.message}\n`);
  } else if (message.ended) {
    const seats = message.ended.result?.seats ?? [];
    const mine = seats.find((s) => s.seat === seat);
    if (mine) {
      process.stdout.write(
        `match over: seat ${seat}: ${mine.total} (rank ${mine.rank} of ${seats.length})\n`,
      );
    }
    ended = true;
    stream.end();
  }
  // Updates (other seats' moves): this bot only looks at its requests.
});
stream.on("error", (error: ServiceError) => fail(`stream failed: ${error.code} ${error.details}`));
stream.on("end", () => {
  client.close();
  if (!ended) fail("the stream ended before MatchEnded");
});
stream.write({ hello: Hello.fromPartial({ protocolVersion: 1, botName: name, botVersion: "1", token }) });
