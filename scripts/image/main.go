// Command image writes ptcx's container image, from scratch, as an OCI
// archive (`make image`): one layer holding a static ptcx binary at /ptcx,
// /etc/passwd and /etc/group naming its user, and the directories it
// writes (/tmp, for the spill directory); no shell, no base image, nothing
// pulled. The image runs as the numeric user 65532:65532, with
// `ptcx serve --config /etc/ptcx/serve.yaml` as its command (mount the
// config there).
//
// It is a module of its own so that ptcx's module does not depend on
// go-containerregistry. Usage:
//
//	go run . -binary ../../bin/ptcx-static -out ../../bin/ptcx-image.tar -version v1.2.3
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user, binary, config and port.
const (
	UID        = 65532
	User       = "65532:65532"
	Entrypoint = "/ptcx"
	ConfigPath = "/etc/ptcx/serve.yaml"
	Port       = "8080/tcp"
	// RefName is the name `podman load` gives the image (the index's
	// org.opencontainers.image.ref.name).
	RefName = "localhost/ptcx:latest"
)

// epoch dates every file and the image itself, so that the same binary
// makes the same image.
var epoch = time.Unix(0, 0).UTC()

func main() {
	binary := flag.String("binary", "", "the static ptcx binary (CGO_ENABLED=0)")
	out := flag.String("out", "", "the OCI archive to write")
	version := flag.String("version", "devel", "the version, for the image's labels")
	arch := flag.String("arch", runtime.GOARCH, "the binary's GOARCH")
	flag.Parse()
	if *binary == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: image -binary FILE -out FILE.tar [-version V] [-arch GOARCH]")
		os.Exit(2)
	}
	if err := Build(*binary, *out, *version, *arch); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("image: wrote %s (%s, %s)\n", *out, RefName, *version)
}

// Build writes the image of binary, for linux/arch, to out as an OCI
// archive. A binary that is not a static ELF executable is refused: the
// image has no libc, nor a dynamic loader, to run another.
func Build(binary, out, version, arch string) error {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	if err := checkStatic(bin); err != nil {
		return fmt.Errorf("%s: %w", binary, err)
	}
	files, err := rootfs(bin)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(files)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
		mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "scripts/image: ptcx " + version, Comment: "from scratch"}})
	if err != nil {
		return err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Created = arch, "linux", v1.Time{Time: epoch}
	cf.Config = v1.Config{
		User:         User,
		Entrypoint:   []string{Entrypoint},
		Cmd:          []string{"serve", "--config", ConfigPath},
		WorkingDir:   "/",
		Env:          []string{"HOME=/tmp", "XDG_CACHE_HOME=/tmp/cache"},
		ExposedPorts: map[string]struct{}{Port: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":   "ptcx",
			"org.opencontainers.image.version": version,
		},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	return writeArchive(img, out)
}

// checkStatic refuses what is not an ELF executable without an interpreter
// (PT_INTERP): a dynamic binary needs a loader the image does not have.
func checkStatic(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not an ELF executable: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("a dynamically linked executable: build it with CGO_ENABLED=0")
		}
	}
	return nil
}

// rootfs is the layer: directories, the passwd and group files of the
// image's user, and the binary.
func rootfs(bin []byte) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: epoch, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, step := range []func() error{
		func() error { return dir("etc", 0o755) },
		func() error { return dir("etc/ptcx", 0o755) },
		func() error {
			return file("etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nptcx:x:%d:%d:ptcx:/tmp:/sbin/nologin\n", UID, UID))
		},
		func() error { return file("etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\nptcx:x:%d:\n", UID)) },
		func() error { return dir("tmp", 0o1777) },
		func() error { return file(strings.TrimPrefix(Entrypoint, "/"), 0o755, bin) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeArchive writes img as an OCI image layout, named RefName, and tars
// the layout into out (an "oci-archive", as podman load and skopeo read it).
func writeArchive(img v1.Image, out string) error {
	dir, err := os.MkdirTemp("", "ptcx-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": RefName})); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := tarDir(f, dir); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// tarDir writes the files under root to w, in lexical order, dated epoch.
func tarDir(w io.Writer, root string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name, hdr.ModTime, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = filepath.ToSlash(rel), epoch, 0, 0, "", ""
		hdr.AccessTime, hdr.ChangeTime, hdr.Format = time.Time{}, time.Time{}, tar.FormatPAX
		hdr.Mode = 0o644
		if d.IsDir() {
			hdr.Name, hdr.Mode = hdr.Name+"/", 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
