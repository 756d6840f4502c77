import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { SettingError } from '../../errors';
import { readOptionalScope } from '../../key/scope';
import type { EventFilter, EventState } from '../../store/inbox/inboxFilter';
import { readDate } from '../../watermark/readDate';
import { readNumber } from './readNumber';

/** The Filters of Requeue Kept Events and Discard Kept Events, read once per execution (item 0). */
export function readEventFilter(context: IExecuteFunctions, state: EventState): EventFilter {
	const given = (context.getNodeParameter('eventFilters', 0, {}) ?? {}) as IDataObject;
	const filter: EventFilter = { state };
	const scope = readOptionalScope(given.scope);
	if (scope !== null) filter.scope = scope;
	filter.parkedFrom = readTime(given.parkedFrom, 'Parked At or After');
	filter.parkedBefore = readTime(given.parkedBefore, 'Parked Before');
	filter.receivedFrom = readTime(given.receivedFrom, 'Received At or After');
	filter.receivedBefore = readTime(given.receivedBefore, 'Received Before');
	const errorContains = readText(given.errorContains, 'Error Contains');
	if (errorContains !== undefined) filter.errorContains = errorContains;
	filter.attemptsAtLeast = readAttempts(given.attemptsAtLeast, 'Attempts At Least');
	filter.attemptsAtMost = readAttempts(given.attemptsAtMost, 'Attempts At Most');
	return filter;
}

/** Text to look for; anything else an expression gives is refused, never dropped (it would widen the filter). */
function readText(value: unknown, label: string): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	if (typeof value !== 'string')
		throw new SettingError(`${label} must be text, got ${JSON.stringify(value) ?? String(value)}`);
	return value;
}

function readAttempts(value: unknown, label: string): number | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	return readNumber(value, label, { min: 0, max: 2147483647, integer: true });
}

/**
 * A time as UTC text Postgres reads exactly: an ISO 8601 text (no zone: UTC), the other forms Remove
 * Duplicates reads, a Date, or the DateTime an expression such as `{{ $now.minus({ hours: 2 }) }}` gives.
 */
function readTime(value: unknown, label: string): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
	const iso = (value as { toISO?: unknown }).toISO;
	const text = typeof iso === 'function' ? String(iso.call(value)) : value;
	if (typeof text !== 'string') throw new SettingError(`${label} is not a date`);
	const instant = readDate(text.trim(), 'UTC');
	if (!instant)
		throw new SettingError(
			`${label} is "${text}", which is not a date (give ISO 8601 such as 2024-08-09T13:44:16Z)`,
		);
	if ('invalid' in instant)
		throw new SettingError(`${label} is "${text}", which is not a valid date: ${instant.invalid}`);
	const fraction = instant.fraction === '' ? '' : `.${instant.fraction}`;
	return `${new Date(instant.utcMs).toISOString().slice(0, 19)}${fraction}Z`;
}
