import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", ".infra/**", "bench/results/**", "schemas/types.ts"] },
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
);
