// A throwaway CA and a server certificate it signed for 127.0.0.1 and localhost, made with openssl at test time.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TestCertificates {
  /** The CA's certificate (PEM): what a client trusts. */
  ca: string;
  /** The server's certificate and key (PEM). */
  cert: string;
  key: string;
}

/** Writes ca.crt, server.crt and server.key into `dir` (P-256 keys, valid two days). */
export async function makeTestCertificates(dir: string): Promise<TestCertificates> {
  const f = (name: string) => join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", ["req", "-x509", ...ec, "-days", "2", "-subj", "/CN=Trawl test CA", "-keyout", f("ca.key"), "-out", f("ca.crt")]);
  await run("openssl", ["req", ...ec, "-subj", "/CN=localhost", "-keyout", f("server.key"), "-out", f("server.csr")]);
  writeFileSync(f("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
  await run("openssl", ["x509", "-req", "-in", f("server.csr"), "-CA", f("ca.crt"), "-CAkey", f("ca.key"), "-CAcreateserial", "-days", "2", "-extfile", f("server.ext"), "-out", f("server.crt")]);
  return { ca: f("ca.crt"), cert: f("server.crt"), key: f("server.key") };
}
