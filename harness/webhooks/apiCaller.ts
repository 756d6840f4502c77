import type { Pool } from 'pg';

import { businessRowsPerKey } from '../postgres/appDatabase';

/** What an API caller got back: the status, the body's bytes as they came, the headers, and when. */
export interface ApiAnswer {
	status: number;
	body: string;
	headers: Headers;
	/** When the whole body had arrived (Date.now() of this process). */
	arrivedAt: number;
}

/** A POST as an API client sends it: a JSON body and the headers given (an Idempotency-Key, most often). */
export async function callApi(
	url: string,
	body: string,
	headers: Record<string, string> = {},
	signal?: AbortSignal,
): Promise<ApiAnswer> {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...headers },
		body,
		signal,
	});
	const text = await response.text();
	return { status: response.status, body: text, headers: response.headers, arrivedAt: Date.now() };
}

/** The claim key workflows/idempotent-api-endpoint.json makes of an Idempotency-Key (its scope: orders-api). */
export function apiClaimKey(idempotencyKey: string): string {
	return `orders-api:evt:${idempotencyKey}`;
}

/** How many orders (business_log rows) that template's example step made for one Idempotency-Key. */
export async function ordersFor(db: Pool, idempotencyKey: string): Promise<number> {
	const key = apiClaimKey(idempotencyKey);
	return (await businessRowsPerKey(db, [key]))[key] ?? 0;
}
