// ClickHouseMonitorStore.claimCheck on the real ClickHouse (18.16, no compare-and-set): of twenty claims of one
// monitor's next check made at once through four clients, one wins; a claim given up lets the next one win; a claimer
// whose insert took the settle time gives up (no winner rather than two); a claim follows its own `after`.
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { CLAIM_SETTLE_MS, ClickHouseMonitorStore } from "../../pipeline/store/clickhouse-monitor-store.ts";
import { migrate } from "../../pipeline/store/migrations.ts";
import { raw } from "../../pipeline/store/sql.ts";

const config = loadConfig(process.env);
const database = `trawl_claims_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
const client = () => new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database });
const admin = client();
afterAll(async () => {
  await admin.exec(raw(`DROP DATABASE IF EXISTS ${database}`));
});

describe("monitor claims in ClickHouse", () => {
  it("one of twenty concurrent claims wins; a given-up claim lets the next win; a slow claimer gives up", async () => {
    await migrate(admin);
    const stores = Array.from({ length: 4 }, () => new ClickHouseMonitorStore(client()));
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (stores[i % 4] as ClickHouseMonitorStore).claimCheck("m1", "c0", `check-${i}`)));
    const won = claims.filter((c): c is string => c !== null);
    expect(won).toHaveLength(1);
    // held: a later claim of the same `after` loses; another `after` (the won check started) is free
    expect(await stores[0]?.claimCheck("m1", "c0", "later")).toBeNull();
    expect(await stores[1]?.claimCheck("m1", "c1", "next")).not.toBeNull();
    // given up (its check did not start): the next claim wins
    await stores[2]?.releaseCheck("m1", "c0", won[0] as string);
    expect(await stores[3]?.claimCheck("m1", "c0", "after-release")).not.toBeNull();
    // a claimer whose clock says its insert took the settle time gives up, and leaves nothing in the way
    let t = Date.now();
    const slow = new ClickHouseMonitorStore(client(), () => (t += CLAIM_SETTLE_MS));
    expect(await slow.claimCheck("m2", "c0", "slow")).toBeNull();
    expect(await stores[0]?.claimCheck("m2", "c0", "fast")).not.toBeNull();
  });
});
