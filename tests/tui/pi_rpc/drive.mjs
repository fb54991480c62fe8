// Drives baton through pi's own RpcClient (from the npm package @mariozechner/pi-coding-agent):
// prompt, get_commands, clone, get_state; prints one JSON object with what it saw.
import { pathToFileURL } from "node:url";
import path from "node:path";

const [packageDir, cliPath, cwd, model] = process.argv.slice(2);
const { RpcClient } = await import(pathToFileURL(path.join(packageDir, "dist/modes/rpc/rpc-client.js")).href);
const client = new RpcClient({ cliPath, cwd, env: process.env, args: ["--model", model] });
const out = {};
try {
  await client.start();
  out.commands = await client.getCommands();
  await client.prompt("hello");
  await client.waitForIdle();
  out.before = await client.getState();
  out.clone = await client.clone();
  out.after = await client.getState();
  out.messages = (await client.getMessages()).length;
} catch (error) {
  out.error = String(error && error.message ? error.message : error);
  out.stderr = client.getStderr();
} finally {
  await client.stop();
}
console.log(JSON.stringify(out));
