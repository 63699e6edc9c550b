// Package egresstest is what the egress tests of this module share: a fake
// caller's network for the proxy (names resolved by the test, every
// connection ending at a loopback server) and a throw-away CA. It is
// imported only by tests (internal/egress's and the sandbox package's):
// tests may send nothing outside 127.0.0.0/8 and ::1, and Net makes sure
// the proxy does not either.
package egresstest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Net is the test's view of the caller's network: names resolve to fake
// public addresses (documentation ranges, never dialled), and a connection
// to one of them reaches the loopback server it stands for. Its Resolve and
// Dial replace the proxy's.
type Net struct {
	t     testing.TB
	mu    sync.Mutex
	names map[string][]netip.Addr
	route map[netip.AddrPort]string // fake address → real loopback host:port
	next  int
	dials atomic.Int64
}

// NewNet returns an empty fake network.
func NewNet(t testing.TB) *Net {
	return &Net{t: t, names: map[string][]netip.Addr{}, route: map[netip.AddrPort]string{}, next: 1}
}

// Host makes name resolve to a fresh fake public address whose port (the
// port of real) leads to the loopback server at real; it returns the port.
func (f *Net) Host(name, real string) uint16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ps, err := net.SplitHostPort(real)
	if err != nil {
		f.t.Fatal(err)
	}
	n, _ := strconv.Atoi(ps)
	a := netip.AddrFrom4([4]byte{203, 0, 113, byte(f.next)})
	if f.next > 250 {
		a = netip.AddrFrom4([4]byte{198, 51, 100, byte(f.next - 250)})
	}
	f.next++
	f.names[name] = append(f.names[name], a)
	f.route[netip.AddrPortFrom(a, uint16(n))] = real
	return uint16(n)
}

// Alias makes name resolve to addrs as they are (DNS rebinding: a name
// that resolves to 127.0.0.1).
func (f *Net) Alias(name string, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range addrs {
		f.names[name] = append(f.names[name], netip.MustParseAddr(a))
	}
}

// Resolve answers the names Host and Alias made, and "no such host" for
// every other.
func (f *Net) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Dial connects to the loopback server a fake address stands for, or to a
// loopback address itself; any other address fails the test and is not
// dialled.
func (f *Net) Dial(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
	f.mu.Lock()
	real, ok := f.route[a]
	f.mu.Unlock()
	f.dials.Add(1)
	switch {
	case ok:
	case a.Addr().Unmap().IsLoopback():
		real = a.String()
	default:
		f.t.Errorf("the proxy dialled %s, outside the test's network: nothing was sent", a)
		return nil, fmt.Errorf("test network: %s is not reachable", a)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", real)
}

// Dials counts the calls of Dial.
func (f *Net) Dials() int64 { return f.dials.Load() }

// CA makes a CA and a server certificate it signs for names; it returns
// the server's TLS certificate and the CA's PEM file, written in dir.
func CA(t testing.TB, dir string, names ...string) (tls.Certificate, string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandbox egress test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{leaf}, PrivateKey: key}, caFile
}
