// Embedded adapter of the AuthStore port: one JSON-lines file under DATA_DIR/store, replayed at start.
import { open as openFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { AppendLog, unframe } from "../runtime/append-log.ts";
import { latest, type AuthStore, type KeyRow, type TeamRow, type UsageRow } from "./auth-store.ts";

type Entry = { t: "team"; r: TeamRow } | { t: "key"; r: KeyRow } | { t: "used"; rows: { keyId: string; at: number }[] } | { t: "usage"; rows: UsageRow[] };

export class EmbeddedAuthStore implements AuthStore {
  private readonly log: AppendLog | null;
  private teams: TeamRow[] = [];
  private keys: KeyRow[] = [];
  private readonly used = new Map<string, number>();
  private readonly ledger = new Map<string, Map<string, UsageRow>>();
  /** Bytes of the file applied so far: other processes (`trawl keys`) append to it too. */
  private readBytes = 0;
  /** Reads of the file, one at a time (two at once would both apply the same bytes and count them twice). */
  private reading: Promise<void> = Promise.resolve();

  private constructor(dir: string | null, repair: boolean) {
    this.log = dir ? new AppendLog(join(dir, "store", "auth.jsonl"), { repair }) : null;
  }

  /**
   * Opens the store in `dir` (null: memory only). The server repairs a torn tail at start; `trawl keys` opens it
   * with `repair: false`, as the running server may be appending at that moment.
   */
  static async open(dir: string | null, opts: { repair?: boolean } = {}): Promise<EmbeddedAuthStore> {
    const store = new EmbeddedAuthStore(dir, opts.repair !== false);
    await store.refresh();
    return store;
  }

  /** Applies what was appended to the file since the last read (by this process or another one). */
  private refresh(): Promise<void> {
    const next = this.reading.then(() => this.readNew());
    this.reading = next.catch(() => undefined);
    return next;
  }

  private async readNew(): Promise<void> {
    if (!this.log) return;
    const size = await stat(this.log.path).then((s) => s.size, () => 0);
    if (size <= this.readBytes) return;
    const file = await openFile(this.log.path, "r");
    try {
      const buf = Buffer.alloc(size - this.readBytes);
      await file.read(buf, 0, buf.length, this.readBytes);
      const end = buf.lastIndexOf(0x0a) + 1; // a line still being written is read next time
      for (const line of buf.subarray(0, end).toString("utf8").split("\n")) {
        if (!line) continue;
        const json = unframe(line);
        if (json === null) continue; // a damaged line (checksum failed): its write never completed
        try {
          this.apply(JSON.parse(json) as Entry);
        } catch {
          // an unframed (format 1) line torn by a crash: the write it belonged to never completed
        }
      }
      this.readBytes += end;
    } finally {
      await file.close();
    }
  }

  private apply(e: Entry): void {
    if (e.t === "team") this.teams = latest([...this.teams, e.r], (t) => t.teamId);
    else if (e.t === "key") this.keys = latest([...this.keys, e.r], (k) => k.keyId + k.hash);
    else if (e.t === "used") for (const u of e.rows) this.used.set(u.keyId, Math.max(u.at, this.used.get(u.keyId) ?? 0));
    else for (const r of e.rows) {
      const jobs = this.ledger.get(r.teamId) ?? new Map<string, UsageRow>();
      const prev = jobs.get(r.jobId);
      if (!prev || r.at >= prev.at) jobs.set(r.jobId, r);
      this.ledger.set(r.teamId, jobs);
    }
  }

  private async write(e: Entry): Promise<void> {
    if (this.log) {
      await this.log.append([JSON.stringify(e)]).written;
      await this.refresh();
    } else this.apply(e);
  }

  saveTeam(team: TeamRow): Promise<void> {
    return this.write({ t: "team", r: team });
  }

  async listTeams(): Promise<TeamRow[]> {
    await this.refresh();
    return [...this.teams];
  }

  saveKey(key: KeyRow): Promise<void> {
    return this.write({ t: "key", r: key });
  }

  async keysById(keyId: string): Promise<KeyRow[]> {
    await this.refresh();
    return this.keys.filter((k) => k.keyId === keyId);
  }

  async listKeys(teamId?: string): Promise<KeyRow[]> {
    await this.refresh();
    return this.keys.filter((k) => teamId === undefined || k.teamId === teamId);
  }

  touchKeys(uses: { keyId: string; at: number }[]): Promise<void> {
    return uses.length ? this.write({ t: "used", rows: uses }) : Promise.resolve();
  }

  async lastUsed(): Promise<Map<string, number>> {
    await this.refresh();
    return new Map(this.used);
  }

  recordUsage(rows: UsageRow[]): Promise<void> {
    return rows.length ? this.write({ t: "usage", rows }) : Promise.resolve();
  }

  async usage(teamId: string): Promise<Map<string, number>> {
    await this.refresh();
    return new Map([...(this.ledger.get(teamId) ?? new Map<string, UsageRow>()).values()].map((r) => [r.jobId, r.credits]));
  }

  async close(): Promise<void> {
    await this.log?.close();
  }
}
