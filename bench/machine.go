package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine names what a run was measured on; absolute figures mean nothing
// without it.
type Machine struct {
	CPU   string `json:"cpu"`
	Cores int    `json:"cores"`
	OS    string `json:"os"`
	Go    string `json:"go"`
}

// ThisMachine describes the machine the process runs on: the CPU model and
// OS release from /proc and /etc/os-release where there are such files,
// the platform's name elsewhere.
func ThisMachine() Machine {
	m := Machine{CPU: "unknown CPU", Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if v := field("/proc/cpuinfo", "model name", ':'); v != "" {
		m.CPU = v
	}
	if v := strings.Trim(field("/etc/os-release", "PRETTY_NAME", '='), `"`); v != "" {
		m.OS = v + " " + runtime.GOARCH
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.OS += ", Linux " + strings.TrimSpace(string(b))
	}
	return m
}

// String is "CPU, N cores, OS, Go".
func (m Machine) String() string {
	return fmt.Sprintf("%s, %d cores, %s, %s", m.CPU, m.Cores, m.OS, m.Go)
}

// field returns the value of the first "key<sep>value" line of file.
func field(file, key string, sep byte) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), string(sep))
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
