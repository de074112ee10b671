// Argument parsing shared by the CLI commands: one URL, the given flags, --help; usage errors exit 2.
import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

export type Parsed = { exit: number } | { values: Record<string, string | boolean | string[] | undefined>; url: string };

/** The parsed flags and the one URL, or the exit status when there is nothing to run (help shown or bad usage). */
export function commandArgs(argv: string[], options: Options, help: string): Parsed {
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...options, help: { type: "boolean", short: "h" } } });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${help}`);
    return { exit: 2 };
  }
  if (parsed.values.help) {
    console.log(help);
    return { exit: 0 };
  }
  if (parsed.positionals.length !== 1) {
    console.error(`give exactly one URL\n\n${help}`);
    return { exit: 2 };
  }
  return { values: parsed.values as Record<string, string | boolean | string[] | undefined>, url: parsed.positionals[0] as string };
}
