/** A date as a text wrote it: calendar fields and the zone it was written in, not yet checked. */
export interface DateParts {
	year: number;
	month: number;
	day: number;
	hour: number;
	minute: number;
	second: number;
	/** The digits after the second's point, up to six: Postgres keeps microseconds. */
	fraction: string;
	/** Minutes east of UTC. With no timeZone either, the text named no zone and is read as UTC. */
	offsetMinutes?: number;
	/** An IANA zone name (Europe/Berlin) that this process's Intl knows. */
	timeZone?: string;
}

/** Why a text in a known format is still no date (30 February, hour 25), said to the user. */
export interface NotADate {
	invalid: string;
}

export function notADate(reason: string): NotADate {
	return { invalid: reason };
}

/** What one format's reader makes of a text: undefined when the text is not in its format. */
export type Reading = DateParts | NotADate | undefined;

/** `+hh`, `+hhmm` or `+hh:mm` in minutes east of UTC; NaN for minutes past 59, which no zone has. */
export function signedOffset(sign: string, hours: string, minutes = '0'): number {
	const total = Number(hours) * 60 + Number(minutes);
	if (Number(minutes) > 59) return Number.NaN;
	return sign === '-' ? -total : total;
}
