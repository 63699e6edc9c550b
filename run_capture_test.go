package sandbox

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// captureWant is what capture.read must give, computed the straightforward
// way: the first limit bytes, truncated when there were more, and w given
// every byte up to its first failed write.
func captureWant(all []byte, limit int) ([]byte, bool) {
	if len(all) > limit {
		return all[:limit], true
	}
	return all, false
}

// chunkReader returns data in chunks of random sizes.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), 1+r.rng.IntN(70000), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// failingWriter accepts ok bytes, then fails.
type failingWriter struct {
	got bytes.Buffer
	ok  int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.got.Len()+len(p) > w.ok {
		return 0, errors.New("full")
	}
	return w.got.Write(p)
}

// TestCaptureRead: capture.read keeps what the straightforward reading
// keeps (the first limit bytes, truncated exactly when more arrived) and
// copies every byte to the writer until it fails, for outputs and limits
// around its 512-byte start and growth, read in one-byte, halved, random
// and data-with-EOF chunks.
func TestCaptureRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 511, 512, 513, 1500, 5000, 70000, 300000} {
		all := make([]byte, size)
		for i := range all {
			all[i] = byte(rng.IntN(256))
		}
		for _, limit := range []int{1, 7, 511, 512, 513, 4096, 100000, 4 << 20} {
			readers := map[string]func() io.Reader{
				"one":     func() io.Reader { return iotest.OneByteReader(bytes.NewReader(all)) },
				"half":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(all)) },
				"chunks":  func() io.Reader { return &chunkReader{all, rng} },
				"dataEOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(all)) },
			}
			for name, mk := range readers {
				if name == "one" && size > 5000 {
					continue
				}
				var c capture
				var out bytes.Buffer
				c.read(mk(), limit, &out)
				want, trunc := captureWant(all, limit)
				if !bytes.Equal(c.data, want) || c.truncated != trunc || !bytes.Equal(out.Bytes(), all) {
					t.Errorf("size %d limit %d %s: kept %d bytes (want %d), truncated %v (want %v), copied %d of %d",
						size, limit, name, len(c.data), len(want), c.truncated, trunc, out.Len(), size)
				}
				fw := &failingWriter{ok: size / 3}
				var c2 capture
				c2.read(mk(), limit, fw)
				if !bytes.Equal(c2.data, want) || c2.truncated != trunc || !bytes.Equal(fw.got.Bytes(), all[:fw.got.Len()]) || fw.got.Len() > size/3 {
					t.Errorf("size %d limit %d %s, failing writer: kept %d, truncated %v, copied %d", size, limit, name, len(c2.data), c2.truncated, fw.got.Len())
				}
			}
		}
	}
}
