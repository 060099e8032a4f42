package main

// gitaly.SmartHTTPService handlers (smarthttp.proto), written from the wire facts in
// smart-http.md §4: info/refs (server stream), upload-pack over a sidechannel (unary) and
// receive-pack (bidi). Messages travel as raw bytes (rawCodec) and are decoded in proto.go.
//
//   InfoRefsRequest:   repository = 1, git_config_options = 2, git_protocol = 3
//   InfoRefsResponse:  data = 1
//   PostUploadPackWithSidechannelRequest: repository = 1, git_config_options = 2, git_protocol = 3
//   PostReceivePackRequest: repository = 1, data = 2, gl_id = 3, gl_repository = 4,
//                           gl_username = 5, git_protocol = 6, git_config_options = 7
//   PostReceivePackResponse: data = 1

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

const smartHTTPService = "gitaly.SmartHTTPService"

// dataResponse is InfoRefsResponse / PostReceivePackResponse: data = 1.
func dataResponse(p []byte) []byte { return appendBytesField(nil, 1, p) }

// handleSmartHTTP dispatches the four SmartHTTPService methods.
func (s *server) handleSmartHTTP(ss grpc.ServerStream, tag, service, method string) error {
	if err := s.limitErrorFor(method); err != nil {
		return err
	}
	switch method {
	case "InfoRefsUploadPack":
		return s.infoRefs(ss, tag, "upload-pack")
	case "InfoRefsReceivePack":
		return s.infoRefs(ss, tag, "receive-pack")
	case "PostUploadPackWithSidechannel":
		return s.postUploadPackWithSidechannel(ss, tag)
	case "PostReceivePack":
		return s.postReceivePack(ss, tag)
	}
	// PostUploadPack (removed in Gitaly 15.9) and anything else.
	return status.Errorf(codes.Unimplemented, "unknown method %v for service %v", method, service)
}

// infoRefs writes the `# service=git-<svc>\n` pkt-line and a flush, then streams
// `git <svc> --stateless-rpc --advertise-refs <repo>` as data messages.
func (s *server) infoRefs(ss grpc.ServerStream, tag, svc string) error {
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
	cmd, err := s.gitCommandArgs(ctx, req, svc, "--stateless-rpc", "--advertise-refs", dir)
	if err != nil {
		return err
	}
	logger.Printf("%s: repo %s, git_protocol %q, config %q", tag, dir, req.gitProtocol, req.gitConfigOptions)
	line := fmt.Sprintf("# service=git-%s\n", svc)
	header := fmt.Sprintf("%04x%s0000", len(line)+4, line)
	if err := ss.SendMsg(&rawMessage{data: dataResponse([]byte(header))}); err != nil {
		return err
	}
	stderr := &limitedBuffer{}
	send := func(msg []byte) error { return ss.SendMsg(&rawMessage{data: msg}) }
	cmd.Stdout = &responseWriter{send: send, wrap: dataResponse}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return status.Errorf(codes.Internal, "running %s advertisement: cmd wait: %v, stderr: %q", svc, err, stderr.String())
	}
	return nil
}

// postUploadPackWithSidechannel: unary; the request body arrives framed on a sidechannel and
// git's stdout goes back on it raw (no sideband: that is the HTTP client's business).
func (s *server) postUploadPackWithSidechannel(ss grpc.ServerStream, tag string) error {
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
	cmd, err := s.gitCommandArgs(ctx, req, "upload-pack", "--stateless-rpc", dir)
	if err != nil {
		return err
	}
	md, _ := metadata.FromIncomingContext(ctx)
	id, err := sidechannelID(md.Get("gitaly-sidechannel-id"))
	if err != nil {
		return status.Errorf(codes.Internal, "open sidechannel: %v", err)
	}
	p, _ := peer.FromContext(ctx)
	mux, ok := p.Addr.(*muxAddr)
	if !ok {
		return status.Error(codes.Internal,
			"open sidechannel: sidechannel: fail to extract yamux session: non-multiplexed connection")
	}
	logger.Printf("%s: repo %s, git_protocol %q, config %q, sidechannel id %d",
		tag, dir, req.gitProtocol, req.gitConfigOptions, id)
	conn, err := openSidechannel(ctx, mux.session, id, tag)
	if err != nil {
		return status.Errorf(codes.Internal, "open sidechannel: %v", err)
	}
	defer conn.Close()
	return s.runHTTPUploadPack(ss, tag, cmd, conn, id)
}

// runHTTPUploadPack runs git with the sidechannel as stdin (de-framed) and stdout (raw).
func (s *server) runHTTPUploadPack(ss grpc.ServerStream, tag string, cmd *exec.Cmd, conn io.ReadWriteCloser, id int64) error {
	stderr := &limitedBuffer{}
	deepen := &deepenScanner{}
	cmd.Stdout = conn
	cmd.Stderr = stderr
	// A pipe, not cmd.Stdin = reader: Wait would otherwise wait for the copy to end.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "stdin pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.Internal, "running upload-pack: start: %v", err)
	}
	go func() {
		n, err := io.Copy(io.MultiWriter(stdin, deepen), &pktReader{r: conn})
		if err != nil {
			logger.Printf("%s: sidechannel %d: request body ended without flush after %d bytes: %v", tag, id, n, err)
		} else {
			logger.Printf("%s: sidechannel %d: request body flushed after %d bytes", tag, id, n)
		}
		stdin.Close()
	}()
	waitErr := cmd.Wait()
	closeErr := conn.Close()
	if waitErr != nil {
		if ss.Context().Err() != nil {
			return status.FromContextError(ss.Context().Err()).Err()
		}
		if !deepen.found() {
			return status.Errorf(codes.Internal, "running upload-pack: cmd wait: %v, stderr: %q", waitErr, stderr.String())
		}
		// A shallow request makes git upload-pack exit non-zero after a complete answer.
		logger.Printf("%s: upload-pack failed after a deepen request; treated as success: %v", tag, waitErr)
	}
	if closeErr != nil {
		return status.Errorf(codes.Internal, "close sidechannel: %v", closeErr)
	}
	// PostUploadPackWithSidechannelResponse without negotiation statistics.
	return ss.SendMsg(&rawMessage{})
}

// deepenScanner remembers whether the request body held "deepen" (across write boundaries).
type deepenScanner struct {
	mu   sync.Mutex
	tail []byte
	seen bool
}

func (d *deepenScanner) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.seen {
		buf := append(append([]byte(nil), d.tail...), p...)
		d.seen = bytes.Contains(buf, []byte("deepen"))
		if len(buf) > 5 {
			buf = buf[len(buf)-5:]
		}
		d.tail = buf
	}
	return len(p), nil
}

func (d *deepenScanner) found() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen
}

// postReceivePack: bidi; the first message carries repository and gl_* fields and no data, later
// ones the request body. git's stdout goes back as data messages; stderr is only logged.
func (s *server) postReceivePack(ss grpc.ServerStream, tag string) error {
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
	if req.glID == "" {
		return status.Error(codes.InvalidArgument, "empty GlId")
	}
	if req.hasStdin {
		return status.Error(codes.InvalidArgument, "non-empty Data")
	}
	dir, err := s.repoPath(req.repository)
	if err != nil {
		return err
	}
	cmd, err := s.gitCommandArgs(ctx, req, "receive-pack", "--stateless-rpc", dir)
	if err != nil {
		return err
	}
	logger.Printf("%s: repo %s, git_protocol %q, gl_id %q, gl_repository %q, gl_username %q, config %q",
		tag, dir, req.gitProtocol, req.glID, req.glRepository, req.glUsername, req.gitConfigOptions)
	stderr := &limitedBuffer{}
	send := func(msg []byte) error { return ss.SendMsg(&rawMessage{data: msg}) }
	cmd.Stdout = &responseWriter{send: send, wrap: dataResponse}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "stdin pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.Internal, "start cmd: %v", err)
	}
	go pumpRequestData(ss, stdin, tag)
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return status.Errorf(codes.Internal, "running receive-pack: cmd wait: %v, stderr: %q", err, stderr.String())
	}
	return nil
}

// pumpRequestData copies the data field (2) of every later request message into git's stdin.
func pumpRequestData(ss grpc.ServerStream, stdin io.WriteCloser, tag string) {
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
}
