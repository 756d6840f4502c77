/**
 * The longest lease, quiet period or retry delay the nodes take: a year. Far longer ones overflow
 * Postgres' timestamp arithmetic and would fail every item's statement as a database error.
 */
export const LONGEST_DURATION_SECONDS = 31_536_000;
