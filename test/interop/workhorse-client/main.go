// Command workhorse-client is a Workhorse/gitlab-shell-like Gitaly client, usable as git's SSH
// command:
//
//	GIT_SSH_COMMAND="workhorse-client -gitaly tcp://127.0.0.1:PORT -token-file F -storage default" \
//	  git clone ssh://git@example/group/project.git
//
// git runs it as `workhorse-client [flags] [-o opt] [-p port] host "git-upload-pack '/path'"`
// (or git-receive-pack, git-upload-archive; `-G host` first when it probes the ssh variant).
// Instead of reaching an SSH server, it calls Gitaly over a backchannel connection:
// upload-pack as the unary SSHUploadPackWithSidechannel with a sidechannel, receive-pack and
// upload-archive as bidi RPCs over the same connection. Flags: see ../README.md.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

var verbose bool

func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "workhorse-client: "+format+"\n", args...)
}

func verbosef(format string, args ...interface{}) {
	if verbose {
		logf(format, args...)
	}
}

type logWriter struct{}

func (logWriter) Write(b []byte) (int, error) {
	logf("yamux: %s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// options are the parsed command line.
type options struct {
	gitaly, tokenFile, storage, relativePath, repoPrefix string
	glID, glRepository, glUsername                       string
	gitConfig                                            multiFlag
	timeout                                              time.Duration
	plain                                                bool
	service, path                                        string
}

func main() { os.Exit(run(os.Args[1:])) }

func run(argv []string) int {
	fs := flag.NewFlagSet("workhorse-client", flag.ContinueOnError)
	o := &options{}
	fs.StringVar(&o.gitaly, "gitaly", "", "Gitaly address: tcp://host:port or unix:/path (required)")
	fs.StringVar(&o.tokenFile, "token-file", "", "file with the Gitaly token secret (empty: no authorization)")
	fs.StringVar(&o.storage, "storage", "default", "storage_name of the repository")
	fs.StringVar(&o.relativePath, "relative-path", "", "relative_path of the repository (default: the path git asks for, without the leading /)")
	fs.StringVar(&o.repoPrefix, "repo-prefix", "", "string prepended to the relative path derived from git's path")
	fs.StringVar(&o.glID, "gl-id", "user-1", "gl_id for receive-pack")
	fs.StringVar(&o.glRepository, "gl-repository", "project-1", "gl_repository for receive-pack")
	fs.StringVar(&o.glUsername, "gl-username", "root", "gl_username for receive-pack")
	fs.Var(&o.gitConfig, "git-config", "key=value sent as git_config_options (repeatable)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "deadline of the whole RPC")
	fs.BoolVar(&o.plain, "plain", false, "plain gRPC connection without the backchannel handshake (upload-pack then fails)")
	fs.BoolVar(&verbose, "v", false, "log each connection and sidechannel step to stderr")
	// ssh options git may pass; accepted and ignored.
	var sshOpts multiFlag
	fs.Var(&sshOpts, "o", "ssh option (ignored)")
	fs.String("p", "", "ssh port (ignored)")
	fs.String("l", "", "ssh login name (ignored)")
	probe := fs.Bool("G", false, "ssh -G: git's variant probe; exits 0")
	for _, b := range []string{"4", "6", "T", "x"} {
		fs.Bool(b, false, "ssh flag (ignored)")
	}
	if err := fs.Parse(argv); err != nil {
		return 129
	}
	if *probe {
		return 0
	}
	args := fs.Args()
	if len(args) < 2 {
		logf("usage: workhorse-client [flags] host \"git-upload-pack '/path'\" (got %q)", args)
		return 129
	}
	if o.gitaly == "" {
		logf("-gitaly is required")
		return 129
	}
	var err error
	if o.service, o.path, err = parseCommand(strings.Join(args[1:], " ")); err != nil {
		logf("%v", err)
		return 129
	}
	return call(o)
}

// parseCommand splits "git-upload-pack '/group/project.git'" into service and path.
func parseCommand(cmd string) (string, string, error) {
	cmd = strings.TrimSpace(cmd)
	var service, rest string
	for _, s := range []string{"git-upload-pack", "git-receive-pack", "git-upload-archive"} {
		for _, form := range []string{s + " ", "git " + strings.TrimPrefix(s, "git-") + " "} {
			if strings.HasPrefix(cmd, form) {
				service, rest = s, strings.TrimSpace(cmd[len(form):])
			}
		}
	}
	if service == "" {
		return "", "", fmt.Errorf("unsupported command %q", cmd)
	}
	path, err := shellUnquote(rest)
	return service, path, err
}

// shellUnquote undoes git's sq_quote ('a'\”b' → a'b); unquoted words pass through.
func shellUnquote(s string) (string, error) {
	var b strings.Builder
	for len(s) > 0 {
		switch s[0] {
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("unterminated quote in %q", s)
			}
			b.WriteString(s[1 : 1+end])
			s = s[end+2:]
		case '\\':
			if len(s) < 2 {
				return "", errors.New("trailing backslash")
			}
			b.WriteByte(s[1])
			s = s[2:]
		default:
			b.WriteByte(s[0])
			s = s[1:]
		}
	}
	return b.String(), nil
}

// authorization builds Gitaly's v2 token: Bearer v2.<hex hmac-sha256(secret, ts)>.<ts>.
func authorization(secret string) string {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	return "Bearer v2." + hex.EncodeToString(mac.Sum(nil)) + "." + ts
}

func call(o *options) int {
	network, address, err := parseAddress(o.gitaly)
	if err != nil {
		logf("%v", err)
		return 128
	}
	r := repo{storage: o.storage, relativePath: o.relativePath}
	if r.relativePath == "" {
		r.relativePath = o.repoPrefix + strings.TrimPrefix(o.path, "/")
	}
	gitProtocol := os.Getenv("GIT_PROTOCOL")
	verbosef("%s %q → storage %q relative path %q, GIT_PROTOCOL %q", o.service, o.path, r.storage, r.relativePath, gitProtocol)

	d := &dialer{network: network, address: address, plain: o.plain, registry: newRegistry(), backchannel: startBackchannelServer()}
	cc, err := grpc.Dial("passthrough:///gitaly", grpc.WithInsecure(), grpc.WithContextDialer(d.dial),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(bytesCodec{})))
	if err != nil {
		logf("grpc dial: %v", err)
		return 128
	}
	defer cc.Close()

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if o.tokenFile != "" {
		secret, err := os.ReadFile(o.tokenFile)
		if err != nil {
			logf("-token-file: %v", err)
			return 128
		}
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization(strings.TrimRight(string(secret), "\r\n")))
	}

	switch o.service {
	case "git-upload-pack":
		return uploadPack(ctx, cc, d.registry, r, o.gitConfig, gitProtocol)
	case "git-receive-pack":
		first := receivePackFirstRequest(r, o.glID, o.glRepository, o.glUsername, gitProtocol, o.gitConfig)
		return bidi(ctx, cc, "/gitaly.SSHService/SSHReceivePack", first)
	default:
		return bidi(ctx, cc, "/gitaly.SSHService/SSHUploadArchive", uploadArchiveFirstRequest(r))
	}
}

// uploadPack makes the unary call and proxies git's stdin/stdout/stderr over the sidechannel.
func uploadPack(ctx context.Context, cc *grpc.ClientConn, reg *registry, r repo, cfg []string, gitProtocol string) int {
	id, waiter := reg.register()
	ctx = metadata.AppendToOutgoingContext(ctx, "gitaly-sidechannel-id", strconv.FormatInt(id, 10))

	proxied := make(chan error, 1)
	go func() {
		st := <-waiter
		if st == nil {
			proxied <- errors.New("sidechannel handshake failed")
			return
		}
		proxied <- proxySidechannel(st, os.Stdin, os.Stdout, os.Stderr)
	}()

	var resp frame
	err := cc.Invoke(ctx, "/gitaly.SSHService/SSHUploadPackWithSidechannel",
		&frame{b: uploadPackWithSidechannelRequest(r, cfg, gitProtocol)}, &resp)
	arrived := reg.take(id) == nil // still registered: the server never opened the sidechannel
	if err != nil {
		if arrived {
			// Let git's stderr (band 2) reach the user before the error.
			select {
			case <-proxied:
			case <-time.After(time.Second):
			}
		}
		logf("SSHUploadPackWithSidechannel: %v", err)
		return 128
	}
	if !arrived {
		logf("SSHUploadPackWithSidechannel: sidechannel: callback de-registered without having run")
		return 128
	}
	if perr := <-proxied; perr != nil {
		logf("SSHUploadPackWithSidechannel: sidechannel: %v", perr)
		return 128
	}
	verbosef("SSHUploadPackWithSidechannel ok (%d response bytes)", len(resp.b))
	return 0
}

// Largest payload of one client pkt-line: 65520 - 4 header bytes.
const maxPktPayload = 65516

// proxySidechannel writes stdin as pkt-lines (flush at EOF) and demultiplexes the server's
// sideband packets. It returns when the server's side of the stream ends, without waiting for
// stdin: git keeps our stdin open until it has read all of our stdout.
//
// The stream is never closed here before that: with Debian's yamux, Read on a locally closed
// stream returns EOF as soon as its buffer is empty, which would cut off the response.
func proxySidechannel(st io.ReadWriter, stdin io.Reader, stdout, stderr io.Writer) error {
	go func() {
		buf := make([]byte, 4+maxPktPayload)
		for {
			n, err := stdin.Read(buf[4:])
			if n > 0 {
				copy(buf, fmt.Sprintf("%04x", n+4))
				if _, werr := st.Write(buf[:4+n]); werr != nil {
					verbosef("sidechannel: writing stdin: %v", werr)
					return
				}
			}
			if err != nil {
				if err != io.EOF {
					logf("sidechannel: reading stdin: %v", err)
				}
				if _, werr := st.Write([]byte("0000")); werr != nil {
					verbosef("sidechannel: writing flush: %v", werr)
				}
				return
			}
		}
	}()
	hdr := make([]byte, 4)
	data := make([]byte, 65520)
	for {
		if _, err := io.ReadFull(st, hdr); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading sideband header: %v", err)
		}
		n, err := strconv.ParseUint(string(hdr), 16, 16)
		if err != nil {
			return fmt.Errorf("invalid sideband header %q", hdr)
		}
		if n < 5 {
			return fmt.Errorf("invalid sideband packet %q", hdr)
		}
		if n > 65520 {
			return fmt.Errorf("invalid sideband length %d", n)
		}
		pkt := data[:n-4]
		if _, err := io.ReadFull(st, pkt); err != nil {
			return fmt.Errorf("reading sideband packet of %d bytes: %v", n, err)
		}
		switch pkt[0] {
		case 1:
			_, err = stdout.Write(pkt[1:])
		case 2:
			_, err = stderr.Write(pkt[1:])
		default:
			err = fmt.Errorf("unexpected band: %d", pkt[0])
		}
		if err != nil {
			return err
		}
	}
}

// bidi runs a streaming RPC: stdin → request messages, responses → stdout/stderr, exit status →
// our exit code. A failed call exits with the reported exit status, or 128 without one.
func bidi(ctx context.Context, cc *grpc.ClientConn, method string, first []byte) int {
	desc := &grpc.StreamDesc{StreamName: method, ServerStreams: true, ClientStreams: true}
	stream, err := cc.NewStream(ctx, desc, method)
	if err != nil {
		logf("%s: %v", method, err)
		return 128
	}
	if err := stream.SendMsg(&frame{b: first}); err != nil {
		// The real error comes with RecvMsg below.
		verbosef("%s: sending first request: %v", method, err)
	}
	go func() {
		buf := make([]byte, 32*1024)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				if serr := stream.SendMsg(&frame{b: stdinRequest(buf[:n])}); serr != nil {
					return
				}
			}
			if err != nil {
				_ = stream.CloseSend()
				return
			}
		}
	}()
	exit, sawExit := 0, false
	for {
		var f frame
		err := stream.RecvMsg(&f)
		if err == io.EOF {
			return exit
		}
		if err != nil {
			logf("%s: %v", method, err)
			if sawExit && exit != 0 {
				return exit
			}
			return 128
		}
		resp, derr := decodeStreamResponse(f.b)
		if derr != nil {
			logf("%s: decoding response: %v", method, derr)
			return 128
		}
		if len(resp.stdout) > 0 {
			if _, err := os.Stdout.Write(resp.stdout); err != nil {
				return 128
			}
		}
		if len(resp.stderr) > 0 {
			_, _ = os.Stderr.Write(resp.stderr)
		}
		if resp.hasExitStatus {
			exit, sawExit = int(resp.exitStatus), true
		}
	}
}
