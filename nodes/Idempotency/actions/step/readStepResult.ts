import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { SettingError } from '../../errors';

/**
 * The Result JSON parameter as JSON text: n8n hands over the text typed, or the value an expression
 * evaluated to. Text that is not JSON is refused, never stored as a string by mistake.
 */
export function readResultJson(context: IExecuteFunctions, index: number): string {
	const value = context.getNodeParameter('resultJson', index, '{}');
	if (typeof value !== 'string') return JSON.stringify(value ?? null);
	let parsed: unknown;
	try {
		parsed = JSON.parse(value);
	} catch {
		parsed = undefined;
	}
	if (parsed === undefined)
		throw new SettingError(`the Result JSON is not JSON: ${value.slice(0, 80)}`);
	return JSON.stringify(parsed);
}

/** The item's JSON without its `idempotency` field, as JSON text: the result Finish Step records by default. */
export function itemResultJson(context: IExecuteFunctions, index: number): string {
	const result: IDataObject = { ...context.getInputData()[index].json };
	delete result.idempotency;
	return JSON.stringify(result);
}
