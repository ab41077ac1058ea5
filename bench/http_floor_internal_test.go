package bench

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The floor's handler is what serve's POST /v1/executions is to a client
// without the execution: a wrong key is a 401, a body that is not an
// execution request (unknown fields, no program, not JSON, too big) a 400,
// another method a 405, and a request it takes a settled execution with a
// fresh id each time.
func TestHTTPFloor_handler(t *testing.T) {
	f, err := startHTTPFloor(2)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.stop(context.Background())) }()
	base := f.base
	post := func(method, key, body string) int {
		req, err := http.NewRequest(method, base+"/v1/executions", strings.NewReader(body))
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := f.http.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, key, body string
		want              int
	}{
		{http.MethodPost, "", `{"code":"return 1"}`, http.StatusUnauthorized},
		{http.MethodPost, "wrong", `{"code":"return 1"}`, http.StatusUnauthorized},
		{http.MethodPost, serveKey, `{"code":"return 1","nope":1}`, http.StatusBadRequest},
		{http.MethodPost, serveKey, `{}`, http.StatusBadRequest},
		{http.MethodPost, serveKey, `not json`, http.StatusBadRequest},
		{http.MethodPost, serveKey, `{"code":"` + strings.Repeat("x", 2<<20) + `"}`, http.StatusBadRequest},
		{http.MethodGet, serveKey, ``, http.StatusMethodNotAllowed},
		{http.MethodPost, serveKey, `{"code":"return 1"}`, http.StatusOK},
	} {
		require.Equal(t, c.want, post(c.method, c.key, c.body), "%s key %q body %.40q", c.method, c.key, c.body)
	}
	ctx := context.Background()
	require.NoError(t, f.execute(ctx, Program{TS: "return 1"}))
	require.NoError(t, f.execute(ctx, Program{TS: "return 1"}))
	require.EqualValues(t, 3, f.n.Load(), "one id per execution taken")
}
