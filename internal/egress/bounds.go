package egress

// The bounds on what one sandbox's requests may cost the caller that serves
// its proxy (the program inside is hostile, and the caller's memory and
// CPU are outside its limits). A relay that serves the same sandbox
// applies the same values: [Budget] is shared by everything that buffers
// the sandbox's bytes, and the per-connection bounds are the Options'.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// The default bounds (see [Options]). With them the requests of a sandbox
// cost its caller about (MaxConns + RefusingConns) x 16 KiB (a goroutine,
// a 4 KiB read buffer; two descriptors each) plus a small multiple of
// MaxBufferedBytes (the heads as read, with their buffers' slack, and the
// parsed form of those complete), a few MiB however hostile the requests:
// TestProxyHeadFloodBounded and the sandbox package's TestEgressHeaderFlood
// measure +1.5 MiB of heap with the whole budget held.
const (
	// DefaultMaxConns: 128 connections, several times what package
	// managers open at once (npm 15 sockets, pip 10).
	DefaultMaxConns = 128
	// DefaultHandshakeTimeout: clients send their request at once; a
	// slow head only holds a connection slot.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxHeaderBytes: 32 KiB, nginx's default for one request's
	// header buffers (net/http's 1 MiB default is far too generous for a
	// caller that pays for a hostile program's requests).
	DefaultMaxHeaderBytes = 32 << 10
	// DefaultMaxHeaderFields: Apache's LimitRequestFields default.
	DefaultMaxHeaderFields = 100
	// DefaultMaxBufferedBytes: 1 MiB of request heads for the sandbox.
	DefaultMaxBufferedBytes = 1 << 20
	// RefusingConns is how many connections past MaxConns are accepted at
	// once, only to be refused with an answer the program can read.
	RefusingConns = 16
)

// Budget is a number of bytes shared by every connection of one sandbox:
// what the caller may hold, at once, of what the program sent and was not
// yet dealt with. Safe for concurrent use.
type Budget struct {
	mu   sync.Mutex
	left int64
	size int64
}

// NewBudget makes a budget of n bytes.
func NewBudget(n int64) *Budget { return &Budget{left: n, size: n} }

// Take takes up to n bytes and returns how many it took: 0 when none is
// left.
func (b *Budget) Take(n int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n = max(0, min(n, b.left))
	b.left -= n
	return n
}

// Release gives back n bytes that Take took.
func (b *Budget) Release(n int64) {
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
}

// InUse returns the bytes taken and not released.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size - b.left
}

// Size returns the budget's size.
func (b *Budget) Size() int64 { return b.size }

var (
	// errHeadTooLarge: a request head longer than MaxHeaderBytes.
	errHeadTooLarge = errors.New("request head too large")
	// errTooManyFields: more than MaxHeaderFields header lines.
	errTooManyFields = errors.New("too many header fields")
	// errBudget: the sandbox's Budget is spent.
	errBudget = errors.New("buffered-bytes budget spent")
)

// meter is a connection's reader. While a request head is read (between
// startHead and endHead) it lets at most the head's limit through, every
// byte taken from the sandbox's Budget as it is read, and it keeps
// what it took until release: the bytes stay in the caller's memory (the
// head, its parsed form) until the request is answered or relayed. Past
// the limit it fails with errHeadTooLarge, past the budget with errBudget.
// Outside a head (a body, a relay) it reads freely: those bytes pass
// through a fixed buffer.
type meter struct {
	r      io.Reader
	budget *Budget
	left   int64 // bytes the head may still read; -1 outside a head
	held   int64 // taken from budget
	read   int64 // read since startHead
}

func (m *meter) startHead(limit int64) { m.left, m.read = limit, 0 }
func (m *meter) endHead()              { m.left = -1 }

// release gives back what the connection took from the budget.
func (m *meter) release() {
	m.budget.Release(m.held)
	m.held = 0
}

func (m *meter) Read(b []byte) (int, error) {
	if m.left < 0 {
		return m.r.Read(b)
	}
	if m.left == 0 {
		return 0, errHeadTooLarge
	}
	// Charged once read, not before: a connection waiting for its next
	// request holds nothing. Bytes the budget cannot cover are dropped
	// (they sat in the fixed read buffer only), and the request refused.
	n, err := m.r.Read(b[:min(int64(len(b)), m.left)])
	if took := m.budget.Take(int64(n)); took < int64(n) {
		m.budget.Release(took)
		return 0, errBudget
	}
	m.held += int64(n)
	m.left -= int64(n)
	m.read += int64(n)
	return n, err
}

// replay serves bytes already read (a whole request head, see
// readRequest) before those of r.
type replay struct {
	head []byte
	r    io.Reader
}

func (p *replay) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		if len(p.head) == 0 {
			p.head = nil // let the head's array go
		}
		return n, nil
	}
	return p.r.Read(b)
}

// acquire waits for a slot for the next connection: a serving one (p.sem)
// if any is free, else a refusing one (p.refusing). It returns false when
// the proxy is closed first.
func (p *Proxy) acquire() (chan struct{}, bool) {
	select {
	case p.sem <- struct{}{}:
		return p.sem, true
	default:
	}
	select {
	case p.sem <- struct{}{}:
		return p.sem, true
	case p.refusing <- struct{}{}:
		return p.refusing, true
	case <-p.ctx.Done():
		return nil, false
	}
}

// upgrade trades a refusing slot for a serving one that was freed while
// Accept waited, so that a connection is refused only when MaxConns others
// are being served as it arrives.
func (p *Proxy) upgrade(slot chan struct{}) chan struct{} {
	if slot == p.sem {
		return slot
	}
	select {
	case p.sem <- struct{}{}:
		<-p.refusing
		return p.sem
	default:
		return slot
	}
}

func retryAccept(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.ECONNABORTED)
}

// headError classifies why a request head could not be read: a bound
// (reason, detail, and the HTTP status to answer), or the client going
// away or idling out before sending anything (reason ""; no record).
func (p *Proxy) headError(m *meter, err error) (reason, detail string, status int) {
	switch {
	case errors.Is(err, errHeadTooLarge):
		return ReasonTooLarge, fmt.Sprintf("request head longer than %d bytes", p.maxHead), 431
	case errors.Is(err, errTooManyFields):
		return ReasonTooLarge, fmt.Sprintf("more than %d header fields", p.maxFields), 431
	case errors.Is(err, errBudget):
		return ReasonBusy, fmt.Sprintf("the request heads of this sandbox hold %d bytes already (the proxy's limit)", p.budget.Size()), 503
	case errors.Is(err, os.ErrDeadlineExceeded) && m.read > 0:
		return ReasonTimeout, fmt.Sprintf("request head not complete within %v", p.handshake), 408
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNRESET):
		return "", "", 0
	}
	return ReasonMalformed, "unreadable request: " + err.Error(), 400
}

// refuseHead records a head that could not be read past a bound (nothing
// when the client just went away) and, for HTTP, answers with the status.
func (p *Proxy) refuseHead(c net.Conn, proto string, m *meter, err error, d *Denial) {
	reason, detail, status := p.headError(m, err)
	if reason == "" {
		return
	}
	if d == nil {
		d = &Denial{}
	}
	d.Protocol, d.Reason, d.Detail = proto, reason, detail
	p.deny(*d)
	if proto == "http" {
		writeRefusal(c, status, reason, detail)
	}
}
