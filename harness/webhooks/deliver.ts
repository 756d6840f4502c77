import { request as httpRequest } from 'node:http';

import { TEMPLATE_SIGNING_SECRET } from '../n8n/credentials';
import { callApi } from './apiCaller';
import { githubHeader } from './signers';

export interface Delivery {
	status: number;
	body: { status?: string; key?: string; [field: string]: unknown };
}

/** The 200 answer a shipped template gives a delivery it processed, or recognised as a duplicate. */
export function answered(outcome: 'processed' | 'duplicate', key: string): Delivery {
	return { status: 200, body: { status: outcome, key } };
}

/** The 401 answer a template gives a delivery whose signature does not verify. */
export function refusedSignature(reason: string): Delivery {
	return { status: 401, body: { status: 'invalid_signature', reason } };
}

/**
 * POSTs exactly these bytes, the way a webhook provider delivers an event, signed as the node template
 * checks (`X-Signature: sha256=<hex HMAC-SHA256 of the body>` with the template's test secret); workflows
 * that check no signature ignore the header.
 */
export async function deliver(
	url: string,
	rawBody: string,
	headers: Record<string, string> = {},
	timeoutMs?: number,
): Promise<Delivery> {
	const answer = await callApi(
		url,
		rawBody,
		{ ...templateSignature(rawBody), ...headers },
		timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs),
	);
	return { status: answer.status, body: answerBody(answer.body) };
}

/**
 * A POST whose header lines are sent exactly as given, repeats included (fetch would join them itself): a
 * header given as an array goes out as one line per value.
 */
export function postWithHeaderLines(
	url: string | URL,
	headers: Record<string, string | string[]>,
	rawBody: string,
): Promise<Delivery> {
	return new Promise((resolve, reject) => {
		const request = httpRequest(url, { method: 'POST' }, (response) => {
			let text = '';
			response.on('data', (chunk: Buffer) => (text += chunk.toString()));
			response.on('end', () =>
				resolve({ status: response.statusCode ?? 0, body: answerBody(text) }),
			);
		});
		request.on('error', reject);
		for (const [name, value] of Object.entries(headers)) request.setHeader(name, value);
		request.end(rawBody);
	});
}

/** A multipart/form-data POST, as `curl -F` sends one: text fields and files (content, type, file name). */
export async function deliverMultipart(
	url: string,
	parts: Record<string, string | { content: string; type: string; fileName: string }>,
	headers: Record<string, string> = {},
): Promise<Delivery> {
	const form = new FormData();
	for (const [name, part] of Object.entries(parts)) {
		if (typeof part === 'string') form.append(name, part);
		else form.append(name, new Blob([part.content], { type: part.type }), part.fileName);
	}
	const response = await fetch(url, { method: 'POST', headers, body: form });
	return { status: response.status, body: answerBody(await response.text()) };
}

/** An answer's body: its JSON, or the text as `raw` when it is not JSON. */
export function answerBody(text: string): Delivery['body'] {
	try {
		return JSON.parse(text);
	} catch {
		return { raw: text };
	}
}

/** The header the node template's Webhook Signature node (Generic HMAC) verifies. */
export function templateSignature(rawBody: string): Record<string, string> {
	return { 'x-signature': githubHeader(TEMPLATE_SIGNING_SECRET, rawBody) };
}

/** A Stripe-like signature header: it changes on every retry, so it must never be part of the key. */
export function stripeSignature(): string {
	return `t=${Math.floor(Date.now() / 1000)},v1=${Math.random().toString(16).slice(2)}${Math.random().toString(16).slice(2)}`;
}
