// Pure paging rule of GET /v2/crawl/:id: take documents in order while their JSON fits the byte budget.
// The document that crosses the budget is left for the next chunk, unless it is the first one.

export function fitChunk(sizes: number[], maxBytes: number, maxDocs: number): number {
  let total = 0;
  let n = 0;
  for (const size of sizes) {
    if (n >= maxDocs) break;
    // separators: "," between documents inside the data array
    const add = size + (n > 0 ? 1 : 0);
    if (n > 0 && total + add > maxBytes) break;
    total += add;
    n++;
  }
  return n;
}
