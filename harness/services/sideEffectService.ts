// A service on loopback that another workflow calls for a side effect (an order placed, a charge made),
// counting every call and every effect per event. It listens at two paths: `/honours-key` deduplicates by
// the Idempotency-Key header, as Stripe does (a repeated key is answered with the first answer and makes no
// new effect); `/ignores-key` makes an effect on every call. A call for an event given to `holdFirstCalls`
// makes its effect and is then left unanswered, so a test can kill n8n between the effect and its record.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type KeyHandling = 'honours-key' | 'ignores-key';

export interface ServiceCall {
	path: KeyHandling;
	/** The event the call is for, from its JSON body's `event`. */
	event: string;
	idempotencyKey: string | undefined;
	/** Whether it made an effect (false: a repeated key answered from memory). */
	effect: boolean;
}

export class SideEffectService {
	readonly calls: ServiceCall[] = [];
	private readonly firstAnswers = new Map<string, object>();
	private readonly toHold = new Set<string>();
	private readonly held: ServerResponse[] = [];

	private constructor(
		private readonly server: Server,
		readonly baseUrl: string,
	) {}

	static async start(): Promise<SideEffectService> {
		const handler: { service?: SideEffectService } = {};
		const server = createServer((request, response) => {
			void handler.service!.answer(request, response);
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		handler.service = new SideEffectService(
			server,
			`http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		);
		return handler.service;
	}

	url(path: KeyHandling): string {
		return `${this.baseUrl}/${path}`;
	}

	/** The first call for each of these events makes its effect and is never answered. */
	holdFirstCalls(events: string[]): void {
		for (const event of events) this.toHold.add(event);
	}

	/** How many calls are held unanswered now. */
	get heldCount(): number {
		return this.held.length;
	}

	/** Effects made for the event (2 or more: the side effect happened twice). */
	effectsOf(event: string): number {
		return this.calls.filter((call) => call.event === event && call.effect).length;
	}

	callsOf(event: string): ServiceCall[] {
		return this.calls.filter((call) => call.event === event);
	}

	/** Drops the held calls' connections (their caller is gone) and stops listening. */
	close(): Promise<void> {
		for (const response of this.held.splice(0)) response.destroy();
		this.server.closeAllConnections();
		return new Promise((resolve) => this.server.close(() => resolve()));
	}

	private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
		const path = new URL(request.url ?? '/', this.baseUrl).pathname.slice(1);
		let text = '';
		for await (const chunk of request) text += (chunk as Buffer).toString();
		let event: unknown;
		try {
			event = (JSON.parse(text) as { event?: unknown }).event;
		} catch {
			event = undefined;
		}
		if ((path !== 'honours-key' && path !== 'ignores-key') || typeof event !== 'string') {
			response.writeHead(400).end();
			return;
		}
		const header = request.headers['idempotency-key'];
		const idempotencyKey = typeof header === 'string' ? header : undefined;
		const remembered =
			path === 'honours-key' && idempotencyKey !== undefined
				? this.firstAnswers.get(idempotencyKey)
				: undefined;
		this.calls.push({ path, event, idempotencyKey, effect: remembered === undefined });
		const body = remembered ?? { orderId: `ord_${this.calls.length}`, event };
		if (path === 'honours-key' && idempotencyKey !== undefined && remembered === undefined)
			this.firstAnswers.set(idempotencyKey, body);
		if (remembered === undefined && this.toHold.delete(event)) {
			this.held.push(response);
			return;
		}
		response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
	}
}
