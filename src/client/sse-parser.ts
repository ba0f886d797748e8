/**
 * An incremental parser for `text/event-stream` (the HTML "server-sent events" format): feed it
 * text as it arrives, get whole messages back. Lines may end in CRLF, LF or CR, also split across
 * chunks; `:` lines are comments (heartbeats); `data:` lines join with "\n"; `id:` sets the last
 * event id a reconnect sends back as `Last-Event-ID`.
 */

export interface SseMessage {
  /** The `event:` field. @default "message" */
  event: string;
  data: string;
  /** The last event id after this message (ids persist across messages, as in EventSource). */
  lastEventId: string;
}

export class SseParser {
  private buffer = '';
  private started = false;
  private pendingCr = false;
  private event = '';
  private data: string[] = [];
  private hasData = false;
  /** The last `id:` seen, for `Last-Event-ID`. */
  lastEventId = '';
  /** The server's reconnection delay (`retry:`), if it sent one. */
  retryMs: number | undefined;
  /** Comment lines seen (heartbeats). */
  comments = 0;

  /** Parses a chunk; returns the messages it completed. */
  feed(chunk: string): SseMessage[] {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A CR at the end of the last chunk already ended its line; a LF right after it is not a new one.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      const line = this.buffer.slice(start, i);
      if (c === '\r') {
        if (i + 1 === this.buffer.length) this.pendingCr = true;
        else if (this.buffer[i + 1] === '\n') i++;
      }
      start = i + 1;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.comments++;
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
      // Unknown fields are ignored, as the format requires.
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message = this.hasData
      ? { event: this.event || 'message', data: this.data.join('\n'), lastEventId: this.lastEventId }
      : undefined;
    this.event = '';
    this.data = [];
    this.hasData = false;
    return message;
  }
}
