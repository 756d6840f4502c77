import type { IExecuteFunctions } from 'n8n-workflow';

import { readFieldPath } from '../../key/fieldPath';

/** `$json.a.b[0]`: a path into the item, nothing computed. */
const FIELD_REFERENCE = /^\$json((?:\.[A-Za-z_$][\w$]*|\[\d+\])+)$/;
const EXPRESSION = /^=\{\{(.*)\}\}$/s;

type Reader = (index: number) => unknown;
const readers = new WeakMap<IExecuteFunctions, Reader>();

/**
 * Value to Dedupe On of one item. n8n evaluates an expression anew for every item, which is most of the
 * time a 1,000-item poll spends in the node (bench/suites/polledFeed.ts); the usual forms, `{{ $json.id }}` and
 * `{{ $json.guid || $json.link }}`, are read straight from the item instead, giving what the expression
 * gives. Anything else is left to n8n.
 */
export function readDedupeValue(context: IExecuteFunctions, index: number): unknown {
	let reader = readers.get(context);
	if (!reader) {
		reader = readerFor(context);
		readers.set(context, reader);
	}
	return reader(index);
}

function readerFor(context: IExecuteFunctions): Reader {
	const evaluated: Reader = (index) => context.getNodeParameter('dedupeValue', index, '');
	const raw = context.getNode().parameters?.dedupeValue;
	const expression = typeof raw === 'string' ? EXPRESSION.exec(raw.trim()) : null;
	if (!expression) return evaluated;
	const paths = expression[1].split('||').map((part) => FIELD_REFERENCE.exec(part.trim())?.[1]);
	if (paths.some((path) => path === undefined)) return evaluated;
	const items = context.getInputData();
	return (index) => {
		let value: unknown;
		// `a || b`: the first truthy value, else the last one, as JavaScript gives it.
		for (const path of paths as string[]) {
			value = readFieldPath(items[index].json, path);
			if (value) return value;
		}
		return value;
	};
}
