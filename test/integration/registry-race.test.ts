// Replicas that start together register the same new subjects at the same moment (a compose or Kubernetes deploy of
// every role on a fresh registry). Apicurio answers all but the first of those POSTs with 409 "An artifact with ID …
// already exists" (seen in deploy/compose.yaml's run: six of seven roles stopped with SCHEMA_REJECTED and were only
// saved by their restart policy). Every one of them must get the schema's id.
import { describe, expect, it } from "vitest";
import { connectRegistry, registryConnection } from "../../pipeline/runtime/registry.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";

const REGISTRY = process.env.TRAWL_TEST_REGISTRY_URL ?? `http://127.0.0.1:${process.env.TRAWL_REGISTRY_PORT ?? "18181"}/apis/ccompat/v7`;

describe("schema registration by replicas starting together", () => {
  it("every replica gets the ids, the same ones", async () => {
    const conn = registryConnection({ schemaRegistryUrl: REGISTRY, schemaRegistryUsername: "", schemaRegistryPassword: "", schemaRegistryCaFile: "" });
    const prefix = `race${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const log = createLogger("silent");
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => connectRegistry(conn, prefix, log)));
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const ids = results.map((r) => [...(r as PromiseFulfilledResult<Awaited<ReturnType<typeof connectRegistry>>>).value.ids.entries()]);
    for (const one of ids) expect(one).toEqual(ids[0]);
  });
});
