// The README's demo through @ptcx/client: a program asks the client-side
// tool `ask` for a name, and this process answers "Ada".
//   PTCX_URL=http://127.0.0.1:8080 PTCX_KEY=... node example.mjs   → hello, Ada
import { Client } from "@ptcx/client";

const client = new Client({ baseUrl: process.env.PTCX_URL, key: process.env.PTCX_KEY });
const st = await client.run(
  {
    code: 'const name = await tools.ask({q: "Your name?"}); return "hello, " + name',
    client_tools: [
      {
        name: "ask",
        description: "Ask the user a question.",
        input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      },
    ],
  },
  { tools: { ask: async () => "Ada" } },
);
if (st.status !== "completed") {
  console.error(st.error);
  process.exit(1);
}
console.log(st.text);
