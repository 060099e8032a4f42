// Command gitaly-server is a small Gitaly-like gRPC server used as an independent test peer.
//
// It accepts, on one listener, both kinds of clients real Gitaly accepts:
//   - backchannel clients (Workhorse, gitlab-shell): the connection starts with the 11 bytes
//     "backchannel", then carries a hashicorp/yamux session in which this server is the yamux
//     *server*; the client's first stream carries its gRPC HTTP/2 connection, and the server
//     opens further streams back for sidechannels (see sidechannel.go);
//   - plain gRPC clients: anything else is handed to grpc-go as it is (peeked bytes put back).
//
// It serves gitaly.SSHService: SSHUploadPackWithSidechannel (unary + sidechannel),
// SSHReceivePack and SSHUploadArchive (bidi), and gitaly.SmartHTTPService: InfoRefsUploadPack and
// InfoRefsReceivePack (server stream), PostUploadPackWithSidechannel (unary + sidechannel) and
// PostReceivePack (bidi), running real git. See ../README.md for the flags.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/yamux"
	"google.golang.org/grpc"
)

// backchannelMagic is what a multiplexing client writes before starting its yamux client.
const backchannelMagic = "backchannel"

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

var logger = log.New(os.Stderr, "gitaly-server: ", log.LstdFlags|log.Lmicroseconds)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on: host:port (tcp) or unix:/path")
	tokenFile := flag.String("token-file", "", "file holding the shared secret for v2 auth tokens (empty: no auth)")
	var storages multiFlag
	flag.Var(&storages, "storage", "storage as name=dir (repeatable)")
	eager := flag.Bool("eager-backchannel", false,
		"after each backchannel handshake, open stream 2 and speak HTTP/2 as a client on it (Gitaly < 17.11)")
	wrongID := flag.Bool("wrong-sidechannel-id", false,
		"announce every sidechannel with a call id the client never registered (id + 2^32), to test its rejection")
	var limitMethods multiFlag
	flag.Var(&limitMethods, "limit-error",
		"answer this method (or \"all\") with Unavailable + a gitaly.LimitError detail, as an overloaded Gitaly (repeatable)")
	gitBin := flag.String("git", "git", "git executable")
	handshakeTimeout := flag.Duration("handshake-timeout", 30*time.Second, "time allowed for the first 11 bytes")
	flag.Parse()

	srv := &server{storages: map[string]string{}, git: *gitBin, wrongID: *wrongID, limitMethods: limitMethods}
	for _, s := range storages {
		i := strings.IndexByte(s, '=')
		if i <= 0 || i == len(s)-1 {
			logger.Fatalf("-storage %q: want name=dir", s)
		}
		srv.storages[s[:i]] = s[i+1:]
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			logger.Fatalf("-token-file: %v", err)
		}
		srv.token = strings.TrimRight(string(b), "\r\n")
		if srv.token == "" {
			logger.Fatalf("-token-file %s is empty", *tokenFile)
		}
	}

	network, address := "tcp", *listen
	if strings.HasPrefix(address, "unix:") {
		network, address = "unix", strings.TrimPrefix(strings.TrimPrefix(address, "unix:"), "//")
		_ = os.Remove(address)
	}
	lis, err := net.Listen(network, address)
	if err != nil {
		logger.Fatalf("listen %s %s: %v", network, address, err)
	}
	bound := lis.Addr().String()
	if network == "unix" {
		bound = "unix:" + bound
	}
	// The one line on stdout: tests read the port from it.
	fmt.Fprintf(os.Stdout, "LISTENING %s\n", bound)
	logger.Printf("listening on %s (storages %v, auth %v, eager backchannel %v)",
		bound, srv.storages, srv.token != "", *eager)

	// One grpc-go server for every connection. Backchannel connections are recognised in the
	// handler by their remote address type (muxAddr), which carries the yamux session.
	conns := newConnListener(lis.Addr())
	gs := grpc.NewServer(grpc.CustomCodec(rawCodec{}), grpc.UnknownServiceHandler(srv.handle))
	go func() {
		if err := gs.Serve(conns); err != nil {
			logger.Printf("grpc serve ended: %v", err)
		}
	}()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		logger.Printf("%v: exiting", s)
		lis.Close()
		if network == "unix" {
			_ = os.Remove(address)
		}
		os.Exit(0)
	}()

	var connSeq int64
	for {
		c, err := lis.Accept()
		if err != nil {
			logger.Fatalf("accept: %v", err)
		}
		go handleConn(c, atomic.AddInt64(&connSeq, 1), conns, *eager, *handshakeTimeout)
	}
}

// handleConn peeks the first 11 bytes of a connection (like Gitaly's listenmux) and routes it.
func handleConn(c net.Conn, n int64, conns *connListener, eager bool, timeout time.Duration) {
	tag := fmt.Sprintf("conn %d (%s)", n, c.RemoteAddr())
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	peek := make([]byte, len(backchannelMagic))
	got, err := io.ReadFull(c, peek)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil && got == 0 {
		logger.Printf("%s: handshake: no bytes before %v; closing", tag, err)
		c.Close()
		return
	}
	if string(peek[:got]) != backchannelMagic {
		logger.Printf("%s: plain gRPC connection (first bytes %q)", tag, peek[:got])
		conns.push(&prefixedConn{Conn: c, r: io.MultiReader(bytes.NewReader(peek[:got]), c)})
		return
	}
	logger.Printf("%s: handshake step 1: read magic %q; starting yamux server session", tag, backchannelMagic)

	// Gitaly's server-side yamux configuration. Debian's 2019 yamux has no
	// StreamOpenTimeout/StreamCloseTimeout fields; their absence matches "no timeout".
	cfg := yamux.DefaultConfig()
	cfg.AcceptBacklog = 1
	cfg.EnableKeepAlive = false
	cfg.MaxStreamWindowSize = 16 * 1024 * 1024
	cfg.LogOutput = &prefixWriter{prefix: tag + ": yamux: "}
	sess, err := yamux.Server(c, cfg)
	if err != nil {
		logger.Printf("%s: handshake step 2: yamux server: %v", tag, err)
		c.Close()
		return
	}
	// Exactly one stream is accepted: the client's gRPC connection (stream 1).
	st, err := sess.AcceptStream()
	if err != nil {
		logger.Printf("%s: handshake step 2: accepting the client's gRPC stream: %v", tag, err)
		sess.Close()
		return
	}
	logger.Printf("%s: handshake step 2: accepted yamux stream %d as the gRPC connection", tag, st.StreamID())
	go func() {
		<-sess.CloseChan()
		logger.Printf("%s: yamux session closed", tag)
	}()
	if eager {
		go eagerBackchannel(sess, tag)
	}
	conns.push(&muxConn{Stream: st, addr: &muxAddr{Addr: c.RemoteAddr(), session: sess, tag: tag}})
}

// muxAddr is the RemoteAddr of a gRPC connection that runs inside a yamux session; handlers get
// it from peer.FromContext and use the session to open sidechannels.
type muxAddr struct {
	net.Addr
	session *yamux.Session
	tag     string
}

// muxConn is yamux stream 1 presented to grpc-go as its connection.
type muxConn struct {
	*yamux.Stream
	addr *muxAddr
}

func (m *muxConn) RemoteAddr() net.Addr { return m.addr }

// prefixedConn is a plain connection whose peeked bytes are read again first.
type prefixedConn struct {
	net.Conn
	r io.Reader
}

func (p *prefixedConn) Read(b []byte) (int, error) { return p.r.Read(b) }

// connListener is a net.Listener fed by handleConn, so one grpc.Server sees every connection.
type connListener struct {
	addr   net.Addr
	ch     chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, ch: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.closed:
		c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, io.EOF
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }

// prefixWriter turns yamux's log output into tagged lines on our logger.
type prefixWriter struct{ prefix string }

func (p *prefixWriter) Write(b []byte) (int, error) {
	logger.Print(p.prefix + strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
