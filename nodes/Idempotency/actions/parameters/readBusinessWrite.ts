import type { IExecuteFunctions } from 'n8n-workflow';

import { MappedValueError } from '../../errors';
import type { BusinessWrite } from '../../store/claims/completeWithWrite';

/**
 * Statements that end or split the transaction the write shares with the Complete: a COMMIT or ROLLBACK in
 * the middle would let one happen without the other.
 */
const TRANSACTION_CONTROL =
	/^(begin|start|commit|end|rollback|abort|savepoint|release|prepare\s+transaction)\b/i;

/**
 * Statements that change the session rather than write: it outlasts the transaction on a connection the
 * pool hands to every node of the package (a SET ROLE, SET synchronous_commit = off under Start Step's
 * durable mark, a DEALLOCATE of its prepared statements, a PREPARE or LISTEN left behind). SET LOCAL,
 * SET CONSTRAINTS and SET TRANSACTION end with the transaction.
 */
const SESSION_CHANGE =
	/^(set(?!\s+(local|constraints|transaction)\b)|reset|discard|deallocate|prepare|listen|unlisten)\b/i;

/** COPY: the node has no stream to feed it, and a COPY … FROM STDIN would wait for one forever, the claim row locked. */
const COPY = /^copy\b/i;

/**
 * The text from the statement's first word: past blanks, SQL comments (block comments nest in Postgres)
 * and empty statements (`;`), which the server skips too, so `;COMMIT` or a ROLLBACK after a nested
 * comment is still seen as the COMMIT or ROLLBACK it runs as.
 */
function withoutLeadingNoise(text: string): string {
	let at = 0;
	while (at < text.length) {
		if (/[\s;]/.test(text[at])) at++;
		else if (text.startsWith('--', at)) {
			const lineEnd = text.indexOf('\n', at);
			at = lineEnd === -1 ? text.length : lineEnd + 1;
		} else if (text.startsWith('/*', at)) at = afterBlockComment(text, at);
		else break;
	}
	return text.slice(at);
}

/** Where the block comment opening at `start` ends, its nested comments included. */
function afterBlockComment(text: string, start: number): number {
	let depth = 0;
	let at = start;
	do {
		if (text.startsWith('/*', at)) {
			depth++;
			at += 2;
		} else if (text.startsWith('*/', at)) {
			depth--;
			at += 2;
		} else at++;
	} while (depth > 0 && at < text.length);
	return at;
}

/** The item's business write: its SQL and parameters; throws a message naming what is wrong. */
export function readBusinessWrite(context: IExecuteFunctions, index: number): BusinessWrite {
	const text = context.getNodeParameter('query', index, '');
	if (typeof text !== 'string' || text.trim() === '')
		throw new MappedValueError(
			'the Query is empty: write the SQL statement to run, e.g. an INSERT',
		);
	const statement = withoutLeadingNoise(text);
	if (TRANSACTION_CONTROL.test(statement))
		throw new MappedValueError(
			'the Query controls the transaction (BEGIN, COMMIT, ROLLBACK, SAVEPOINT …): the node runs it ' +
				'in its own transaction with the Complete, so write only the statement itself',
		);
	if (SESSION_CHANGE.test(statement))
		throw new MappedValueError(
			'the Query changes the session (SET, RESET, DISCARD, DEALLOCATE, PREPARE, LISTEN …): its connection ' +
				'is shared with the other nodes, so the change would outlast this write; write only the statement ' +
				'itself (SET LOCAL lasts for the transaction)',
		);
	if (COPY.test(statement))
		throw new MappedValueError(
			'the Query is a COPY, which needs a data stream the node does not have (COPY … FROM STDIN would wait ' +
				'for ever): write an INSERT, e.g. INSERT … SELECT * FROM unnest($1::text[], $2::int[])',
		);
	return { text, values: queryParameters(context.getNodeParameter('queryParameters', index, '')) };
}

/** Query Parameters: an array (from an expression) or its JSON text; empty means none. */
function queryParameters(value: unknown): unknown[] {
	if (Array.isArray(value)) return value;
	if (value === undefined || value === null || value === '') return [];
	if (typeof value === 'string') {
		try {
			const parsed: unknown = JSON.parse(value);
			if (Array.isArray(parsed)) return parsed;
		} catch {
			// Reported below with the expected shape.
		}
	}
	throw new MappedValueError(
		'the Query Parameters are not a list: give an array for $1, $2, …, e.g. {{ [$json.body.id, $json.body.amount] }}',
	);
}
