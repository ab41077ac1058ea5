package sdkgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// TestDeclarations_handle: a tool whose results are handles returns
// Promise<Handle<Output>>, Handle is declared only when a tool returns
// them, and a program that reads one type-checks.
func TestDeclarations_handle(t *testing.T) {
	t.Parallel()
	plain := api.Schema{Name: "send", InputSchema: json.RawMessage(`{"type":"object","properties":{"body":{}}}`)}
	doc := api.Schema{Name: "read_doc", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"subject":{"type":"string"}},"required":["subject"]}`), Handle: true}
	without, err := Declarations([]api.Schema{plain})
	require.NoError(t, err)
	require.NotContains(t, without, "interface Handle")
	decls, err := Declarations([]api.Schema{plain, doc})
	require.NoError(t, err)
	require.Contains(t, decls, "interface Handle<T = JsonValue>")
	require.Contains(t, decls, "read_doc(args?: ReadDocArgs): Promise<Handle<ReadDocOutput>>;")
	diags := runTSC(t, map[string]string{
		"reads.ts": asModule(decls, `const h = await tools.read_doc(); const s: string = (await h.json()).subject;
const t: string = await h.text(); const n: number = h.size; await tools.send({body: t}); return s + n;`),
		"misuse.ts": asModule(decls, `const h = await tools.read_doc(); return h.subject;`),
	})
	require.Empty(t, diags["reads.ts"])
	require.Len(t, diags["misuse.ts"], 1)
	require.True(t, strings.Contains(diags["misuse.ts"][0].Msg, "Property 'subject' does not exist on type 'Handle<ReadDocOutput>'"), diags["misuse.ts"][0].Msg)
}
