// Status readers in a process of their own: each GETs the URL about once a second (jittered) until stdin closes, then
// the latencies (ms) go to stdout as one JSON object. A process apart, so that the bench process's own work (it serves
// the crawled site) does not delay the readers' clocks and count as Trawl's latency.
// The process warms up first (its HTTP client's code compiled by a few rounds of reads of a server of its own), says
// "ready" on stdout, and then takes the URL to read as the first line on stdin: a cold reader process stalled its own
// event loop 30-60 ms in its first second, and the reads in flight then counted that stall as Trawl's.
// usage: node bench/status-readers.ts <readers>
import { createServer } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";

const count = Number(process.argv[2]);
if (!count) throw new Error("usage: status-readers.ts <readers>");

async function warmUp(): Promise<void> {
  const server = createServer((_req, res) => res.end(JSON.stringify({ status: "scraping", completed: 1, data: [] })));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  for (let round = 0; round < 5; round++) {
    await Promise.all(Array.from({ length: count }, async () => (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer()));
  }
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

async function read(url: string): Promise<void> {
  const latencies: number[] = [];
  // when each read started (ms since the epoch), so a caller can split the latencies by phase of the crawl
  const at: number[] = [];
  let running = true;
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const one = async () => {
    await new Promise((r) => setTimeout(r, Math.random() * 1000));
    while (running) {
      const t = performance.now();
      const res = await fetch(url).catch(() => null);
      await res?.arrayBuffer().catch(() => null);
      if (res?.ok) {
        latencies.push(performance.now() - t);
        at.push(Math.round(performance.timeOrigin + t));
      }
      await new Promise((r) => setTimeout(r, 750 + Math.random() * 500));
    }
  };
  const all = Array.from({ length: count }, one);
  await new Promise((r) => process.stdin.on("end", r));
  running = false;
  await Promise.all(all);
  // the readers' own worst event-loop stall: a read in flight then waited for the reader, not for Trawl
  process.stdout.write(JSON.stringify({ latencies, at, loopMaxMs: +(delay.max / 1e6).toFixed(1) }));
}

await warmUp();
process.stdout.write("ready\n");
let input = "";
process.stdin.setEncoding("utf8");
const onData = (chunk: string) => {
  input += chunk;
  const nl = input.indexOf("\n");
  if (nl < 0) return;
  process.stdin.off("data", onData);
  void read(input.slice(0, nl));
};
process.stdin.on("data", onData);
