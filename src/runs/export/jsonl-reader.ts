/**
 * Streaming JSONL reader that keeps exact line numbers and raw bytes.
 *
 * Lines are split on raw bytes (not decoded text) so a multi-byte character across a chunk
 * boundary is never corrupted, each line is checked for valid UTF-8 before decoding, and a line
 * longer than the limit is reported (and its bytes discarded as they stream) instead of being
 * buffered without bound.
 */
import { isUtf8 } from 'node:buffer';
import { openRegularFile } from '../../util/safe-open.js';

export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;
/** No results file we know of comes near this; an endless input (a pipe, /dev/zero) stops here. */
export const DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024 * 1024;

/**
 * `fatal`: the input as a whole is over the total limit; nothing after it is read, and skipping
 * invalid lines does not apply. An oversized line is reported the moment it passes the limit (not
 * at its end, which may never come); its remaining bytes are discarded as they stream.
 */
export type JsonlLine =
  | { lineNo: number; ok: true; text: string; bytes: number }
  | { lineNo: number; ok: false; problem: string; bytes: number; fatal?: boolean };

export interface ReadJsonlOptions {
  maxLineBytes?: number;
  maxTotalBytes?: number;
  onChunk?: (bytesRead: number) => void;
  /** Sees every chunk of the file (for content hashing) in order. */
  onRawChunk?: (chunk: Buffer) => void;
}

export async function* readJsonlLines(path: string | AsyncIterable<Buffer>, opts: ReadJsonlOptions = {}): AsyncGenerator<JsonlLine> {
  const maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const maxTotal = opts.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  // A path is opened through the one opener: a pipe or device is refused before a byte is read.
  const stream =
    typeof path === 'string'
      ? (await openRegularFile(path, { kind: 'run-file', limit: maxTotal })).handle.createReadStream({ highWaterMark: 1024 * 1024 })
      : path;
  let reported = false;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let oversize = false;
  let lineNo = 0;
  let bytesRead = 0;

  const finish = (tail: Buffer): JsonlLine | null => {
    lineNo++;
    const total = partBytes + tail.length;
    if (oversize || total > maxLine) {
      if (reported) return null;
      return { lineNo, ok: false, problem: `line is ${total} bytes, over the ${maxLine}-byte limit`, bytes: total };
    }
    let buf = parts.length === 0 ? tail : Buffer.concat([...parts, tail], total);
    if (buf.length > 0 && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
    if (lineNo === 1 && buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    if (!isUtf8(buf)) return { lineNo, ok: false, problem: 'line is not valid UTF-8', bytes: total };
    return { lineNo, ok: true, text: buf.toString('utf8'), bytes: total };
  };

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytesRead += chunk.length;
    if (bytesRead > maxTotal) {
      yield { lineNo: lineNo + 1, ok: false, problem: `input is over the ${maxTotal}-byte total limit`, bytes: bytesRead, fatal: true };
      return;
    }
    opts.onRawChunk?.(chunk);
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const line = finish(chunk.subarray(start, nl));
      parts = [];
      partBytes = 0;
      oversize = false;
      reported = false;
      if (line) yield line;
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      partBytes += rest.length;
      if (partBytes > maxLine) {
        oversize = true;
        parts = [];
        if (!reported) {
          reported = true;
          yield {
            lineNo: lineNo + 1,
            ok: false,
            problem: `line is over the ${maxLine}-byte limit (${partBytes} bytes read and no end of line yet)`,
            bytes: partBytes,
          };
        }
      } else {
        // Copy: the stream may reuse its buffer for the next chunk.
        parts.push(Buffer.from(rest));
      }
    }
    opts.onChunk?.(bytesRead);
  }
  if (partBytes > 0 || oversize) {
    const line = finish(Buffer.alloc(0));
    if (line) yield line;
  }
}
