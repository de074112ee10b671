import { describe, expect, it } from "vitest";
import { javaPartition, murmur2 } from "./java-partitioner.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("javaPartition", () => {
  it("hashes as Kafka's Utils.murmur2 (the Java client's own test vectors, UtilsTest.testMurmur2)", () => {
    expect(murmur2(bytes("21"))).toBe(-973932308);
    expect(murmur2(bytes("foobar"))).toBe(-790332482);
    expect(murmur2(bytes("a-little-bit-long-string"))).toBe(-985981536);
    expect(murmur2(bytes("a-little-bit-longer-string"))).toBe(-1486304829);
    expect(murmur2(bytes("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"))).toBe(-58897971);
    expect(murmur2(new Uint8Array([0x61, 0x62, 0x63]))).toBe(479470107);
  });

  it("places keys where a real broker received them from librdkafka's murmur2 partitioner (kcat, 16 partitions)", () => {
    // produced with `kcat -P -X topic.partitioner=murmur2_random` to a 16-partition topic on Kafka 4.4 and read back
    // with the partition each record landed in (two keys per partition)
    const observed: [string, number][] = [["dMlH.UvTC:QCyEZDz._TddJ8HyS5SUkCnD8zRA9a9SkpX",0],["lHkCiHp6bR1IqfEouHgxzNNAL5:wIScGebc:y/8F5",0],["rK-gqv81RKMGHZEM9YpvujA:_C5Q52ryFlwRlOEV",1],["TZ.tFf_VnV7ktOdSJ.cmeA-B",1],["YgCfrL1spNxnyVmihA_2O76UMFxFkM_R5Kjp/",2],["zc0X0AWIRh_JUq:Bl",2],["o_hBKqFYY_kv5ZJr3J1TWDtkwtDDb-xHKas1VOq/",3],["3_Y:NBD",3],["5gcF-Ha6i:li8GjHEAD6_Wj9K",4],["g9aW37k5wCnHDepQHgI3.HLBk:bvHEzuPyXQEW88a",4],["z9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBL:EPH1qhT6.1:qt/c4xa",5],["Gr7CmY-uCu",5],["jU2JgJngKtFI3/OyV2dZAkg05",6],["e_9i0mYtluYI0K",6],["zrZSgqbjG3uhkW:KFLf6xu",7],["07Lq8TDIWG2x9aJTFMP9-2kUtMXhkPrSbbAjLGmsDx5",7],["vRt-1fjORS_6ilI8ihN5KXSc7Tv",8],["tws8phP.9nhFyJfm:5di4P:/zJ5/9:F.Hz5r1pY4OjE2jBMptU",8],["tYgjmUh:Bel31iEl2hpCh",9],["TC0MrAU8urbFt5misIZHbhS4._FvafhdZx",9],["5aHUQPFeNBTxaQWk8J",10],["kL_6GgebhbkXNNv-hOV48vsoUu19X5IQLJhQbtN2FWXWD5K",10],["g6YYZYn9ZhyiA4uoRgnatmUdjAWtGSU8po-799Nk",11],["R1UYzaL:iA_zNyD7CHLn_xC-1hsYgBds1ghxY5OokvQyx",11],["zF:alHlsZfYcMMDktXP_tKsf/2:r:cDkd",12],["Dn87XG3_q_xbMtEPO6Uk/zYuF0ie9Pu2njHkAm1_5wDr16EpLLJIV",12],["3/ZR1zTOlUcR64cXQ.L/ioDnkHIfxIq2HZt/_PlJhx2jIc",13],[":Wrd",13],["nRH9u.cAUs",14],["Hz4FxFEtKyPiYGF:D",14],["iRUIQfHOJMaid",15],["qf9OgXluCZz8xBfZ.uXT",15]];
    expect(new Set(observed.map(([, p]) => p)).size).toBe(16);
    for (const [key, partition] of observed) expect(javaPartition(key, 16)).toBe(partition);
  });

  it("hashes the UTF-8 bytes of a string key, and a Buffer key as given", () => {
    expect(javaPartition("crawl-é", 12)).toBe(javaPartition(Buffer.from("crawl-é", "utf8"), 12));
    expect(murmur2(bytes("é"))).not.toBe(murmur2(new Uint8Array([0xe9])));
  });

  it("refuses a partition count that is not a positive integer", () => {
    expect(() => javaPartition("k", 0)).toThrow(RangeError);
    expect(() => javaPartition("k", 1.5)).toThrow(RangeError);
  });
});
