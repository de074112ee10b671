// The Clock port: time comes from here, so tests can control it.
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
