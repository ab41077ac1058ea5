//go:build podman

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The image tests of make test-image: the archive `make image` left
// (PTCX_IMAGE) has the promised structure, and podman runs it: loaded,
// started with a config mounted, it answers /healthz on a loopback port and
// runs an execution. They fail, never skip, where podman cannot run it.

func archive(t *testing.T) string {
	t.Helper()
	a := os.Getenv("PTCX_IMAGE")
	if a == "" {
		t.Fatal("PTCX_IMAGE is not set: run make test-image, which builds bin/ptcx-image.tar and sets it")
	}
	return a
}

func TestArchive_made(t *testing.T) {
	img := ReadArchive(t, archive(t))
	CheckImage(t, img)
	if h := img.Files[Entrypoint]; h.Size < 10<<20 {
		t.Errorf("%s is %d bytes: not ptcx", Entrypoint, h.Size)
	}
}

// podman runs podman with args, bounded in time, and returns its output.
func podman(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "podman", args...).CombinedOutput()
	return string(out), err
}

// runFlags are what this machine's kind needs of podman run: runc, since
// crun refuses hybrid cgroup hierarchies ("cgroups in hybrid mode not
// supported"), and resource limits no higher than the caller's, since
// podman's defaults (nofile 1048576) exceed the hard limits and raising
// them needs CAP_SYS_RESOURCE ("setrlimit RLIMIT_NOFILE: Operation not
// permitted"). Both are harmless on any other Linux.
func runFlags(t *testing.T) []string {
	t.Helper()
	limit := func(res int) uint64 {
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(res, &rl); err != nil {
			t.Fatal(err)
		}
		return min(rl.Cur, 4096)
	}
	const rlimitNproc = 6 // RLIMIT_NPROC on Linux
	nofile, nproc := limit(syscall.RLIMIT_NOFILE), limit(rlimitNproc)
	return []string{"--runtime", "runc", "--ulimit", fmt.Sprintf("nofile=%d:%d", nofile, nofile), "--ulimit", fmt.Sprintf("nproc=%d:%d", nproc, nproc)}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestPodman_servesAnExecution(t *testing.T) {
	a := archive(t)
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("podman is not installed: make test-image installs it (scripts/install-deps.sh podman runc)")
	}
	out, err := podman(t, 2*time.Minute, "load", "-i", a)
	if err != nil || !strings.Contains(out, RefName) {
		t.Fatalf("podman load -i %s: %v\n%s", a, err, out)
	}
	// The image goes once the container has (cleanups run last first), so
	// that reruns leave no image behind.
	t.Cleanup(func() {
		if out, err := podman(t, time.Minute, "rmi", RefName); err != nil {
			t.Errorf("podman rmi %s: %v\n%s", RefName, err, out)
		}
	})

	key := "image-test-key"
	sum := sha256.Sum256([]byte(key))
	conf := t.TempDir()
	if err := os.Chmod(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	// The user 65532 reads it through the mount.
	cfg := fmt.Sprintf("listen: 0.0.0.0:8080\ntenants:\n  - {name: t, key_sha256: %s, mode: ptc}\n", hex.EncodeToString(sum[:]))
	if err := os.WriteFile(filepath.Join(conf, "serve.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	name := fmt.Sprintf("ptcx-image-test-%d", os.Getpid())
	args := append([]string{"run", "-d", "--name", name}, runFlags(t)...)
	args = append(args, "-p", fmt.Sprintf("127.0.0.1:%d:8080", port), "-v", conf+":/etc/ptcx:ro", RefName)
	out, err = podman(t, 2*time.Minute, args...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Cleanup(func() {
		logs, _ := podman(t, 30*time.Second, "logs", name)
		if t.Failed() {
			t.Logf("the container's logs:\n%s", logs)
		}
		if out, err := podman(t, time.Minute, "rm", "-f", "-t", "5", name); err != nil {
			t.Errorf("podman rm %s: %v\n%s", name, err, out)
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				if !strings.Contains(string(body), `"ok"`) {
					t.Fatalf("/healthz: %s", body)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			state, _ := podman(t, 30*time.Second, "ps", "-a", "--filter", "name="+name)
			t.Fatalf("/healthz not answered within 60 s: %v\n%s", err, state)
		}
		time.Sleep(200 * time.Millisecond)
	}

	req, err := http.NewRequest("POST", base+"/v1/executions", strings.NewReader(`{"code":"const x: number = 6; return x * 7"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	client.Timeout = 60 * time.Second
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"completed"`) || !strings.Contains(string(body), `"value":42`) {
		t.Fatalf("POST /v1/executions: %d %s", resp.StatusCode, body)
	}

	// The process runs as the image's user, and there is no shell to exec.
	out, err = podman(t, 30*time.Second, "top", name, "huser")
	if err != nil || !strings.Contains(out, "65532") {
		t.Errorf("podman top %s huser: %v\n%s", name, err, out)
	}
	if out, err := podman(t, 30*time.Second, "exec", name, "/bin/sh", "-c", "true"); err == nil {
		t.Errorf("a shell ran in the image:\n%s", out)
	}
}
