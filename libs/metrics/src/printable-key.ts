const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/** C0 controls, DEL and C1 controls make a key unreadable in a dashboard or a log line. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/**
 * The `HeavyKey.key` form of a serialised record key: its UTF-8 text when that is valid and printable, otherwise
 * `0x` followed by lowercase hex. (A text key that itself reads "0x…" is indistinguishable; the key group tells
 * them apart in practice.) Allocates a string: engines that already hold string keys should pass those instead.
 */
export function printableKey(key: Uint8Array): string {
  let text: string | null;
  try {
    text = strictUtf8.decode(key);
  } catch {
    text = null;
  }
  if (text !== null && !hasControlCharacter(text)) return text;
  return '0x' + Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('hex');
}
