// The "cliPath" pi's RpcClient runs with node: starts baton with the same arguments (the
// interpreter and module come from BATON_PYTHON / BATON_ARGS), its stdin and stdout being the
// client's pipes, and passes a stop signal on so baton never outlives the client.
import { spawn } from "node:child_process";

const python = process.env.BATON_PYTHON;
const child = spawn(python, ["-m", "baton.tui.cli.main", ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
