package main

// The client end of a Gitaly backchannel connection:
//
//   TCP (or unix) connect → write "backchannel" → yamux client session → open stream 1 and hand it
//   to grpc-go as its connection. Streams the server opens are read for an 11-byte prefix:
//   "sidechannel" + 8-byte big-endian call id goes to the registry; anything else (old Gitaly's
//   eager HTTP/2 backchannel) is served by an empty grpc-go server, as Go clients do.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
	"google.golang.org/grpc"
)

// parseAddress turns tcp://host:port, unix:/path or unix:///path into net.Dial arguments.
func parseAddress(addr string) (string, string, error) {
	switch {
	case strings.HasPrefix(addr, "tcp://"):
		return "tcp", strings.TrimPrefix(addr, "tcp://"), nil
	case strings.HasPrefix(addr, "unix://"):
		return "unix", strings.TrimPrefix(addr, "unix://"), nil
	case strings.HasPrefix(addr, "unix:"):
		return "unix", strings.TrimPrefix(addr, "unix:"), nil
	}
	return "", "", fmt.Errorf("unsupported Gitaly address %q (want tcp://host:port or unix:/path)", addr)
}

// dialer makes backchannel connections for grpc-go (one per transport grpc-go asks for).
type dialer struct {
	network, address string
	plain            bool // no backchannel: grpc-go speaks HTTP/2 on the raw connection
	registry         *registry
	backchannel      *streamListener // empty gRPC server for non-sidechannel streams
}

func (d *dialer) dial(ctx context.Context, _ string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, d.network, d.address)
	if err != nil {
		logf("handshake step 1: connect %s %s: %v", d.network, d.address, err)
		return nil, err
	}
	if d.plain {
		verbosef("plain connection to %s (no backchannel)", d.address)
		return c, nil
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetWriteDeadline(dl)
	}
	if _, err := c.Write([]byte("backchannel")); err != nil {
		logf("handshake step 2: write magic: %v", err)
		c.Close()
		return nil, err
	}
	_ = c.SetWriteDeadline(time.Time{})
	// Gitaly's client-side configuration; Debian's 2019 yamux lacks StreamCloseTimeout
	// (Gitaly sets 1 s), so a stream closed here waits for the server's FIN indefinitely.
	cfg := yamux.DefaultConfig()
	cfg.EnableKeepAlive = false
	cfg.MaxStreamWindowSize = 256 * 1024
	cfg.LogOutput = logWriter{}
	sess, err := yamux.Client(c, cfg)
	if err != nil {
		logf("handshake step 3: yamux client: %v", err)
		c.Close()
		return nil, err
	}
	st, err := sess.OpenStream()
	if err != nil {
		logf("handshake step 4: open gRPC stream: %v", err)
		sess.Close()
		return nil, err
	}
	verbosef("backchannel to %s established; gRPC on yamux stream %d", d.address, st.StreamID())
	go d.acceptStreams(sess)
	return st, nil
}

// acceptStreams ACKs (yamux does so in Accept) and dispatches every stream the server opens.
func (d *dialer) acceptStreams(sess *yamux.Session) {
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			verbosef("yamux session ended: %v", err)
			return
		}
		go d.dispatch(st)
	}
}

func (d *dialer) dispatch(st *yamux.Stream) {
	id := st.StreamID()
	_ = st.SetReadDeadline(time.Now().Add(10 * time.Second))
	prefix := make([]byte, 11)
	n, err := io.ReadFull(st, prefix)
	if err != nil && n == 0 {
		logf("server stream %d: no bytes: %v; closing it", id, err)
		st.Close()
		return
	}
	if string(prefix[:n]) != "sidechannel" {
		_ = st.SetReadDeadline(time.Time{})
		verbosef("server stream %d starts with %q: serving it with an empty gRPC server", id, prefix[:n])
		d.backchannel.push(&replayConn{Stream: st, r: io.MultiReader(bytes.NewReader(prefix[:n]), st)})
		return
	}
	var idBytes [8]byte
	if _, err := io.ReadFull(st, idBytes[:]); err != nil {
		logf("sidechannel handshake on stream %d: reading the 8-byte id: %v", id, err)
		st.Close()
		return
	}
	_ = st.SetReadDeadline(time.Time{})
	callID := int64(binary.BigEndian.Uint64(idBytes[:]))
	w := d.registry.take(callID)
	if w == nil {
		logf("sidechannel handshake on stream %d: id %d not registered; closing the stream", id, callID)
		st.Close()
		return
	}
	_ = st.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := st.Write([]byte("ok")); err != nil {
		logf("sidechannel handshake on stream %d: writing ok: %v", id, err)
		st.Close()
		w <- nil
		return
	}
	_ = st.SetWriteDeadline(time.Time{})
	verbosef("sidechannel %d on stream %d confirmed", callID, id)
	w <- st
}

// registry maps pending call ids to waiters; take removes the entry, so an id is used once.
type registry struct {
	mu      sync.Mutex
	next    int64
	waiters map[int64]chan *yamux.Stream
}

func newRegistry() *registry { return &registry{waiters: map[int64]chan *yamux.Stream{}} }

func (r *registry) register() (int64, chan *yamux.Stream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.next
	r.next++
	ch := make(chan *yamux.Stream, 1)
	r.waiters[id] = ch
	return id, ch
}

func (r *registry) take(id int64) chan *yamux.Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.waiters[id]
	delete(r.waiters, id)
	return ch
}

// replayConn is a stream whose first bytes were already read and are replayed.
type replayConn struct {
	*yamux.Stream
	r io.Reader
}

func (c *replayConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// streamListener feeds streams to a grpc.Server.
type streamListener struct {
	ch chan net.Conn
}

func (l *streamListener) push(c net.Conn)           { l.ch <- c }
func (l *streamListener) Close() error              { return nil }
func (l *streamListener) Addr() net.Addr            { return &net.UnixAddr{Name: "backchannel", Net: "unix"} }
func (l *streamListener) Accept() (net.Conn, error) { return <-l.ch, nil }

// startBackchannelServer runs a gRPC server without services on streams the server opens.
func startBackchannelServer() *streamListener {
	l := &streamListener{ch: make(chan net.Conn)}
	go func() { _ = grpc.NewServer().Serve(l) }()
	return l
}
