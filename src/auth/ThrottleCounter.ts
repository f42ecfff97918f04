/**
 * How failed sign-ins are counted against one key (an account or a client
 * address). `LoginThrottleRedis` runs the same rules as a Lua script: keep
 * the two in step.
 */
export interface ThrottlePolicy {
  /** Failures allowed in one window; the attempt that reaches it is the last before a wait. */
  readonly maxFailures: number
  readonly windowMs: number
  /** The longest wait: each failure past `maxFailures` doubles it up to here. */
  readonly maxLockMs: number
}

/** The state of one key. Absent: no failure remembered. */
export interface Counter {
  readonly failures: number
  /** No attempt before this instant (ms). */
  readonly lockedUntil: number
  /** The failures are forgotten at this instant (ms). */
  readonly resetAt: number
}

/**
 * One attempt, counted as a failure before the password is checked (so that
 * concurrent guesses cannot overtake the count; a success gives it back).
 * `waitMs` > 0: refused, nothing counted. The attempt that reaches
 * `maxFailures` starts a wait of one window; each further one doubles it.
 */
export const attempt = (
  counter: Counter | undefined,
  nowMs: number,
  policy: ThrottlePolicy
): { readonly waitMs: number; readonly next: Counter | undefined } => {
  if (counter !== undefined && counter.lockedUntil > nowMs)
    return { waitMs: counter.lockedUntil - nowMs, next: counter }
  const failures = counter === undefined || counter.resetAt <= nowMs ? 1 : counter.failures + 1
  if (failures < policy.maxFailures) {
    const resetAt = failures === 1 || counter === undefined ? nowMs + policy.windowMs : counter.resetAt
    return { waitMs: 0, next: { failures, lockedUntil: 0, resetAt } }
  }
  const lockedUntil = nowMs + lockMs(failures, policy)
  return { waitMs: 0, next: { failures, lockedUntil, resetAt: lockedUntil + policy.windowMs } }
}

const lockMs = (failures: number, policy: ThrottlePolicy) =>
  Math.min(policy.windowMs * 2 ** Math.min(failures - policy.maxFailures, 30), policy.maxLockMs)

/** An attempt that succeeded gives its failure back (and the wait it may have started). */
export const forgiveOne = (counter: Counter | undefined, policy: ThrottlePolicy): Counter | undefined => {
  if (counter === undefined || counter.failures <= 1) return undefined
  const failures = counter.failures - 1
  return failures < policy.maxFailures ? { ...counter, failures, lockedUntil: 0 } : { ...counter, failures }
}
