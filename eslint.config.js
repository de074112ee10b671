import js from "@eslint/js";
import tseslint from "typescript-eslint";

const STAGES = ["admission", "frontier", "fetch-render", "render", "convert", "extract-json", "sink", "webhook-emit"];
const anyOf = (folders) => folders.map((f) => `**/${f}/**`);

/**
 * Which folder may import which (docs/architecture.md, "Where things live"). ESLint applies one
 * no-restricted-imports setting per file (the last block that matches), so each layer lists everything it may not use.
 * - nothing imports the composition root (app/) but bin/, tests and benchmarks;
 * - schemas/ imports nothing of the project;
 * - the API imports no stage directly: it goes through pipeline/usecases, runtime, store, url and net;
 * - runtime/, store/, url/ and net/ import no stage and no use case; a stage imports no other stage.
 */
const layers = [
  { files: ["api/**"], forbidden: ["app", ...STAGES] },
  { files: ["schemas/**"], forbidden: ["app", "api", "pipeline"] },
  { files: ["pipeline/**"], forbidden: ["app", "api"] },
  ...["runtime", "store", "url", "net", "browser"].map((layer) => ({ files: [`pipeline/${layer}/**`], forbidden: ["app", "api", "usecases", ...STAGES] })),
  ...STAGES.map((stage) => ({ files: [`pipeline/${stage}/**`], forbidden: ["app", "api", "usecases", ...STAGES.filter((s) => s !== stage)] })),
  { files: ["clients/**"], forbidden: ["app", "api", "pipeline"] },
].map(({ files, forbidden }) => ({
  files,
  ignores: ["**/*.test.ts"],
  rules: {
    "no-restricted-imports": ["error", {
      patterns: [{ group: anyOf(forbidden), message: `${files[0]} may not import this folder (see the layering in eslint.config.js and docs/architecture.md)` }],
    }],
  },
}));

export default tseslint.config(
  { ignores: ["node_modules/**", ".infra/**", ".venv/**", ".schemathesis/**", ".venv-sdk/**", "bench/results/**", "schemas/types.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", Buffer: "readonly" } },
    rules: {
      "no-empty": ["error", { allowEmptyCatch: false }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "error",
    },
  },
  { files: ["bin/**", "scripts/**", "test/**", "bench/**", "docs/examples/**", "app/**"], rules: { "no-console": "off" } },
  { files: ["**/*.test.ts", "test/**"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
  ...layers,
);
