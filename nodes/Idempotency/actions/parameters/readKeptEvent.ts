import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { DEFAULT_MAX_EVENT_KIB, MAX_EVENT_KIB_LIMIT } from '../../descriptions/claimProperties';
import { EventSizeError } from '../../errors';
import { eventBody } from '../../key/deriveKey';
import type { KeptEvent } from '../../store/record/claimOutcome';
import { readSwitch } from './readSwitch';
import { readNumber } from './readNumber';

/** Builds an item's event to keep, from the bytes the claim read (or none: Raw Body off), and its Scope. */
export type KeptEventReader = (
	item: INodeExecutionData,
	rawBody: Buffer | undefined,
	scope: string,
) => KeptEvent;

/**
 * Keep Event's settings, read once per execution; undefined when events are not kept. The event is the
 * delivery as it came: the raw bytes when the Webhook node kept them, else the body as JSON text.
 */
export function readKeptEvent(context: IExecuteFunctions): KeptEventReader | undefined {
	if (!readSwitch(context, 'keepEvent', false, 'Keep Event')) return undefined;
	const maxKib = readNumber(
		context.getNodeParameter('maxEventKib', 0, DEFAULT_MAX_EVENT_KIB),
		'Max Event Size (KiB)',
		{ min: 1, max: MAX_EVENT_KIB_LIMIT },
	);
	const names = String(context.getNodeParameter('keptHeaders', 0, '') ?? '')
		.split(',')
		.map((name) => name.trim().toLowerCase())
		.filter((name) => name !== '');
	return (item, rawBody, scope) => {
		const json = item.json as Record<string, unknown>;
		const headers = lowerCased(json.headers);
		const body = rawBody ?? Buffer.from(JSON.stringify(eventBody(json).body ?? {}), 'utf8');
		const contentType = rawBody ? stringOrNull(headers['content-type']) : 'application/json';
		const kept: Record<string, string> = {};
		for (const name of names) {
			const value = headers[name];
			if (value !== undefined) kept[name] = Array.isArray(value) ? value.join(', ') : String(value);
		}
		const size = body.length + Buffer.byteLength(JSON.stringify(kept));
		if (size > maxKib * 1024) {
			throw new EventSizeError(
				`the event is ${(size / 1024).toFixed(1)} KiB, past Max Event Size (${maxKib} KiB); nothing was claimed: raise Max Event Size, or keep fewer headers`,
			);
		}
		return { body, contentType, headers: JSON.stringify(kept), scope: scope === '' ? null : scope };
	};
}

function lowerCased(headers: unknown): Record<string, unknown> {
	if (headers === null || typeof headers !== 'object') return {};
	return Object.fromEntries(
		Object.entries(headers as Record<string, unknown>).map(([name, value]) => [
			name.toLowerCase(),
			value,
		]),
	);
}

function stringOrNull(value: unknown): string | null {
	return typeof value === 'string' ? value : null;
}
