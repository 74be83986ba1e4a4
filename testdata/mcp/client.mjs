// The MCP client of profq's end-to-end test (internal/cli/mcp_e2e_test.go): the official
// TypeScript SDK's Client over its stdio transport, as an MCP host runs a server.
//
//   node client.mjs SDK_DIR PLAN.json
//
// SDK_DIR is where scripts/mcp-client.sh installed the SDK. PLAN is
// {"command": ..., "args": [...], "calls": [{"name": ..., "arguments": {...}}, ...]}:
// the client starts the command, initializes, lists the tools, makes the calls in order and
// prints {"server": ..., "tools": [...], "results": [...]} as JSON on standard output, each
// result as the SDK returns it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, planFile] = process.argv.slice(2);
const esm = (p) => pathToFileURL(join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href;
const { Client } = await import(esm("client/index.js"));
const { StdioClientTransport } = await import(esm("client/stdio.js"));

const plan = JSON.parse(readFileSync(planFile, "utf8"));
const transport = new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "inherit" });
const client = new Client({ name: "profq-e2e", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const results = [];
for (const call of plan.calls) {
  results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
console.log(JSON.stringify({
  server: client.getServerVersion(),
  protocol: transport.protocolVersion ?? null,
  tools: tools.tools.map((t) => ({ name: t.name, properties: Object.keys(t.inputSchema.properties ?? {}) })),
  results,
}));
await client.close();
