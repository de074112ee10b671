import { describe, expect, it } from "vitest";
import { extractiveAnswer, extractiveHighlights, rankPassages } from "./passages.ts";

const PAGE = `# PostgreSQL: Connecting

PostgreSQL is an object-relational database system with a long history of active development.

The server listens on TCP port 5432 by default, and the port can be changed with the port setting in postgresql.conf.

Clients connect through libpq, which reads the PGHOST and PGPORT environment variables when no host or port is given.

Installation from source takes about ten minutes on a modern machine.

- Default port: 5432 for every installation
- Maximum connections: 100 unless max_connections says otherwise

\`\`\`
port = 5433   # a port in a code block is never an answer
\`\`\`
`;

describe("extractive question and highlights", () => {
  it("answers with the page's own best-matching sentence", () => {
    expect(extractiveAnswer(PAGE, "Which port does the server listen on?")).toBe(
      "The server listens on TCP port 5432 by default, and the port can be changed with the port setting in postgresql.conf.");
    expect(extractiveAnswer(PAGE, "How many connections are allowed?")).toBe("Maximum connections: 100 unless max_connections says otherwise");
  });

  it("matches near word forms, weighs rare words above common ones, never reads code blocks", () => {
    expect(extractiveAnswer(PAGE, "how long does installing take")).toContain("ten minutes");
    const ranked = rankPassages(PAGE, "port");
    expect(ranked.length).toBeGreaterThan(1);
    expect(ranked.every((p) => !p.text.includes("5433"))).toBe(true);
  });

  it("nothing in common: an empty answer, no highlights", () => {
    expect(extractiveAnswer(PAGE, "What colour is the sky?")).toBe("");
    expect(extractiveHighlights(PAGE, "zebra")).toBe("");
    expect(extractiveAnswer("", "port")).toBe("");
  });

  it("highlights: at most three passages, best first, verbatim, separated by blank lines", () => {
    const h = extractiveHighlights(PAGE, "port environment variables").split("\n\n");
    expect(h.length).toBeLessThanOrEqual(3);
    expect(h[0]).toBe("Clients connect through libpq, which reads the PGHOST and PGPORT environment variables when no host or port is given.");
    for (const p of h) expect(PAGE.replace(/^- /gm, "")).toContain(p);
  });
});
