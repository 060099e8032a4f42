package main

// Server side of a Gitaly sidechannel: a yamux stream the server opens back to the client
// during a SSHUploadPackWithSidechannel call.
//
//   server → client: "sidechannel" (11 bytes), then the call id as 8 bytes big-endian (two writes)
//   client → server: "ok" (2 bytes), within 5 seconds
//   client → server: git's stdin as pkt-lines without band byte, ended by a flush "0000"
//   server → client: git's stdout/stderr as "<4 hex len><band 1|2><data>", then FIN

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
)

const (
	sidechannelMagic   = "sidechannel"
	sidechannelTimeout = 5 * time.Second
	// Largest sideband packet: 4 hex digits + band byte + data.
	maxPacket       = 65520
	maxSidebandData = maxPacket - 5
	bandStdout      = 1
	bandStderr      = 2
)

// openSidechannel opens a stream on the client's yamux session and performs the handshake.
func openSidechannel(ctx context.Context, sess *yamux.Session, id int64, tag string) (*yamux.Stream, error) {
	type opened struct {
		st  *yamux.Stream
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		// With AcceptBacklog 1 this blocks while another stream we opened is not yet ACKed.
		st, err := sess.OpenStream()
		ch <- opened{st, err}
	}()
	var st *yamux.Stream
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, fmt.Errorf("sidechannel: open stream: %v", o.err)
		}
		st = o.st
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.st != nil {
				o.st.Close()
			}
		}()
		return nil, fmt.Errorf("sidechannel: open stream: %v", ctx.Err())
	}
	logger.Printf("%s: sidechannel %d: opened yamux stream %d", tag, id, st.StreamID())
	_ = st.SetDeadline(time.Now().Add(sidechannelTimeout))
	if _, err := st.Write([]byte(sidechannelMagic)); err != nil {
		st.Close()
		return nil, fmt.Errorf("sidechannel: write magic bytes: %v", err)
	}
	var idBytes [8]byte
	binary.BigEndian.PutUint64(idBytes[:], uint64(id))
	if _, err := st.Write(idBytes[:]); err != nil {
		st.Close()
		return nil, fmt.Errorf("sidechannel: write stream id: %v", err)
	}
	ok := make([]byte, 2)
	if _, err := io.ReadFull(st, ok); err != nil {
		st.Close()
		return nil, fmt.Errorf("sidechannel: receive confirmation: %v", err)
	}
	if string(ok) != "ok" {
		st.Close()
		return nil, fmt.Errorf("sidechannel: expected ok, got %q", ok)
	}
	_ = st.SetDeadline(time.Time{})
	logger.Printf("%s: sidechannel %d: client confirmed with \"ok\"", tag, id)
	return st, nil
}

// sidechannelID returns the last gitaly-sidechannel-id value; an unparsable one gives 0, as in Gitaly.
func sidechannelID(values []string) (int64, error) {
	if len(values) == 0 {
		return 0, errors.New("sidechannel: sidechannel-id not found in incoming metadata")
	}
	id, _ := strconv.ParseInt(values[len(values)-1], 10, 64)
	return id, nil
}

// pktReader yields the payloads of the client's pkt-lines and io.EOF at the flush packet.
// Bytes after the flush are never read. EOF before a flush is io.ErrUnexpectedEOF.
type pktReader struct {
	r       io.Reader
	pending int // payload bytes of the current packet still to be read
	done    bool
}

func (p *pktReader) Read(b []byte) (int, error) {
	if p.done {
		return 0, io.EOF
	}
	for p.pending == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(p.r, hdr[:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("sidechannel: reading pkt-line header: %w", err)
		}
		n, err := strconv.ParseUint(string(hdr[:]), 16, 16)
		if err != nil {
			return 0, fmt.Errorf("sidechannel: invalid pkt-line header %q", hdr[:])
		}
		switch {
		case n == 0:
			p.done = true
			return 0, io.EOF
		case n < 4:
			return 0, fmt.Errorf("sidechannel: invalid header %d", n)
		}
		p.pending = int(n) - 4
	}
	if len(b) > p.pending {
		b = b[:p.pending]
	}
	n, err := p.r.Read(b)
	p.pending -= n
	if err == io.EOF {
		err = fmt.Errorf("sidechannel: reading pkt-line payload: %w", io.ErrUnexpectedEOF)
	}
	return n, err
}

// sidebandWriter writes sideband packets; the mutex keeps packets of the two bands whole.
type sidebandWriter struct {
	mu sync.Mutex
	w  io.Writer
}

type bandWriter struct {
	sw   *sidebandWriter
	band byte
}

func (b *bandWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := p
		if len(chunk) > maxSidebandData {
			chunk = chunk[:maxSidebandData]
		}
		pkt := make([]byte, 0, len(chunk)+5)
		pkt = append(pkt, fmt.Sprintf("%04x", len(chunk)+5)...)
		pkt = append(pkt, b.band)
		pkt = append(pkt, chunk...)
		b.sw.mu.Lock()
		_, err := b.sw.w.Write(pkt)
		b.sw.mu.Unlock()
		if err != nil {
			return written, err
		}
		written += len(chunk)
		p = p[len(chunk):]
	}
	return written, nil
}
