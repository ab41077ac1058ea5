package api_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestError_Is(t *testing.T) {
	e := &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindTimeout, Message: "m"}
	tests := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"its code's sentinel", e, api.ErrCodeRunFailed, true},
		{"another code's sentinel", e, api.ErrInternal, false},
		{"an *Error with its code and kind", e, &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindTimeout}, true},
		{"an *Error with its code and no kind", e, &api.Error{Code: api.CodeCodeRunFailed}, true},
		{"an *Error with another kind", e, &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindMemory}, false},
		{"a nil *Error", e, (*api.Error)(nil), false},
		{"through a wrap", fmt.Errorf("outer: %w", e), api.ErrCodeRunFailed, true},
		{"a wrapped sentinel", fmt.Errorf("outer: %w", api.ErrBusy), api.ErrBusy, true},
		{"TOOL_TIMEOUT is a deadline", &api.Error{Code: api.CodeToolTimeout}, context.DeadlineExceeded, true},
		{"ABORTED is a cancellation", &api.Error{Code: api.CodeAborted}, context.Canceled, true},
		{"ABORTED_BEFORE_DISPATCH is a cancellation", &api.Error{Code: api.CodeAbortedBeforeDispatch}, context.Canceled, true},
		{"CODE_RUN_FAILED (abort) is a cancellation", &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindAbort}, context.Canceled, true},
		{"CODE_RUN_FAILED (timeout) is not a cancellation", e, context.Canceled, false},
		{"DENIED is not a cancellation", &api.Error{Code: api.CodeDenied}, context.Canceled, false},
		{"a plain error", errors.New("INTERNAL"), api.ErrInternal, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, errors.Is(tt.err, tt.target))
		})
	}
}

func TestError_Error_codeAndKindOnce(t *testing.T) {
	tests := []struct {
		name string
		err  *api.Error
		want string
	}{
		{"a code", &api.Error{Code: api.CodeDenied, Message: "no"}, "DENIED: no"},
		{"a code and a kind", &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindTimeout, Message: "m"}, "CODE_RUN_FAILED (timeout): m"},
		{"no message", &api.Error{Code: api.CodeBusy}, "BUSY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestCodeOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want api.Code
	}{
		{"an *Error", &api.Error{Code: api.CodeDenied}, api.CodeDenied},
		{"a wrapped *Error", fmt.Errorf("x: %w", &api.Error{Code: api.CodeToolFailed}), api.CodeToolFailed},
		{"a sentinel", api.ErrBusy, api.CodeBusy},
		{"a plain error", errors.New("plain"), api.CodeInternal},
		{"nil", nil, api.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, api.CodeOf(tt.err))
		})
	}
}

// The sentinels are constants: an importer can neither change one nor
// reassign it, and each says its code.
func TestSentinels_areTheirCodes(t *testing.T) {
	for code, s := range map[api.Code]error{
		api.CodeUnknownTool: api.ErrUnknownTool, api.CodeInvalidArgs: api.ErrInvalidArgs,
		api.CodeInvalidToolOutput: api.ErrInvalidToolOutput, api.CodeUnsupportedSchema: api.ErrUnsupportedSchema,
		api.CodeDenied: api.ErrDenied, api.CodeAborted: api.ErrAborted,
		api.CodeAbortedBeforeDispatch: api.ErrAbortedBeforeDispatch, api.CodeToolTimeout: api.ErrToolTimeout,
		api.CodeCodeRunFailed: api.ErrCodeRunFailed, api.CodeToolFailed: api.ErrToolFailed,
		api.CodeInternal: api.ErrInternal, api.CodeInvalidDefinition: api.ErrInvalidDefinition,
		api.CodeBusy: api.ErrBusy,
	} {
		require.Equal(t, string(code), s.Error())
		require.ErrorIs(t, &api.Error{Code: code, Message: "m"}, s)
		require.Equal(t, code, api.CodeOf(s))
	}
}

func TestResult_AsError(t *testing.T) {
	require.NoError(t, api.Result{Text: "ok"}.AsError(), "a nil *Error must not become a non-nil error")
	e := &api.Error{Code: api.CodeDenied}
	require.Same(t, e, api.Result{Err: e}.AsError())
	require.True(t, api.Result{}.OK())
	require.False(t, api.Result{Err: e}.OK())
}
