// Runs before each test file: with TRAWL_SQL_CAPTURE=<file>, every distinct statement sent to ClickHouse is appended to
// the file (pipeline/store/sql-capture.ts); .ci/run sets it for `npm test`, then scripts/chdb.sh checks the file.
// Once per process: the channel is the process's, while this file runs again for each test file of a worker.
import { captureStatements } from "../../pipeline/store/sql-capture.ts";

const file = process.env.TRAWL_SQL_CAPTURE;
const once = Symbol.for("trawl.sqlCapture");
const marks = globalThis as { [once]?: boolean };
if (file && !marks[once]) {
  marks[once] = true;
  captureStatements(file);
}
