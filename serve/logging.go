package serve

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Log levels and formats of `ptcx serve` (--log-level, --log-format, and
// the config's log_level and log_format; the flags win).
const (
	DefaultLogLevel  = "info"
	DefaultLogFormat = "json"
)

var (
	logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	// The accepted values, in order, for the errors.
	logLevelNames  = []string{"debug", "info", "warn", "error"}
	logFormatNames = []string{"json", "text"}
)

// CheckLogLevel says whether level is one of debug, info, warn, error
// ("" is the default, info).
func CheckLogLevel(level string) error {
	if _, ok := logLevels[level]; ok || level == "" {
		return nil
	}
	return fmt.Errorf("%q is not a log level: want one of %s", level, strings.Join(logLevelNames, ", "))
}

// CheckLogFormat says whether format is json or text ("" is the default,
// json).
func CheckLogFormat(format string) error {
	if format == "" || format == "json" || format == "text" {
		return nil
	}
	return fmt.Errorf("%q is not a log format: want one of %s", format, strings.Join(logFormatNames, ", "))
}

// NewLogger returns the logger `ptcx serve` writes to w: JSON lines or
// slog's text (key=value) lines, at level and above. Empty level and
// format are the defaults (info, json).
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	if err := CheckLogLevel(level); err != nil {
		return nil, err
	}
	if err := CheckLogFormat(format); err != nil {
		return nil, err
	}
	if level == "" {
		level = DefaultLogLevel
	}
	if format == "" {
		format = DefaultLogFormat
	}
	opts := &slog.HandlerOptions{Level: logLevels[level]}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return slog.New(slog.NewJSONHandler(w, opts)), nil
}
