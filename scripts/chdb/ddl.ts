// Prints, as JSON, every DDL statement of the migrations for the current-engine check (scripts/chdb.sh): the
// single-server form (pipeline/store/migrations.ts), the cluster form (ON CLUSTER, Replicated engines: cluster-ddl.ts)
// and the later column additions, for the database named by the first argument.
//   node scripts/chdb/ddl.ts <database> [cluster]
import { ADDED_COLUMNS, migrations } from "../../pipeline/store/migrations.ts";
import { clusterStatement } from "../../pipeline/store/cluster-ddl.ts";

const database = process.argv[2] ?? "trawl";
const cluster = process.argv[3] ?? "trawl";
const single = migrations(database);
const added = ADDED_COLUMNS.map((c) => `ALTER TABLE ${database}.${c.table} ADD COLUMN ${c.column} ${c.type}`);
console.log(JSON.stringify({ single, cluster: single.map((s) => clusterStatement(s, cluster)), added }, null, 2));
