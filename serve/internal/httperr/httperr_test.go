package httperr

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestErrorf_statusOfItsCode_500ForAnUnknownOne(t *testing.T) {
	for code, status := range Status {
		e := Errorf(code, "m %d", 1)
		require.Equal(t, status, e.Status, code)
		require.Equal(t, code, e.Body.Code)
		require.Equal(t, "m 1", e.Error())
		require.Zero(t, e.RetryAfter)
	}
	require.Equal(t, http.StatusInternalServerError, Errorf("NOT_A_CODE", "x").Status)
	require.Equal(t, http.StatusInternalServerError, Errorf("", "x").Status)
}

func TestHelpers_codesAndRetryAfter(t *testing.T) {
	require.Equal(t, DefaultRetryAfter, Unavailable(CodeOwnerUnavailable, "x").RetryAfter)
	s := StoreUnavailable(errors.New("down"))
	require.Equal(t, CodeStoreUnavailable, s.Body.Code)
	require.Equal(t, http.StatusServiceUnavailable, s.Status)
	require.Equal(t, DefaultRetryAfter, s.RetryAfter)
	require.Contains(t, s.Body.Message, "down")
	require.Equal(t, http.StatusNotFound, NotFound("ex_1").Status)
	require.Equal(t, http.StatusConflict, AlreadySettled("ex_1", "completed").Status)
}

// Retry-After is whole seconds rounded up, at least 1, and absent for
// none.
func TestWrite_retryAfterRoundedUp(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, ""}, {-time.Second, ""}, {time.Nanosecond, "1"}, {time.Second, "1"},
		{time.Second + time.Nanosecond, "2"}, {1500 * time.Millisecond, "2"}, {10 * time.Second, "10"},
	} {
		w := httptest.NewRecorder()
		e := Errorf(CodeConflict, "c")
		e.RetryAfter = tt.d
		Write(w, e)
		require.Equal(t, tt.want, w.Header().Get("Retry-After"), tt.d)
		require.Equal(t, http.StatusConflict, w.Code)
		require.Equal(t, "application/json", w.Header().Get("Content-Type"))
		require.JSONEq(t, `{"error":{"code":"CONFLICT","message":"c"}}`, w.Body.String())
	}
}

func TestWriteJSON_unencodableIs500(t *testing.T) {
	w := httptest.NewRecorder()
	WriteJSON(w, http.StatusOK, func() {})
	require.Equal(t, http.StatusInternalServerError, w.Code)
	require.Contains(t, w.Body.String(), `"INTERNAL"`)
	w = httptest.NewRecorder()
	WriteRaw(w, http.StatusAccepted, []byte(`{"a":1}`))
	require.Equal(t, http.StatusAccepted, w.Code)
	require.Equal(t, "{\"a\":1}\n", w.Body.String())
}
