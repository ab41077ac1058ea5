package sdkgen_test

import (
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/sdkgen"
)

var writeTool = api.Schema{
	Name:        "write",
	Description: "Write a file.",
	InputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "Where to write."},
			"content": {"type": "string"}
		},
		"required": ["path", "content"],
		"additionalProperties": false
	}`),
	OutputSchema: json.RawMessage(`{"type": "object", "properties": {"bytes": {"type": "integer"}}, "required": ["bytes"]}`),
}

func ExampleDeclarations() {
	ts, err := sdkgen.Declarations([]api.Schema{writeTool})
	if err != nil {
		panic(err)
	}
	fmt.Print(ts)
	// Output:
	// // Tools without an output schema return JsonValue.
	// type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
	// declare const console: { log(...data: unknown[]): void; info(...data: unknown[]): void; warn(...data: unknown[]): void; error(...data: unknown[]): void; debug(...data: unknown[]): void };
	// declare function setTimeout(callback: () => void, ms?: number): number;
	// declare function clearTimeout(id?: number): void;
	//
	// type WriteArgs = {
	//   /** Where to write. */
	//   path: string;
	//   content: string;
	// };
	// type WriteOutput = {
	//   bytes: number;
	// } & Record<string, JsonValue>;
	//
	// type ToolName = "write";
	// /** What a failed tool call throws; message says why it failed. */
	// declare class ToolCallError extends Error {
	//   readonly name: "ToolCallError";
	//   /** The tool whose call failed. */
	//   readonly toolName: ToolName;
	//   /** Why it failed, to branch on: BUSY means too many calls pending at once (await some first). */
	//   readonly code: "DENIED" | "TOOL_TIMEOUT" | "TOOL_FAILED" | "INVALID_ARGS" | "INVALID_TOOL_OUTPUT" | "UNKNOWN_TOOL" | "UNSUPPORTED_SCHEMA" | "ABORTED" | "ABORTED_BEFORE_DISPATCH" | "BUSY" | "INTERNAL";
	// }
	// declare const tools: {
	//   /** Write a file. */
	//   write(args: WriteArgs): Promise<WriteOutput>;
	//   /** Calls the bound tool named name, as tools[name](args) does. */
	//   $call(name: ToolName, args?: { [key: string]: JsonValue }): Promise<unknown>;
	// };
}

func ExampleRouteExample() {
	fmt.Println(sdkgen.RouteExample(writeTool))
	// Output:
	// run_code {"code": "return await tools.write({path: \"...\", content: \"...\"});", "description": "..."}
}

func ExampleSections() {
	sections, err := sdkgen.Sections(api.ModePTC, []api.Schema{writeTool})
	if err != nil {
		panic(err)
	}
	for _, s := range sections {
		fmt.Println(s.Name)
	}
	fmt.Print(sections[0].Text)
	// Output:
	// tools:ptc-only
	// tools:sdk
	// run_code is the only tool you can call directly. Every other tool named in this prompt must be called from inside a run_code program, as `await tools.<name>(args)`; calling it directly fails with UNKNOWN_TOOL.
}
