// The smallest Redis client the benchmarks need (no Redis client is a dependency): one connection, one
// command at a time, RESP2 replies (simple strings, errors, integers, bulk strings, arrays).
import { Socket } from 'node:net';

type Reply = string | number | null | Reply[];

export class RespClient {
	private buffer = Buffer.alloc(0);
	private waiting: Array<{ resolve(reply: Reply): void; reject(error: Error): void }> = [];

	private constructor(private readonly socket: Socket) {
		socket.on('data', (data) => {
			this.buffer = Buffer.concat([this.buffer, data]);
			for (;;) {
				const parsed = parseReply(this.buffer, 0);
				if (!parsed) return;
				this.buffer = this.buffer.subarray(parsed.end);
				const next = this.waiting.shift();
				if (parsed.reply instanceof Error) next?.reject(parsed.reply);
				else next?.resolve(parsed.reply);
			}
		});
		const fail = (error: Error) => {
			for (const waiter of this.waiting.splice(0)) waiter.reject(error);
		};
		socket.on('error', fail);
		socket.on('close', () => fail(new Error('Redis connection closed')));
	}

	static connect(port: number, host = '127.0.0.1'): Promise<RespClient> {
		return new Promise((resolve, reject) => {
			const socket = new Socket();
			socket.once('error', reject);
			socket.connect(port, host, () => {
				socket.off('error', reject);
				socket.setNoDelay(true);
				resolve(new RespClient(socket));
			});
		});
	}

	command(...args: Array<string | number>): Promise<Reply> {
		const parts = args.map(String);
		const wire =
			`*${parts.length}\r\n` +
			parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join('');
		if (this.socket.destroyed) return Promise.reject(new Error('Redis connection closed'));
		return new Promise((resolve, reject) => {
			this.waiting.push({ resolve, reject });
			this.socket.write(wire);
		});
	}

	close(): void {
		this.socket.destroy();
	}
}

/** One reply from `offset`, or null when the buffer does not hold all of it yet. */
function parseReply(buffer: Buffer, offset: number): { reply: Reply | Error; end: number } | null {
	const lineEnd = buffer.indexOf('\r\n', offset);
	if (lineEnd < 0) return null;
	const line = buffer.toString('utf8', offset + 1, lineEnd);
	const next = lineEnd + 2;
	switch (String.fromCharCode(buffer[offset])) {
		case '+':
			return { reply: line, end: next };
		case '-':
			return { reply: new Error(line), end: next };
		case ':':
			return { reply: Number(line), end: next };
		case '$': {
			const length = Number(line);
			if (length < 0) return { reply: null, end: next };
			if (buffer.length < next + length + 2) return null;
			return { reply: buffer.toString('utf8', next, next + length), end: next + length + 2 };
		}
		case '*': {
			const count = Number(line);
			if (count < 0) return { reply: null, end: next };
			const items: Reply[] = [];
			let at = next;
			for (let i = 0; i < count; i++) {
				const item = parseReply(buffer, at);
				if (!item) return null;
				if (item.reply instanceof Error) throw item.reply;
				items.push(item.reply);
				at = item.end;
			}
			return { reply: items, end: at };
		}
		default:
			throw new Error(`unexpected Redis reply: ${line}`);
	}
}
