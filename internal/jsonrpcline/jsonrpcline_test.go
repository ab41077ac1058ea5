package jsonrpcline

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("abc\n"+strings.Repeat("x", 40)+"\nexact\n1234567\nlast"), 16)
	line, err := Read(r, 6)
	require.NoError(t, err)
	require.Equal(t, "abc", string(line))
	_, err = Read(r, 6)
	require.ErrorIs(t, err, ErrTooLong, "a line longer than the buffer and the limit")
	line, err = Read(r, 6)
	require.NoError(t, err, "the long line was consumed whole")
	require.Equal(t, "exact", string(line))
	_, err = Read(r, 6)
	require.ErrorIs(t, err, ErrTooLong, "one byte over the limit")
	line, err = Read(r, 6)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, "last", string(line), "a last line without a newline")

	line, err = Read(bufio.NewReader(strings.NewReader("123456\n")), 6)
	require.NoError(t, err, "exactly at the limit")
	require.Equal(t, "123456", string(line))
}

func TestClassify(t *testing.T) {
	tests := []struct {
		line string
		want Problem
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, OK},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, OK},
		{`hello`, NotJSON},
		{`{"a":`, NotJSON},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, Batch},
		{`42`, NotObject},
		{`"text"`, NotObject},
		{`{"hello":"world"}`, NotMessage},
	}
	for _, tt := range tests {
		p, err := Classify([]byte(tt.line))
		require.Equal(t, tt.want, p, tt.line)
		require.Equal(t, tt.want == NotMessage, err != nil, tt.line)
	}
}
