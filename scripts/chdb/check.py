"""Trawl's SQL on the current ClickHouse engine, in-process with chdb-core (scripts/chdb.sh runs this).

  check.py <ddl.json> <capture.jsonl>

ddl.json (scripts/chdb/ddl.ts): the migrations' DDL for the database "trawl_check", in its single-server form, its
cluster form and the later column additions. capture.jsonl: the statements a test run sent to ClickHouse 18.16
(TRAWL_SQL_CAPTURE, pipeline/store/sql-capture.ts), with string values as 'x' and the database as {db}.

1. Every single-server DDL statement and column addition runs, in order, on an empty database.
2. Every cluster DDL statement is parsed whole (EXPLAIN AST: ON CLUSTER and the Replicated engine with its ZooKeeper
   path and {shard}/{replica} macros), then runs with ON CLUSTER removed and each Replicated*MergeTree engine made its
   plain twin (chdb has no ZooKeeper and no cluster): that checks the rest of the statement on the engine.
3. Every captured statement runs, in the order the tests first sent it, on one database that the replay builds (its
   first statements are the migrations): INSERTs with their example row, so that the SELECTs after them read rows.
   A SELECT's columns (names, in order, and how each reads in JSON) must be those ClickHouse 18.16 answered: from the
   result's types, and from its rows when it has some. Statements that need a state the replay does not have (a
   table the tests made in another database, a column already added) run again on a freshly migrated database; if
   that is not their state either, they are parsed only (listed). SYSTEM statements (the tests' replica
   housekeeping, a healed replica's SYNC REPLICA) are parsed only: chdb has no replicas. A Replicated CREATE or ATTACH
   of one replica alone (a heal) is parsed whole, then runs as a plain CREATE. `DROP DATABASE {db}` runs on a database of its own.
Fails with the list of every statement the engine rejects and every result shape that differs.
"""
import json
import re
import shutil
import sys
import tempfile
import time

from chdb import session as chs

DB = "trawl_check"
FRESH = "trawl_check_fresh"
REPLAY = "trawl_check_replay"
# errors that say the statement met another state than it was written for, not that the engine refused it
STATE_CODES = {15, 44, 57, 60, 81, 82, 473}
SETTINGS = "SET output_format_json_quote_64bit_integers = 0"


def code_of(err):
    m = re.search(r"Code: (\d+)", str(err))
    return int(m.group(1)) if m else None


def first_line(err):
    return str(err).strip().splitlines()[0][:400]


def strip_cluster(statement):
    """ON CLUSTER removed, ReplicatedXMergeTree('/path', '{replica}'[, args]) -> XMergeTree(args)."""
    out = re.sub(r"\s+ON CLUSTER\s+('[^']*'|[A-Za-z0-9_]+)", "", statement)
    return re.sub(r"\bReplicated([A-Za-z]*MergeTree)\(\s*'[^']*'\s*,\s*'[^']*'\s*(?:,\s*)?", r"\1(", out)


def kinds_of_type(t):
    """How a value of ClickHouse type `t` reads in JSON output (output_format_json_quote_64bit_integers = 0)."""
    m = re.fullmatch(r"LowCardinality\((.*)\)", t)
    if m:
        return kinds_of_type(m.group(1))
    m = re.fullmatch(r"Nullable\((.*)\)", t)
    if m:
        return kinds_of_type(m.group(1)) | {"null"}
    if t.startswith(("Array(", "Tuple(")):
        return {"array", "object"} if t.startswith("Tuple(") else {"array"}
    if t.startswith(("Map(", "JSON", "Object(")):
        return {"object"}
    if t == "Bool":
        return {"boolean"}
    if re.fullmatch(r"U?Int(8|16|32|64)|Float(32|64)", t):
        return {"number"}
    return {"string"}


def kind_of_value(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "string"


class Check:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="trawl-chdb-")
        self.s = chs.Session(self.path)
        self.s.query(SETTINGS)
        self.rejected = []  # (statement, message)
        self.parsed_only = []  # (statement, why)
        self.ran = 0
        self.shapes_checked = 0

    def close(self):
        self.s.close()
        shutil.rmtree(self.path, ignore_errors=True)

    def q(self, text, fmt="CSV"):
        return self.s.query(text, fmt)

    def parses(self, statement):
        try:
            self.q(f"EXPLAIN AST {statement}", "TSV")
            return True
        except Exception as err:  # noqa: BLE001 - the engine's refusal is what we report
            self.rejected.append((statement, f"does not parse: {first_line(err)}"))
            return False

    def run(self, statement, where=""):
        try:
            self.q(statement)
            self.ran += 1
        except Exception as err:  # noqa: BLE001
            self.rejected.append((statement, f"{where}{first_line(err)}"))

    def migrate(self, database, ddl, added=True):
        for st in ddl["single"]:
            self.q(st.replace(DB, database))
        if added:
            for st in ddl["added"]:
                self.q(st.replace(DB, database))

    # 1 and 2: the migrations
    def ddl(self, ddl):
        for st in ddl["single"] + ddl["added"]:
            self.run(st, "single-server DDL: ")
        for st in ddl["cluster"]:
            named = st.replace(DB, f"{DB}_cluster")
            if self.parses(named):
                self.run(strip_cluster(named), "cluster DDL (ON CLUSTER removed, plain engine): ")

    # 3: the captured statements
    def replay(self, captured):
        fresh = False
        for c in captured:
            st = c["sql"].replace("{db}", REPLAY)
            head = st.lstrip().upper()
            if head.startswith("SYSTEM "):
                if self.parses(st):
                    self.parsed_only.append((c["sql"], "SYSTEM statement: chdb has no replicas"))
                continue
            if head.startswith("DROP DATABASE"):
                own = f"{REPLAY}_dropped"
                self.q(f"CREATE DATABASE IF NOT EXISTS {own}")
                self.run(c["sql"].replace("{db}", own))
                continue
            if " ON CLUSTER " in st or (re.match(r"\s*(CREATE|ATTACH) TABLE", st) and "Replicated" in st):
                # a replica healed alone (replica-heal.ts) runs the Replicated CREATE without ON CLUSTER, or ATTACHes it
                if not self.parses(st):
                    continue
                st = re.sub(r"^\s*ATTACH TABLE", "CREATE TABLE IF NOT EXISTS", strip_cluster(st))
            err = self.attempt(c, st)
            if err is None:
                continue
            if code_of(err) not in STATE_CODES:
                self.rejected.append((c["sql"], first_line(err)))
                continue
            if not fresh:
                self.migrate(FRESH, self.ddl_text)
                fresh = True
            again = self.attempt(c, st.replace(REPLAY, FRESH))
            if again is None:
                continue
            if code_of(again) not in STATE_CODES:
                self.rejected.append((c["sql"], first_line(again)))
            elif self.parses(st):
                self.parsed_only.append((c["sql"], f"needs a state the replay has not: {first_line(again)}"))

    def attempt(self, c, st):
        """Runs one statement; a query's result shape is compared. Returns the error, or None."""
        try:
            if c["kind"] != "query":
                self.q(st)
                self.ran += 1
                return None
            out = json.loads(self.q(f"{st.rstrip().rstrip(';')}\nFORMAT JSON", "CSV").bytes() or b"{}")
        except Exception as err:  # noqa: BLE001
            return err
        self.ran += 1
        want = c.get("columns")
        if want:
            self.compare(c["sql"], want, out)
        return None

    def compare(self, statement, want, out):
        self.shapes_checked += 1
        meta = out.get("meta", [])
        names = [m["name"] for m in meta]
        if names != list(want):
            self.rejected.append((statement, f"columns {names}, ClickHouse 18.16 answered {list(want)}"))
            return
        rows = out.get("data", [])
        for m in meta:
            expected = set(want[m["name"]])
            got = kinds_of_type(m["type"])
            if not expected <= got:
                self.rejected.append((statement, f"column {m['name']} is {m['type']} (JSON {sorted(got)}), 18.16 gave JSON {sorted(expected)}"))
                continue
            for r in rows[:1]:
                k = kind_of_value(r.get(m["name"]))
                if k not in expected and not (k == "null" and "null" in got):
                    self.rejected.append((statement, f"column {m['name']} reads as JSON {k}, 18.16 gave {sorted(expected)}"))


def load_capture(path):
    """Distinct statements in first-sent order; the columns of one statement merged over every line that has them."""
    order, by = [], {}
    with open(path, encoding="utf8") as f:
        for line in f:
            if not line.strip():
                continue
            c = json.loads(line)
            key = (c["kind"], c["shape"])
            if key not in by:
                by[key] = {"kind": c["kind"], "sql": c["sql"], "columns": None}
                order.append(key)
            cols = c.get("columns")
            if cols:
                merged = by[key]["columns"] or {name: [] for name in cols}
                if list(merged) != list(cols):
                    by[key]["conflict"] = list(cols)
                for name, kind in cols.items():
                    if name in merged and kind not in merged[name]:
                        merged[name].append(kind)
                by[key]["columns"] = merged
    return [by[k] for k in order]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    started = time.time()
    with open(sys.argv[1], encoding="utf8") as f:
        ddl = json.load(f)
    captured = load_capture(sys.argv[2])
    check = Check()
    check.ddl_text = ddl
    try:
        version = check.q("SELECT version()", "TSV").bytes().decode().strip()
        major = int(version.split(".")[0])
        print(f"[chdb] ClickHouse {version} in-process (chdb-core)")
        if major < 25:
            print(f"[chdb] FAIL: the engine is {version}, not a current release (25.x or later)")
            sys.exit(1)
        check.ddl(ddl)
        n_ddl = check.ran
        check.replay(captured)
        queries = sum(1 for c in captured if c["kind"] == "query")
        print(f"[chdb] migrations: {len(ddl['single'])} single-server + {len(ddl['added'])} column additions run, "
              f"{len(ddl['cluster'])} cluster statements parsed and run without ON CLUSTER/Replicated ({n_ddl} statements)")
        print(f"[chdb] captured: {len(captured)} distinct statements ({queries} queries, "
              f"{check.shapes_checked} result shapes compared with 18.16's), {check.ran - n_ddl} run, "
              f"{len(check.parsed_only)} parsed only, in {time.time() - started:.1f} s")
        for st, why in check.parsed_only:
            print(f"[chdb]   parsed only ({why}): {' '.join(st.split())[:160]}")
        conflicts = [c for c in captured if c.get("conflict")]
        for c in conflicts:
            check.rejected.append((c["sql"], f"18.16 answered different columns for one statement: {list(c['columns'])} and {c['conflict']}"))
        if check.rejected:
            print(f"[chdb] FAIL: {len(check.rejected)} statement(s) the current engine rejects or answers differently:")
            for st, why in check.rejected:
                print(f"\n  {why}\n    {' '.join(st.split())[:600]}")
            sys.exit(1)
        print("[chdb] ok")
    finally:
        check.close()


if __name__ == "__main__":
    main()
