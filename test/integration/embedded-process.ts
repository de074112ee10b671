// `trawl all --embedded` as a child process on a DATA_DIR, for tests that kill it hard (kill -9) and start it again.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");
const NODE = join(ROOT, "node_modules", ".bin", "node");

export interface EmbeddedProcess {
  child: ChildProcess;
  output: () => string;
}

/** Starts the process and waits until /ready answers; `env` is added to the test's settings. */
export async function launchEmbedded(dataDir: string, port: number, env: Record<string, string> = {}): Promise<EmbeddedProcess> {
  const child = spawn(NODE, ["bin/trawl.js", "all", "--embedded"], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), ALLOW_PRIVATE_CRAWL_TARGETS: "true", LOG_LEVEL: "warn", MAX_CPU: "1", MAX_RAM: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const api = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${api}/ready`).then((r) => r.ok, () => false)) return { child, output: () => out };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`trawl did not start:\n${out}`);
}

/** kill -9, resolved once the process is gone. */
export const killHard = (child: ChildProcess) => new Promise<void>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) return resolve(); // gone already (it failed to start)
  child.once("exit", () => resolve());
  child.kill("SIGKILL");
});

/** SIGTERM (a graceful stop), resolved with the exit code once the process is gone. */
export const stopGracefully = (child: ChildProcess) => new Promise<number | null>((resolve) => {
  child.once("exit", (code) => resolve(code));
  child.kill("SIGTERM");
});
