// Every mod test's time limit: a hang guard, not a timing assertion. The kit's default of 5 seconds is one a loaded
// 2-core machine overran on tests that take a second when idle, a different test each run.
export const HANG_GUARD = { timeoutMs: 60_000 } as const
