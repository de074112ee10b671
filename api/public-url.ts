// Absolute URLs of this API as the caller reached it (scheme and host; X-Forwarded-* only behind a trusted proxy).
import type { Context } from "koa";

export function publicBase(ctx: Context, trustProxy: boolean): string {
  const fwdProto = trustProxy ? ctx.get("x-forwarded-proto").split(",")[0]?.trim() : "";
  const fwdHost = trustProxy ? ctx.get("x-forwarded-host").split(",")[0]?.trim() : "";
  const proto = fwdProto || ctx.protocol;
  const host = fwdHost || ctx.get("host") || `${ctx.request.socket.localAddress}:${ctx.request.socket.localPort}`;
  return `${proto}://${host}`;
}

/**
 * SCREENSHOTS=url: a job that takes screenshots records where they will be served (the renderer, in another process,
 * builds their URLs from it).
 */
export function withScreenshotBase<T extends { screenshot?: unknown; actions?: { type: string }[]; screenshotBase?: string }>(ctx: Context, config: { screenshots: string; trustProxy: boolean }, options: T): T {
  const shoots = options.screenshot !== undefined || (options.actions ?? []).some((a) => a.type === "screenshot");
  return config.screenshots === "url" && shoots ? { ...options, screenshotBase: publicBase(ctx, config.trustProxy) } : options;
}
