package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// staticBinary builds a small static program, standing in for ptcx.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"os/user\"\n\nfunc main() { _, _ = user.Current() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ptcx")
	cmd := exec.Command("go", "build", "-o", out, src)
	cmd.Env = append(os.Environ(), "GO111MODULE=off", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// Image is an archive's one image, its config and its files.
type Image struct {
	Index  *v1.IndexManifest
	Config *v1.ConfigFile
	Layers int
	Files  map[string]*tar.Header
	Data   map[string][]byte
}

// ReadArchive opens an OCI archive as podman load would: index.json, the
// manifest it names, its config and its layers' files.
func ReadArchive(t *testing.T, archive string) Image {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("the index holds %d manifests, want 1", len(im.Manifests))
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s, want %s", mt, types.OCIManifestSchema1)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := Image{Index: im, Config: cf, Layers: len(layers), Files: map[string]*tar.Header{}, Data: map[string][]byte{}}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := "/" + strings.TrimSuffix(h.Name, "/")
			out.Files[name] = h
			if h.Typeflag == tar.TypeReg && h.Size < 1<<16 {
				out.Data[name], _ = io.ReadAll(tr)
			}
		}
		rc.Close()
	}
	return out
}

// CheckImage checks what `make image` promises of an image: from scratch
// (one layer, no base), a numeric non-root user, ptcx as the entrypoint
// serving the mounted config, and no shell nor any program beside ptcx.
func CheckImage(t *testing.T, img Image) {
	t.Helper()
	if got := img.Index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; got != RefName {
		t.Errorf("ref name %q, want %q", got, RefName)
	}
	if img.Layers != 1 {
		t.Errorf("%d layers, want 1 (from scratch)", img.Layers)
	}
	c := img.Config.Config
	if c.User != User || !strings.HasPrefix(c.User, "65532:") {
		t.Errorf("user %q, want %q (numeric, not root)", c.User, User)
	}
	if strings.Join(c.Entrypoint, " ") != Entrypoint || strings.Join(c.Cmd, " ") != "serve --config "+ConfigPath {
		t.Errorf("entrypoint %q cmd %q", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.ExposedPorts[Port]; !ok {
		t.Errorf("exposed ports %v, want %s", c.ExposedPorts, Port)
	}
	if img.Config.OS != "linux" || len(img.Config.RootFS.DiffIDs) != 1 {
		t.Errorf("os %q, diff ids %d", img.Config.OS, len(img.Config.RootFS.DiffIDs))
	}
	bin := img.Files[Entrypoint]
	if bin == nil || bin.Typeflag != tar.TypeReg || bin.Mode&0o111 == 0 || bin.Uid != 0 {
		t.Fatalf("%s: %+v, want a root-owned executable", Entrypoint, bin)
	}
	for name, h := range img.Files {
		switch {
		case name == Entrypoint:
		case h.Typeflag == tar.TypeDir:
		case h.Typeflag == tar.TypeReg && h.Mode&0o111 == 0 && strings.HasPrefix(name, "/etc/"):
		default:
			t.Errorf("%s: only %s, directories and /etc's plain files belong in the image (no shell, no other program)", name, Entrypoint)
		}
		if filepath.Base(name) == "sh" || strings.HasPrefix(name, "/bin") || strings.HasPrefix(name, "/usr") {
			t.Errorf("%s: a shell's or a distribution's path", name)
		}
	}
	if tmp := img.Files["/tmp"]; tmp == nil || tmp.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp: %+v, want a sticky directory anyone writes (the spill directory's parent)", tmp)
	}
	if !bytes.Contains(img.Data["/etc/passwd"], []byte("ptcx:x:65532:65532:")) {
		t.Errorf("/etc/passwd names no ptcx user 65532: %q", img.Data["/etc/passwd"])
	}
}

func TestBuild_structure(t *testing.T) {
	bin := staticBinary(t)
	out := filepath.Join(t.TempDir(), "bin", "ptcx-image.tar")
	if err := Build(bin, out, "v9.9.9", runtime.GOARCH); err != nil {
		t.Fatal(err)
	}
	img := ReadArchive(t, out)
	CheckImage(t, img)
	if img.Config.Config.Labels["org.opencontainers.image.version"] != "v9.9.9" {
		t.Errorf("labels %v", img.Config.Config.Labels)
	}
	if img.Config.Architecture != runtime.GOARCH {
		t.Errorf("architecture %q", img.Config.Architecture)
	}

	// The same binary makes the same archive, byte for byte.
	again := filepath.Join(t.TempDir(), "again.tar")
	if err := Build(bin, again, "v9.9.9", runtime.GOARCH); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same binary differ")
	}
}

func TestBuild_refusesWhatCannotRunFromScratch(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "ptcx.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, binary, want string }{
		{"missing", filepath.Join(dir, "none"), "no such file"},
		{"script", script, "not an ELF executable"},
		{"empty", os.DevNull, "not an ELF executable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name+".tar")
			err := Build(c.binary, out, "v", runtime.GOARCH)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused build left %s", out)
			}
		})
	}
	// Debian's /bin/true is linked against libc.
	err := Build("/bin/true", filepath.Join(dir, "dyn.tar"), "v", runtime.GOARCH)
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Fatalf("a dynamic binary: err %v", err)
	}
}
