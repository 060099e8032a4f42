package main

// gitaly.SSHService handlers, served through grpc-go's unknown-service handler with raw bytes.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

const (
	sshService = "gitaly.SSHService"
	// Largest stdout/stderr payload per bidi response message.
	maxResponseChunk = 128 * 1024
	// What git prints when its client goes away mid-conversation.
	hungUpStderr = "fatal: the remote end hung up unexpectedly\n"
)

type server struct {
	storages map[string]string
	token    string
	git      string
	wrongID  bool // -wrong-sidechannel-id
	// -limit-error: methods answered with a LimitError (smarthttp.go, limit.go)
	limitMethods []string
}

// handle dispatches every call by its full method name.
func (s *server) handle(_ interface{}, ss grpc.ServerStream) error {
	full, _ := grpc.MethodFromServerStream(ss)
	name := strings.TrimPrefix(full, "/")
	service, method := name, ""
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		service, method = name[:i], name[i+1:]
	}
	tag := callTag(ss.Context(), method)
	start := time.Now()
	var err error
	switch {
	case service == smartHTTPService:
		err = s.handleSmartHTTP(ss, tag, service, method)
	case service != sshService:
		err = status.Errorf(codes.Unimplemented, "unknown service %v", service)
	case method == "SSHUploadPackWithSidechannel":
		err = s.uploadPackWithSidechannel(ss, tag)
	case method == "SSHReceivePack":
		err = s.bidi(ss, tag, "receive-pack")
	case method == "SSHUploadArchive":
		err = s.bidi(ss, tag, "upload-archive")
	default:
		// Includes SSHUploadPack, removed from Gitaly in 17.8: grpc-go's own wording.
		err = status.Errorf(codes.Unimplemented, "unknown method %v for service %v", method, service)
	}
	if err != nil {
		logger.Printf("%s: failed after %v: %v", tag, time.Since(start).Round(time.Millisecond), err)
	} else {
		logger.Printf("%s: ok after %v", tag, time.Since(start).Round(time.Millisecond))
	}
	return err
}

func callTag(ctx context.Context, method string) string {
	if p, ok := peer.FromContext(ctx); ok {
		if m, ok := p.Addr.(*muxAddr); ok {
			return m.tag + ": " + method
		}
		return "plain " + p.Addr.String() + ": " + method
	}
	return method
}

// authorize checks `authorization: Bearer v2.<hex hmac-sha256(secret, ts)>.<ts>` (±30 s) with
// Gitaly's codes: missing or malformed → Unauthenticated, bad signature or time → PermissionDenied.
func (s *server) authorize(ctx context.Context) error {
	if s.token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get("authorization")
	if len(values) == 0 {
		return status.Error(codes.Unauthenticated, "authentication required")
	}
	const scheme = "bearer "
	v := values[0]
	if len(v) < len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return status.Error(codes.Unauthenticated, "authentication required")
	}
	parts := strings.SplitN(v[len(scheme):], ".", 3)
	if len(parts) != 3 {
		return status.Error(codes.Unauthenticated, "authentication required")
	}
	sig, err := hex.DecodeString(parts[1])
	if err != nil {
		return status.Error(codes.Unauthenticated, "authentication required")
	}
	if parts[0] != "v2" {
		return status.Error(codes.PermissionDenied, "permission denied: invalid token version")
	}
	mac := hmac.New(sha256.New, []byte(s.token))
	mac.Write([]byte(parts[2]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return status.Error(codes.PermissionDenied, "permission denied: wrong hmac signature")
	}
	ts, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return status.Errorf(codes.PermissionDenied, "permission denied: cannot parse timestamp: %v", err)
	}
	now := time.Now().Unix()
	if ts < now-30 {
		return status.Error(codes.PermissionDenied, "permission denied: token has expired")
	}
	if ts > now+30 {
		return status.Error(codes.PermissionDenied, "permission denied: token's validity window is in future")
	}
	return nil
}

// repoPath resolves storage + relative path to an existing bare repository inside the storage.
func (s *server) repoPath(r *repository) (string, error) {
	if r == nil {
		return "", status.Error(codes.InvalidArgument, "repository not set")
	}
	root, ok := s.storages[r.storageName]
	if !ok {
		return "", status.Errorf(codes.InvalidArgument, "GetStorageByName: no such storage: %q", r.storageName)
	}
	rel := r.relativePath
	if rel == "" {
		return "", status.Error(codes.InvalidArgument, "GetRepoPath: relative path not set")
	}
	for _, seg := range strings.FieldsFunc(rel, func(c rune) bool { return c == '/' || c == '\\' }) {
		if seg == ".." {
			return "", status.Error(codes.InvalidArgument, "GetRepoPath: relative path escapes root directory")
		}
	}
	if filepath.IsAbs(rel) || strings.ContainsRune(rel, 0) {
		return "", status.Error(codes.InvalidArgument, "GetRepoPath: relative path escapes root directory")
	}
	dir := filepath.Join(root, rel)
	for _, need := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, need)); err != nil {
			return "", status.Errorf(codes.NotFound, "GetRepoPath: not a git repository: %q", rel)
		}
	}
	return dir, nil
}

// gitCommand builds `git [-c k=v]... <sub> <dir>` with GIT_PROTOCOL from the request.
func (s *server) gitCommand(ctx context.Context, sub, dir string, req *sshRequest) (*exec.Cmd, error) {
	return s.gitCommandArgs(ctx, req, sub, dir)
}

// gitCommandArgs builds `git [-c k=v]... <args...>` with GIT_PROTOCOL from the request.
func (s *server) gitCommandArgs(ctx context.Context, req *sshRequest, sub ...string) (*exec.Cmd, error) {
	var args []string
	for _, o := range req.gitConfigOptions {
		if i := strings.IndexByte(o, '='); i <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "invalid config option %q", o)
		}
		args = append(args, "-c", o)
	}
	args = append(args, sub...)
	cmd := exec.CommandContext(ctx, s.git, args...)
	// git dies with this server (tests kill it with SIGTERM/SIGKILL mid-call).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_PROTOCOL=") {
			env = append(env, e)
		}
	}
	switch req.gitProtocol {
	case "":
	case "version=1", "version=2":
		env = append(env, "GIT_PROTOCOL="+req.gitProtocol)
	default:
		logger.Printf("ignoring invalid git_protocol %q", req.gitProtocol)
	}
	cmd.Env = env
	return cmd, nil
}

// exitCode returns git's exit code, or -1 when it did not exit normally.
func exitCode(err error) (int, bool) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), true
	}
	return -1, false
}

// limitedBuffer keeps the first 8 KiB of git's stderr for error messages.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 8192 - l.buf.Len(); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		l.buf.Write(p[:room])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// uploadPackWithSidechannel: unary call; git's stdin/stdout/stderr travel on a sidechannel.
func (s *server) uploadPackWithSidechannel(ss grpc.ServerStream, tag string) error {
	ctx := ss.Context()
	var in rawMessage
	if err := ss.RecvMsg(&in); err != nil {
		return err
	}
	if err := s.authorize(ctx); err != nil {
		return err
	}
	req, err := decodeUploadPackWithSidechannelRequest(in.data)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "decoding request: %v", err)
	}
	dir, err := s.repoPath(req.repository)
	if err != nil {
		return err
	}
	cmd, err := s.gitCommand(ctx, "upload-pack", dir, req)
	if err != nil {
		return err
	}

	// The session comes from the connection the call arrived on.
	md, _ := metadata.FromIncomingContext(ctx)
	id, err := sidechannelID(md.Get("gitaly-sidechannel-id"))
	if err != nil {
		return status.Errorf(codes.Internal, "opennig sidechannel: %v", err)
	}
	p, _ := peer.FromContext(ctx)
	mux, ok := p.Addr.(*muxAddr)
	if !ok {
		return status.Error(codes.Internal,
			"opennig sidechannel: sidechannel: fail to extract mux session: non-multiplexed connection")
	}
	logger.Printf("%s: repo %s, git_protocol %q, sidechannel id %d", tag, dir, req.gitProtocol, id)
	announced := id
	if s.wrongID {
		announced = id + 1<<32
		logger.Printf("%s: -wrong-sidechannel-id: announcing id %d instead of %d", tag, announced, id)
	}
	conn, err := openSidechannel(ctx, mux.session, announced, tag)
	if err != nil {
		return status.Errorf(codes.Internal, "opennig sidechannel: %v", err)
	}
	defer conn.Close()

	sw := &sidebandWriter{w: conn}
	stderr := &limitedBuffer{}
	cmd.Stdout = &bandWriter{sw: sw, band: bandStdout}
	cmd.Stderr = io.MultiWriter(&bandWriter{sw: sw, band: bandStderr}, stderr)
	// A pipe, not cmd.Stdin = reader: exec would otherwise wait for the client's stdin to end
	// before Wait returns, and the client only ends it after our response.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "stdin pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.Internal, "running upload-pack: start: %v", err)
	}
	go func() {
		n, err := io.Copy(stdin, &pktReader{r: conn})
		if err != nil {
			// Normal for protocol v0: the client hangs up once it has the pack, without a flush.
			logger.Printf("%s: sidechannel %d: client stdin ended without flush after %d bytes: %v", tag, id, n, err)
		} else {
			logger.Printf("%s: sidechannel %d: client stdin flushed after %d bytes", tag, id, n)
		}
		stdin.Close()
	}()
	waitErr := cmd.Wait()
	// FIN: the client's response reader sees EOF.
	closeErr := conn.Close()
	if waitErr != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		code, _ := exitCode(waitErr)
		if code == 128 && stderr.String() == hungUpStderr {
			return status.Error(codes.Canceled, "running upload-pack: user canceled the request")
		}
		return status.Errorf(codes.Internal, "running upload-pack: cmd wait: %v, stderr: %q", waitErr, stderr.String())
	}
	if closeErr != nil {
		return status.Errorf(codes.Internal, "close sidechannel: %v", closeErr)
	}
	// Empty SSHUploadPackWithSidechannelResponse (no negotiation statistics).
	return ss.SendMsg(&rawMessage{})
}

// bidi runs receive-pack or upload-archive for a bidi streaming call.
func (s *server) bidi(ss grpc.ServerStream, tag, sub string) error {
	ctx := ss.Context()
	var in rawMessage
	if err := ss.RecvMsg(&in); err != nil {
		if err == io.EOF {
			return status.Error(codes.InvalidArgument, "empty request")
		}
		return err
	}
	if err := s.authorize(ctx); err != nil {
		return err
	}
	req, err := decodeReceivePackRequest(in.data)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "decoding request: %v", err)
	}
	if sub == "receive-pack" {
		if req.glID == "" {
			return status.Error(codes.InvalidArgument, "empty GlId")
		}
		if req.hasStdin {
			return status.Error(codes.InvalidArgument, "non-empty data in first request")
		}
	} else {
		// SSHUploadArchiveRequest has no git_protocol / config fields.
		req.gitProtocol, req.gitConfigOptions = "", nil
		if req.hasStdin {
			return status.Error(codes.InvalidArgument, "non-empty stdin in first request")
		}
	}
	dir, err := s.repoPath(req.repository)
	if err != nil {
		return err
	}
	cmd, err := s.gitCommand(ctx, sub, dir, req)
	if err != nil {
		return err
	}
	logger.Printf("%s: repo %s, git_protocol %q, gl_id %q, gl_repository %q, gl_username %q",
		tag, dir, req.gitProtocol, req.glID, req.glRepository, req.glUsername)

	// grpc-go allows one SendMsg at a time.
	var sendMu sync.Mutex
	send := func(msg []byte) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return ss.SendMsg(&rawMessage{data: msg})
	}
	stderr := &limitedBuffer{}
	cmd.Stdout = &responseWriter{send: send, wrap: stdoutResponse}
	cmd.Stderr = io.MultiWriter(&responseWriter{send: send, wrap: stderrResponse}, stderr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "stdin pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.Internal, "start cmd: %v", err)
	}
	go func() {
		defer stdin.Close()
		for {
			var m rawMessage
			if err := ss.RecvMsg(&m); err != nil {
				if err != io.EOF {
					logger.Printf("%s: reading requests: %v", tag, err)
				}
				return
			}
			r, err := decodeReceivePackRequest(m.data)
			if err != nil {
				logger.Printf("%s: bad request message: %v", tag, err)
				return
			}
			if _, err := stdin.Write(r.stdin); err != nil {
				return
			}
		}
	}()
	waitErr := cmd.Wait()
	if waitErr == nil {
		if sub == "upload-archive" {
			return send(exitStatusResponse(0))
		}
		return nil
	}
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	code, ok := exitCode(waitErr)
	if !ok {
		return status.Errorf(codes.Internal, "running %s: %v", sub, waitErr)
	}
	// The exit status goes to the client first, then the call fails.
	if err := send(exitStatusResponse(int32(code))); err != nil {
		logger.Printf("%s: sending exit status: %v", tag, err)
	}
	if sub == "receive-pack" {
		if code == 128 && stderr.String() == hungUpStderr {
			return status.Error(codes.Canceled, "user canceled the push")
		}
		return status.Errorf(codes.Internal, "cmd wait: %v, stderr: %q", waitErr, stderr.String())
	}
	return status.Errorf(codes.Internal, "running upload-archive: %v, stderr: %q", waitErr, stderr.String())
}

// responseWriter turns git output into response messages of at most 128 KiB.
type responseWriter struct {
	send func([]byte) error
	wrap func([]byte) []byte
}

func (w *responseWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := p
		if len(chunk) > maxResponseChunk {
			chunk = chunk[:maxResponseChunk]
		}
		if err := w.send(w.wrap(chunk)); err != nil {
			return written, fmt.Errorf("send: %w", err)
		}
		written += len(chunk)
		p = p[len(chunk):]
	}
	return written, nil
}
