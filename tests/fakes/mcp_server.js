#!/usr/bin/env node
// A tiny MCP server for Node with no packages: initialize, tools/list, tools/call (echo)
// and ping over stdio, one JSON-RPC message per line. It stands in for the Node servers
// docs/mcp.md configures (npx @modelcontextprotocol/server-filesystem) in
// tests/gateway/test_service_node.py: the question there is whether Node starts at all.
"use strict";
const readline = require("node:readline");

const tools = [
  {
    name: "echo",
    description: "Return the text unchanged.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
];

function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}

function handle(request) {
  switch (request.method) {
    case "initialize":
      return {
        protocolVersion: request.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "kioku-node-fake", version: "1.0.0" },
      };
    case "tools/list":
      return { tools };
    case "tools/call":
      return { content: [{ type: "text", text: String(request.params.arguments.text) }] };
    case "ping":
      return {};
    default:
      return null;
  }
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const request = JSON.parse(line);
  if (request.id === undefined) return; // a notification: nothing to answer
  const result = handle(request);
  if (result === null) {
    send({ id: request.id, error: { code: -32601, message: `no method ${request.method}` } });
  } else {
    send({ id: request.id, result });
  }
});
lines.on("close", () => process.exit(0));
