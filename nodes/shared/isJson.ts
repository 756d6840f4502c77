/** Whether the text parses as JSON (any JSON value). */
export function isJson(text: string): boolean {
	try {
		JSON.parse(text);
		return true;
	} catch {
		return false;
	}
}
