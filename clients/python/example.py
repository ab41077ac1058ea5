"""The README's demo program through ptcx serve from Python: the program asks
its client for a name (tools.ask, a client-side tool), this client answers
"Ada", and the execution's final text is printed: hello, Ada.

    PTCX_URL=http://127.0.0.1:8080 PTCX_KEY=... python3 clients/python/example.py
"""

import os

from ptcx_client import Client, Tool

ask = Tool(
    name="ask",
    description="Ask the user a question.",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    handler=lambda args: "Ada",
)

client = Client(os.environ["PTCX_URL"], os.environ["PTCX_KEY"])
state = client.run('const name = await tools.ask({q: "Your name?"}); return "hello, " + name', tools=[ask])
if state["status"] != "completed":
    raise SystemExit(f"the execution {state['status']}: {state.get('error')}")
print(state["text"])
