#!/usr/bin/env node
// Entry point of `npx trawl <role>`. Node 24 runs the TypeScript sources directly (type stripping).
import { main } from "../app/main.ts";

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
