#!/usr/bin/env node
// A Cirulla player in Node.js that speaks the gRPC protocol directly, with nothing but
// @grpc/grpc-js, @grpc/proto-loader and the .proto files of proto/cirulla/v1.
//
//   npm ci
//   CIRULLA_SERVER=HOST:PORT CIRULLA_MATCH=MATCH_ID CIRULLA_TOKEN=SEAT_TOKEN node client.js
//
// The tournament runner and the ladder set those three variables (the secret token is
// never on a command line, where `ps` shows it to every local user); --server=,
// --match=, --name= (and, by hand only, --token=) override them.
// The player captures as many cards as it can, else plays its lowest card. When the
// match is over it prints one JSON line (seat, decisions, games, winner side) and
// exits 0; any protocol surprise is an error (exit 1) naming what went wrong.
//
// What a client in another language must know (docs/protocol.md, "Clients in other
// languages"): load the protos with `defaults: true` (or seat 0 and index 0, the
// proto3 defaults, vanish) and `oneofs: true` (so `body` names the message that is
// set); uint64 ids arrive as strings with `longs: String`: send them back untouched.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOCOL_VERSION = "cirulla.v1/1";
// The folder holding cirulla/v1/*.proto: --proto-root=DIR, else $CIRULLA_PROTO_ROOT, else
// the clone's proto/ two folders up. Under a tournament's --sandbox only the client's own
// folder and the paths named on its command line are there: name it with
// --proto-root=./proto (docs/protocol.md, "Clients in other languages").
const DEFAULT_PROTO_ROOT = process.env.CIRULLA_PROTO_ROOT || path.join(__dirname, "..", "..", "proto");

function options(argv) {
  const out = {
    server: process.env.CIRULLA_SERVER || "",
    match: process.env.CIRULLA_MATCH || "",
    token: process.env.CIRULLA_TOKEN || "",
    name: "node-grpc",
    proto_root: DEFAULT_PROTO_ROOT,
  };
  for (const arg of argv) {
    const m = /^--(server|match|token|name|proto-root)=(.*)$/s.exec(arg);
    if (!m) {
      throw new Error(
        `unknown argument ${JSON.stringify(arg)}; use --server=, --match=, --token=, --name=, --proto-root=`,
      );
    }
    out[m[1].replace("-", "_")] = m[2];
  }
  for (const key of ["server", "match", "token"]) {
    if (!out[key]) throw new Error(`missing --${key}= (or CIRULLA_${key.toUpperCase()})`);
  }
  return out;
}

function loadService(protoRoot) {
  if (!fs.existsSync(path.join(protoRoot, "cirulla", "v1", "match_service.proto"))) {
    throw new Error(
      `no cirulla/v1/match_service.proto under ${protoRoot}: give --proto-root=DIR, the clone's proto folder`,
    );
  }
  const definition = protoLoader.loadSync("cirulla/v1/match_service.proto", {
    includeDirs: [protoRoot],
    keepCase: true, // field names exactly as in the .proto files
    longs: String, // uint64 (decision_id, sequence) as decimal strings: no precision loss
    enums: String, // enum values by name, e.g. "GOODBYE_REASON_MATCH_FINISHED"
    defaults: true, // without it, seat 0 / index 0 / empty lists are missing
    oneofs: true, // msg.body names which field of the oneof is set
  });
  const pkg = grpc.loadPackageDefinition(definition);
  return pkg.cirulla.v1.MatchService;
}

/** Index of the legal action to play: most cards captured, then lowest card played. */
function choose(request) {
  let best = 0;
  let bestKey = null;
  request.legal_actions.forEach((legal, i) => {
    const action = legal.action;
    const value = "A234567JQK".indexOf(action.card.code[0]) + 1;
    const key = [action.captures.length, -value];
    if (bestKey === null || key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
      best = i;
      bestKey = key;
    }
  });
  if (request.legal_actions[best].index !== best) {
    throw new Error(`legal_actions[${best}].index is ${request.legal_actions[best].index}`);
  }
  return best;
}

function play(opts) {
  const Service = loadService(opts.proto_root);
  const client = new Service(opts.server, grpc.credentials.createInsecure());
  const call = client.Play();
  const state = { seat: null, decisions: 0, games: 0, lastSequence: "0", result: null, done: false };

  return new Promise((resolve, reject) => {
    const fail = (why) => {
      if (state.done) return;
      state.done = true;
      call.cancel();
      client.close();
      reject(new Error(why));
    };

    call.on("data", (msg) => {
      try {
        switch (msg.body) {
          case "welcome":
            if (msg.welcome.protocol_version !== PROTOCOL_VERSION) {
              fail(`server speaks ${msg.welcome.protocol_version}, not ${PROTOCOL_VERSION}`);
            }
            state.seat = msg.welcome.seat;
            break;
          case "event": {
            const seq = BigInt(msg.event.sequence);
            if (seq <= BigInt(state.lastSequence)) {
              fail(`event sequence ${seq} after ${state.lastSequence}`);
            }
            state.lastSequence = msg.event.sequence;
            if (msg.event.body === "game_over") state.games += 1;
            break;
          }
          case "decision_request": {
            const request = msg.decision_request;
            state.decisions += 1;
            call.write({
              submit_action: {
                decision_id: request.decision_id, // a string: echoed as received
                legal_action_index: choose(request),
              },
            });
            break;
          }
          case "action_rejected":
            fail(`action rejected: ${msg.action_rejected.reason} ${msg.action_rejected.message}`);
            break;
          case "match_result":
            state.result = msg.match_result;
            break;
          case "goodbye":
            state.done = true;
            call.end();
            client.close();
            if (msg.goodbye.reason !== "GOODBYE_REASON_MATCH_FINISHED" || state.result === null) {
              reject(new Error(`goodbye ${msg.goodbye.reason}: ${msg.goodbye.message}`));
            } else {
              resolve(state);
            }
            break;
          default: // new_game, view, action_accepted, command_list: nothing to do
            break;
        }
      } catch (err) {
        fail(String(err && err.stack ? err.stack : err));
      }
    });
    call.on("error", (err) => fail(`stream error: ${err.code} ${err.details || err.message}`));
    call.on("end", () => fail("the server ended the stream without goodbye"));

    call.write({
      hello: {
        protocol_version: PROTOCOL_VERSION,
        name: opts.name,
        version: "node-grpc-example/0.1",
        match_id: opts.match,
        seat_token: opts.token,
      },
    });
  });
}

async function main() {
  let opts;
  try {
    opts = options(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`node client: ${err.message}\n`);
    process.exit(2);
  }
  try {
    const state = await play(opts);
    const result = state.result;
    // winner_side is proto3 `optional`: with oneofs: true it is present only when set.
    const winner = result.winner_side === undefined || result.winner_side === null ? null : result.winner_side;
    process.stdout.write(
      JSON.stringify({
        seat: state.seat,
        decisions: state.decisions,
        games: state.games,
        games_won: result.games_won,
        winner_side: winner,
        last_sequence: state.lastSequence,
      }) + "\n",
    );
  } catch (err) {
    process.stderr.write(`node client: ${err.message}\n`);
    process.exit(1);
  }
}

main();
