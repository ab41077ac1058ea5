// A reader of Server-Sent Events (the WHATWG "event stream" format) over a
// fetch body: what GET /v1/executions/{id}/events sends.

/** One raw event: its fields as sent, `data` lines joined with "\n". */
export interface RawEvent {
  id: string | undefined;
  event: string;
  data: string;
}

// maxLineChars bounds one line the reader buffers (a server's log event is
// at most 2 KiB of text; a call record or a pending call's arguments more).
const maxLineChars = 64 << 20;

/** readEvents yields the events of an event stream as they arrive. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<RawEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let id: string | undefined;
  let event = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buf += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        if (!done && nl === buf.length - 1 && buf[nl] === "\r") break; // maybe half of a CRLF
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (data.length > 0 || event !== "") yield { id, event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue; // a comment: the keep-alive
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? "" : line.slice(colon + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "id") id = v;
        else if (field === "event") event = v;
        else if (field === "data") data.push(v);
      }
      if (buf.length > maxLineChars) throw new Error(`ptcx serve: an event stream line longer than ${maxLineChars} characters`);
      if (done) return; // an event not ended by a blank line is dropped, as the format says
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}
