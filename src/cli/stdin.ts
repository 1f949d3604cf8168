/** All of stdin as text, without its final newline (for `-` arguments). */
export async function readStdin(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** A text argument and the words after it (`send <id> <text...>`): their words joined by spaces, or all of stdin when it is `-`. */
export async function textArgument(first: string, rest: readonly string[], stdin: NodeJS.ReadableStream): Promise<string> {
  return first === '-' ? readStdin(stdin) : [first, ...rest].join(' ');
}
