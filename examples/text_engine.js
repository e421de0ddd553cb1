#!/usr/bin/env node
// A complete Cirulla engine in JavaScript for the text engine protocol
// (docs/text-protocol.md). Node.js only, no packages.
//
// Play:  cirulla bot text -- node text_engine.js
// Check: cirulla bot check 'text:node text_engine.js'
//
// It keeps what the commands tell it (rules, seat, hand, the last state line) and picks,
// among the numbered legal actions of each genmove: a declaration, else the capture
// worth most (settebello, coins, sevens, then the number of cards), else it drops the
// lowest card. Card notation: rank A 2..7 J Q K (J=8, Q=9, K=10), suit D H C S.
"use strict";

const readline = require("node:readline");

const VALUES = { A: 1, J: 8, Q: 9, K: 10 };
const value = (card) => VALUES[card[0]] ?? Number(card[0]);

const COMMANDS = [
  "protocol_version", "name", "version", "known_command", "list_commands", "quit",
  "rules", "newgame", "event", "hand", "state", "genmove",
];

const game = { rules: {}, seat: null, hand: [], state: {} };

// "a=1 b=x,y" -> { a: "1", b: "x,y" }
function fields(text) {
  const out = {};
  for (const token of text.split(" ").filter(Boolean)) {
    const at = token.indexOf("=");
    if (at > 0) out[token.slice(0, at)] = token.slice(at + 1);
  }
  return out;
}

function worth(action) {
  const parts = action.split(" ");
  const play = parts[parts.length - 1];
  const [card, captures] = play.split(":");
  if (parts.length === 2) return 1000; // a declaration: free points
  if (!captures) return -value(card); // drop the lowest card
  const taken = [card, ...captures.split("+")];
  let score = 100 + taken.length;
  if (taken.includes("7D")) score += 50; // the settebello
  score += 3 * taken.filter((c) => c.endsWith("D")).length; // coins
  score += 2 * taken.filter((c) => c[0] === "7").length; // primiera
  return score;
}

function genmove(args) {
  const space = args.indexOf(" ");
  if (space < 0) throw new Error("genmove needs milliseconds and the legal actions");
  const legal = args.slice(space + 1).split(";");
  let best = 0;
  legal.forEach((action, i) => {
    if (worth(action) > worth(legal[best])) best = i;
  });
  return String(best);
}

function handle(command, args) {
  switch (command) {
    case "protocol_version": return "1";
    case "name": return "js-example";
    case "version": return "1.0";
    case "known_command": return COMMANDS.includes(args.trim()) ? "true" : "false";
    case "list_commands": return COMMANDS.join("\n");
    case "quit": return "";
    case "rules": game.rules = fields(args); return "";
    case "newgame": game.seat = Number(fields(args).seat); return "";
    case "event": return "";
    case "hand": game.hand = args === "-" ? [] : args.split(","); return "";
    case "state": game.state = fields(args); return "";
    case "genmove": return genmove(args);
    default: throw new Error("unknown command");
  }
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (raw) => {
  const line = raw.split("#")[0].trim();
  if (!line) return;
  const match = /^(\d+)?\s*(\S+)\s*(.*)$/.exec(line);
  const [, id = "", command, args] = match;
  let reply;
  try {
    const text = handle(command, args);
    reply = `=${id}${text ? " " + text : ""}`;
  } catch (err) {
    reply = `?${id} ${err.message}`;
  }
  process.stdout.write(reply + "\n\n");
  if (command === "quit") {
    input.close();
    process.exitCode = 0;
  }
});
