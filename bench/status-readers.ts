// Status readers in a process of their own: each GETs the URL about once a second (jittered) until stdin closes, then
// the latencies (ms) go to stdout as one JSON array. A process apart, so that the bench process's own work (it serves
// the crawled site) does not delay the readers' clocks and count as Trawl's latency.
// usage: node bench/status-readers.ts <url> <readers>
const [url, count] = process.argv.slice(2);
if (!url || !Number(count)) throw new Error("usage: status-readers.ts <url> <readers>");

const latencies: number[] = [];
let running = true;
const one = async () => {
  await new Promise((r) => setTimeout(r, Math.random() * 1000));
  while (running) {
    const t = performance.now();
    const res = await fetch(url).catch(() => null);
    await res?.arrayBuffer().catch(() => null);
    if (res?.ok) latencies.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 750 + Math.random() * 500));
  }
};
const all = Array.from({ length: Number(count) }, one);
process.stdin.resume();
process.stdin.on("end", async () => {
  running = false;
  await Promise.all(all);
  process.stdout.write(JSON.stringify(latencies));
});
