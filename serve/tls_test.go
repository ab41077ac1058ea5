package serve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
)

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return certFile, keyFile
}

func TestServer_Serve_tls(t *testing.T) {
	cert, key := selfSigned(t)
	cfg := &serve.Config{Listen: "127.0.0.1:0", TLS: &serve.TLSConfig{CertFile: cert, KeyFile: key},
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA)}}}
	srv, err := serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t)})
	require.NoError(t, err)
	defer srv.Close(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, l) }()

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 10 * time.Second}
	resp, err := hc.Get("https://" + l.Addr().String() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	stop()
	require.NoError(t, <-served)
}

func TestServer_Serve_tlsBadFiles(t *testing.T) {
	cfg := &serve.Config{Listen: "127.0.0.1:0", TLS: &serve.TLSConfig{CertFile: "/nonexistent/c.pem", KeyFile: "/nonexistent/k.pem"},
		Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA)}}}
	srv, err := serve.New(context.Background(), cfg, serve.Options{Runtime: testkit.Sandbox(t)})
	require.NoError(t, err)
	defer srv.Close(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	err = srv.Serve(context.Background(), l)
	require.ErrorContains(t, err, "field tls")
}
