// An MCP server written with the official TypeScript SDK whose answer is nested 300 levels deep
// (JSON.stringify has no depth limit, so the whole answer reaches the client). Run with
// NODE_PATH naming the node_modules folder that holds @modelcontextprotocol/sdk. Tools:
// deep_structured (structuredContent nested `depth` levels deep), deep_text (a JSON text that
// deep), deep_notice (a notification that deep, answering no call, then a sleep), ok ("fine").
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

function nested(depth) {
  let value = "bottom";
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const server = new McpServer({ name: "deep-ts", version: "1.0.0" }, { capabilities: { logging: {} } });
server.registerTool("deep_structured", { description: "Structured content nested depth levels deep.",
  inputSchema: { depth: z.number().optional() } },
  async ({ depth }) => ({ content: [{ type: "text", text: "a deep answer" }],
                           structuredContent: nested(depth ?? 300) }));
server.registerTool("deep_text", { description: "A JSON text nested depth levels deep.",
  inputSchema: { depth: z.number().optional() } },
  async ({ depth }) => ({ content: [{ type: "text", text: JSON.stringify(nested(depth ?? 300)) }] }));
server.registerTool("deep_notice", { description: "Sends a notification nested depth levels deep, then sleeps.",
  inputSchema: { seconds: z.number(), depth: z.number().optional() } },
  async ({ seconds, depth }, extra) => {
    await extra.sendNotification({ method: "notifications/message",
                                   params: { level: "info", data: nested(depth ?? 300) } });
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    return { content: [{ type: "text", text: "slept" }] };
  });
server.registerTool("ok", { description: "Answers fine." },
  async () => ({ content: [{ type: "text", text: "fine" }] }));

server.connect(new StdioServerTransport());
