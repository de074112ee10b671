// Absolute URLs of this API as the caller reached it (scheme and host; X-Forwarded-* only behind a trusted proxy).
import type { Context } from "koa";

export function publicBase(ctx: Context, trustProxy: boolean): string {
  const fwdProto = trustProxy ? ctx.get("x-forwarded-proto").split(",")[0]?.trim() : "";
  const fwdHost = trustProxy ? ctx.get("x-forwarded-host").split(",")[0]?.trim() : "";
  const proto = fwdProto || ctx.protocol;
  const host = fwdHost || ctx.get("host") || `${ctx.request.socket.localAddress}:${ctx.request.socket.localPort}`;
  return `${proto}://${host}`;
}
