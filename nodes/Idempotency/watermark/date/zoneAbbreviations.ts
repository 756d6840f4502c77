/**
 * The zone abbreviations RFC 2822 and JavaScript's Date both know, in minutes east of UTC (UTC and Z
 * are JavaScript's alone). They name an offset, not a place: EDT is -04:00 whatever the date.
 */
export const ZONE_ABBREVIATIONS: Record<string, number> = {
	UT: 0,
	UTC: 0,
	GMT: 0,
	Z: 0,
	EST: -300,
	EDT: -240,
	CST: -360,
	CDT: -300,
	MST: -420,
	MDT: -360,
	PST: -480,
	PDT: -420,
};
