package serve

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// serviceDoc is the HTTP contract of ptcx serve: the one place these tests
// name its file.
const serviceDoc = "../docs/service.md"

func msOf(d time.Duration) int64 { return int64(d / time.Millisecond) }

// configExample is the first YAML block of serviceDoc that configures
// tenants.
func configExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(serviceDoc)
	require.NoError(t, err)
	for _, block := range strings.Split(string(b), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.Contains(block, "\ntenants:") {
			return block
		}
	}
	t.Fatalf("%s has no YAML block that configures tenants", serviceDoc)
	return ""
}

// The config example states every default of the service, the run limits
// included (api.DefaultLimits, in run_code's spelling), as the code has
// them; and every key it names is a field of Config.
func TestDocs_configExampleStatesTheDefaults(t *testing.T) {
	example := configExample(t)
	dec := yaml.NewDecoder(strings.NewReader(example))
	dec.KnownFields(true)
	var c Config
	require.NoError(t, dec.Decode(&c), "%s: the config example", serviceDoc)
	require.NotEmpty(t, c.Tenants)
	d := api.DefaultLimits()
	require.Equal(t, RunLimits{
		TimeoutMS: msOf(d.ComputeTime), WallMS: msOf(d.WallTime), MemoryMB: d.MemoryBytes >> 20,
		OutputBytes: d.OutputBytes, ModelBytes: d.ModelBytes, MaxCalls: d.MaxCalls,
	}, c.Tenants[0].Limits, "%s: the example's tenant limits are the defaults", serviceDoc)
	require.Equal(t, ServerLimits{
		MaxBodyBytes: DefaultMaxBodyBytes, MaxWaitMS: msOf(DefaultMaxWait), DrainTimeoutMS: msOf(DefaultDrainTimeout),
		RetentionMS: msOf(DefaultRetention), MaxRetained: DefaultMaxRetained, MaxEvents: DefaultMaxEvents,
		ReadTimeoutMS: msOf(DefaultReadTimeout), MaxExecutions: DefaultMaxExecutions, ParkGraceMS: msOf(DefaultParkGrace),
		LiveWaitMS: msOf(DefaultLiveWait),
	}, c.Server, "%s: the example's server block is the defaults", serviceDoc)
	require.Equal(t, Quotas{
		MaxConcurrent: DefaultMaxConcurrent, MaxPending: DefaultMaxPending, PendingTimeoutMS: msOf(DefaultPendingTimeout), ApprovalTimeoutMS: msOf(DefaultApprovalTimeout),
		MaxRetainedBytes: DefaultMaxRetainedBytes, MaxParkedBytes: DefaultMaxParkedBytes, MaxStreams: DefaultMaxStreams,
		MaxLiveWaits: DefaultMaxConcurrent / 2,
	}, c.Tenants[0].Quotas, "%s: the example's quotas are the defaults", serviceDoc)
	require.Equal(t, SessionQuotas{
		MaxBytes: executor.DefaultMaxSessionBytes, WaitMS: msOf(DefaultSessionWait), IdleSuspendMS: msOf(executor.DefaultSessionIdleSuspend),
		TTLMS: msOf(DefaultSessionTTL), MaxSessions: DefaultMaxStateSessions,
	}, c.Tenants[0].Sessions, "%s: the example's sessions block is the defaults", serviceDoc)
	require.Regexp(t, `max_bytes: .*\(at most `+strconv.Itoa(MaxSessionStateBytes)+`\)`, example)
}

// The table of errors in serviceDoc is httpStatus: every code with its
// status, and no other.
func TestDocs_errorTableIsTheStatusTable(t *testing.T) {
	b, err := os.ReadFile(serviceDoc)
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| ([1-5][0-9][0-9]) \\| `([A-Z_]+)` \\|")
	documented := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		status, _ := strconv.Atoi(m[1])
		_, twice := documented[m[2]]
		require.False(t, twice, "%s lists %s twice", serviceDoc, m[2])
		documented[m[2]] = status
	}
	require.Equal(t, httpStatus, documented, "%s: its table of errors and httpStatus (errors.go) differ", serviceDoc)
}

// Every HTTP-level code the package and serve/internal/httperr declare (a constant Code…) has its
// status in httpStatus, so errorf never answers one with the 500 it gives
// a code missing there.
func TestErrors_everyCodeHasAStatus(t *testing.T) {
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	leaf, err := filepath.Glob("internal/httperr/*.go") // the codes' one statement
	require.NoError(t, err)
	names = append(names, leaf...)
	var codes []string
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if strings.HasPrefix(n.Name, "Code") && i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							codes = append(codes, strings.Trim(lit.Value, `"`))
						}
					}
				}
			}
		}
	}
	require.Contains(t, codes, CodeOwnerUnavailable, "the sources were read")
	for _, c := range codes {
		_, ok := httpStatus[c]
		require.True(t, ok, "code %s has no status in httpStatus", c)
	}
	require.Equal(t, 500, errorf("NOT_A_CODE", "x").Status)
}
