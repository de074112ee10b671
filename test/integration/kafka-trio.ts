// A private three-node KRaft cluster for a test that kills a broker: one controller and two brokers on free ports,
// from the jars scripts/kafka.sh installed (TRAWL_KAFKA_VERSION's when set), in a directory of its own. The groups'
// offsets topic has one partition replicated on both brokers, so every group's coordinator is its leader, and it moves
// to the other broker when that one dies. Stopped (every node, then the directory removed) by `stop()`.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { freePort } from "./own-infra.ts";

const root = join(import.meta.dirname, "..", "..");
const HOST = "127.0.0.1";

export interface KafkaTrio {
  /** node id -> "host:port" of the two brokers (ids 1 and 2; the controller is 3) */
  brokers: Map<number, string>;
  /** SIGKILL of one broker. */
  kill(nodeId: number): void;
  stop(): Promise<void>;
}

function libsDir(): string {
  const version = process.env.TRAWL_KAFKA_VERSION;
  return join(process.env.TRAWL_INFRA_DIR ?? join(root, ".infra"), version ? `kafka-${version}` : "kafka", "libs");
}

export async function startKafkaTrio(): Promise<KafkaTrio> {
  const dir = mkdtempSync(join(tmpdir(), "trawl-kafka-trio-"));
  const cp = `${libsDir()}/*`;
  const controllerPort = await freePort();
  const ports = new Map([[1, await freePort()], [2, await freePort()]]);
  const procs = new Map<number, ChildProcess>();
  // the storage tool wants a base64 UUID of 16 bytes
  const clusterId = Buffer.from(randomUUID().replaceAll("-", ""), "hex").toString("base64url").slice(0, 22);
  const props = (id: number): string => {
    const broker = id !== 3;
    const lines = [
      `process.roles=${broker ? "broker" : "controller"}`,
      `node.id=${id}`,
      `controller.quorum.voters=3@${HOST}:${controllerPort}`,
      `listeners=${broker ? `PLAINTEXT://${HOST}:${ports.get(id)}` : `CONTROLLER://${HOST}:${controllerPort}`}`,
      ...(broker ? [`advertised.listeners=PLAINTEXT://${HOST}:${ports.get(id)}`, "inter.broker.listener.name=PLAINTEXT"] : []),
      "controller.listener.names=CONTROLLER",
      "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
      `log.dirs=${join(dir, String(id))}`,
      "offsets.topic.num.partitions=1",
      "offsets.topic.replication.factor=2",
      "transaction.state.log.replication.factor=2",
      "transaction.state.log.min.isr=1",
      "min.insync.replicas=1",
      "auto.create.topics.enable=false",
      "group.initial.rebalance.delay.ms=0",
      // a dead broker is fenced (its partitions' leadership moves) after 3 s, not 9
      "broker.session.timeout.ms=3000",
      "broker.heartbeat.interval.ms=500",
    ];
    return lines.join("\n") + "\n";
  };
  for (const id of [3, 1, 2]) {
    mkdirSync(join(dir, String(id)), { recursive: true });
    writeFileSync(join(dir, `${id}.properties`), props(id));
    execFileSync("java", ["-cp", cp, "kafka.tools.StorageTool", "format", "-t", clusterId, "-c", join(dir, `${id}.properties`)], { stdio: "ignore" });
  }
  const start = (id: number) => {
    const p = spawn("java", ["-Xms64m", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", cp, "kafka.Kafka", join(dir, `${id}.properties`)], { stdio: "ignore" });
    procs.set(id, p);
  };
  for (const id of [3, 1, 2]) start(id);
  const stop = async () => {
    await Promise.all([...procs.values()].map((p) => new Promise<void>((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once("exit", () => resolve());
      p.kill("SIGKILL");
    })));
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    brokers: new Map([...ports].map(([id, port]) => [id, `${HOST}:${port}`])),
    kill: (id) => void procs.get(id)?.kill("SIGKILL"),
    stop,
  };
}
